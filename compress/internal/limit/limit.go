// Package limit holds what the codecs share to decode untrusted input
// within a size limit.
package limit

import (
	"errors"
	"io"
)

// ErrTooLarge is returned when decompressed data passes the caller's limit.
var ErrTooLarge = errors.New("compress: decompressed size exceeds the limit")

// Default is the limit used when the caller gives none (max <= 0).
const Default = 256 << 20

// Max returns the effective limit for max.
func Max(max int) int {
	if max <= 0 {
		return Default
	}
	return max
}

// Grow returns dst with room for at least n more bytes. Growth doubles, so
// appending chunk by chunk stays linear.
func Grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	c := 2 * cap(dst)
	if c < len(dst)+n {
		c = len(dst) + n
	}
	out := make([]byte, len(dst), c)
	copy(out, dst)
	return out
}

// ReadAll appends what r yields until io.EOF to dst, failing with
// ErrTooLarge once more than max bytes arrived. Memory grows with the data
// actually produced, starting from hint bytes, so a compressed bomb costs at
// most about max bytes before it is refused.
func ReadAll(dst []byte, r io.Reader, max, hint int) ([]byte, error) {
	start := len(dst)
	if hint < 512 {
		hint = 512
	}
	for {
		room := cap(dst) - len(dst)
		if room == 0 {
			// Allow one byte past max so that exceeding it is detected.
			want := len(dst) - start
			if want < hint {
				want = hint
			}
			if left := max + 1 - (len(dst) - start); want > left {
				want = left
			}
			if want <= 0 {
				return dst, ErrTooLarge
			}
			dst = Grow(dst, want)
			room = cap(dst) - len(dst)
		}
		if left := max + 1 - (len(dst) - start); room > left {
			room = left
		}
		n, err := r.Read(dst[len(dst) : len(dst)+room])
		dst = dst[:len(dst)+n]
		if len(dst)-start > max {
			return dst, ErrTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
