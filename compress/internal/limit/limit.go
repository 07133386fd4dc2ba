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
// that encoders appending chunk by chunk stay linear; decoders, whose
// output size is untrusted, use a Buffer instead.
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
// actually produced (see Buffer), the first growth sized by hint, so a
// compressed bomb costs about max bytes before it is refused. On error the
// result holds dst and possibly part of the output.
func ReadAll(dst []byte, r io.Reader, max, hint int) ([]byte, error) {
	b := NewBuffer(dst, max, hint)
	if err := b.Fill(r); err != nil {
		return b.head, err
	}
	return b.Bytes(), nil
}
