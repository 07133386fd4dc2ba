package protocol

import (
	"encoding/binary"
	"fmt"
	"io"
)

// A frame's size prefix is untrusted: a peer may declare 256 MiB and send
// nothing more. ReadFrame therefore allocates at most frameFirstRead bytes
// (or what the caller expects, see ReadFrameExpecting) before the body
// starts arriving, and grows the buffer frameGrowth-fold only once what it
// has is full, so memory stays within frameGrowth times the bytes actually
// received (plus the first step). The copies this costs a frame larger
// than expected come to a third of its size at most.
const (
	frameFirstRead = 1 << 20
	frameGrowth    = 4
)

// ReadFrame reads one size-prefixed frame from r and returns its body, in
// buf when its capacity is enough, in a buffer grown as the body arrives
// (up to max bytes) otherwise.
func ReadFrame(r io.Reader, buf []byte, max int32) ([]byte, error) {
	return ReadFrameExpecting(r, buf, max, 0)
}

// ReadFrameExpecting is ReadFrame for a frame the caller expects to take
// up to expect bytes, a size of its own choosing (the MaxBytes of a fetch
// it sent): that much is allocated up front, so that a frame of the
// expected size is read without growing.
func ReadFrameExpecting(r io.Reader, buf []byte, max int32, expect int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(size[:])))
	if n < 0 || n > int(max) {
		return nil, fmt.Errorf("kafka protocol: frame size %d outside 0..%d", n, max)
	}
	if cap(buf) < n {
		first := frameFirstRead
		if expect > first {
			first = expect
		}
		buf = makeUnzeroed(min(n, first))
	}
	buf = buf[:cap(buf)]
	got := 0
	for {
		want := min(n, len(buf))
		k, err := io.ReadFull(r, buf[got:want])
		got += k
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("kafka protocol: frame of %d bytes cut short after %d: %w", n, got, err)
		}
		if got == n {
			return buf[:n], nil
		}
		grown := makeUnzeroed(min(n, frameGrowth*len(buf)))
		copy(grown, buf[:got])
		buf = grown
	}
}
