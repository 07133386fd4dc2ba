package limit

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBufferPieces writes past a first growth into several chunks: the
// joined result, the tail across pieces and the limit all hold.
func TestBufferPieces(t *testing.T) {
	want := make([]byte, 3*minChunk+100)
	for i := range want {
		want[i] = byte(i * 7)
	}
	b := NewBuffer([]byte("dst"), len(want), 1000)
	for src := want; len(src) > 0; {
		k := copy(b.Next(1), src)
		require.NoError(t, b.Commit(k))
		src = src[k:]
	}
	require.Greater(t, len(b.chunks), 1, "the output should span pieces")
	n := len(b.chunks[len(b.chunks)-1]) + 10 // reaches into the chunk before
	require.Equal(t, want[len(want)-n:], b.Last(n, make([]byte, n)))
	require.Equal(t, 0, b.Left())
	require.Equal(t, append([]byte("dst"), want...), b.Bytes())

	over := NewBuffer(nil, 10, 0)
	require.ErrorIs(t, over.Fill(bytes.NewReader(make([]byte, 11))), ErrTooLarge)
	require.Len(t, over.Next(1), 0, "no room past the limit")
}
