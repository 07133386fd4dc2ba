package protocol

import (
	"testing"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/stretchr/testify/assert"
)

// CutBatch names the batch the data ended inside, first or not, with what
// its length field says and what arrived: the caller tells a cut at max
// bytes from a malformed batch by comparing them with the fetch's limits.
func TestRecordReaderCutBatch(t *testing.T) {
	first := recBatch(t, 0, compress.None, recSeq(0, 3), nil)
	second := recBatch(t, 3, compress.Gzip, recSeq(3, 3), nil)
	data := append(append([]byte{}, first...), second...)

	_, r, err := recReadAll(data, RecordReadOptions{})
	assert.NoError(t, err)
	_, cut := r.CutBatch()
	assert.False(t, cut, "whole batches")

	for n := len(first) + 1; n < len(data); n++ {
		_, r, err := recReadAll(data[:n], RecordReadOptions{})
		assert.NoError(t, err)
		c, ok := r.CutBatch()
		assert.True(t, ok, "cut %d", n)
		want := Cut{Offset: 3, Size: len(second), Present: n - len(first)}
		if n-len(first) < 8 {
			want.Offset = -1
		}
		if n-len(first) < 12 {
			want.Size = 0
		}
		assert.Equal(t, want, c, "cut %d", n)
	}
	_, r, _ = recReadAll(first[:40], RecordReadOptions{})
	c, ok := r.CutBatch()
	assert.True(t, ok)
	assert.Equal(t, Cut{Offset: 0, Size: len(first), Present: 40}, c, "the first batch cut")
}
