package protocol

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMakeUnzeroed(t *testing.T) {
	for _, n := range []int{0, 1, unzeroedMin - 1, unzeroedMin, unzeroedMin + 1, 3 << 20} {
		a, b := makeUnzeroed(n), makeUnzeroed(n)
		require.Len(t, a, n)
		require.Len(t, b, n)
		// Each call owns its bytes: writing one leaves the other as written.
		for i := range a {
			a[i] = byte(i)
			b[i] = ^byte(i)
		}
		for i := range a {
			if a[i] != byte(i) || b[i] != ^byte(i) {
				t.Fatalf("n=%d: byte %d is %d/%d after writing %d/%d", n, i, a[i], b[i], byte(i), ^byte(i))
			}
		}
	}
}

func TestReadFrameLargeFrame(t *testing.T) {
	body := bytes.Repeat([]byte("frame body "), (unzeroedMin*3)/11)
	frame := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	got, err := ReadFrame(bytes.NewReader(frame), nil, MaxResponseSize)
	require.NoError(t, err)
	require.Equal(t, body, got)

	// A frame cut short is an error, and nothing of the buffer is returned.
	got, err = ReadFrame(bytes.NewReader(frame[:len(frame)/2]), nil, MaxResponseSize)
	require.Error(t, err)
	require.Nil(t, got)
}

// BenchmarkMakeFrameBuffer compares a 16 MiB response buffer from make,
// which clears reused memory, with makeUnzeroed.
func BenchmarkMakeFrameBuffer(b *testing.B) {
	const n = 16 << 20
	var sink []byte
	b.Run("make", func(b *testing.B) {
		b.SetBytes(n)
		for i := 0; i < b.N; i++ {
			sink = make([]byte, n)
		}
	})
	b.Run("unzeroed", func(b *testing.B) {
		b.SetBytes(n)
		for i := 0; i < b.N; i++ {
			sink = makeUnzeroed(n)
		}
	})
	_ = sink
}
