package protocol

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadFrameDeclaredSizeNotTrusted reads a frame declaring 1 GiB of
// which 10 bytes arrive: the buffer grows with the bytes received, not with
// the declaration (which allocated the whole GiB), and the error says how
// much of the frame came.
func TestReadFrameDeclaredSizeNotTrusted(t *testing.T) {
	frame := append(binary.BigEndian.AppendUint32(nil, 1<<30), "ten bytes!"...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := ReadFrame(bytes.NewReader(frame), nil, math.MaxInt32)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20))
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.EqualError(t, err, "kafka protocol: frame of 1073741824 bytes cut short after 10: unexpected EOF")
	require.Nil(t, got)
}

// TestReadFrameGrowsAsBytesArrive reads frames around the growth steps,
// with and without a buffer of the caller's, through a reader that hands
// out a few bytes at a time.
func TestReadFrameGrowsAsBytesArrive(t *testing.T) {
	for _, n := range []int{0, 1, frameFirstRead, frameFirstRead + 1, 5*frameFirstRead + 3} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(i * 31)
		}
		frame := append(binary.BigEndian.AppendUint32(nil, uint32(n)), body...)
		for _, buf := range [][]byte{nil, make([]byte, 0, n+10)} {
			got, err := ReadFrame(io.LimitReader(&trickle{r: bytes.NewReader(frame)}, int64(len(frame))), buf, MaxResponseSize)
			require.NoError(t, err, "n=%d", n)
			require.True(t, bytes.Equal(body, got), "n=%d: the body read back", n)
			if buf != nil && n > 0 {
				require.Same(t, &buf[:1][0], &got[:1][0], "n=%d: the caller's buffer is used", n)
			}
		}
	}
}

// trickle reads at most 4099 bytes at a time, as a socket may.
type trickle struct{ r io.Reader }

func (t *trickle) Read(p []byte) (int, error) {
	if len(p) > 4099 {
		p = p[:4099]
	}
	return t.r.Read(p)
}

// TestReadFrameExpecting reads a frame of the size the caller expects in
// one allocation of that size, and a larger one by growing from there.
func TestReadFrameExpecting(t *testing.T) {
	const expect = 3 * frameFirstRead
	for _, n := range []int{expect, expect + 1} {
		body := bytes.Repeat([]byte{7}, n)
		frame := append(binary.BigEndian.AppendUint32(nil, uint32(n)), body...)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := ReadFrameExpecting(bytes.NewReader(frame), nil, MaxResponseSize, expect)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		require.True(t, bytes.Equal(body, got))
		if n == expect {
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(expect+64<<10), "one allocation")
		}
	}
}
