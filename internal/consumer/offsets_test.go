package consumer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Asks for one partition go in separate requests (a request names a
// partition once).
func TestTakeDistinctOffsetAsks(t *testing.T) {
	q := &offsetQueue{asks: []*offsetAsk{
		{OffsetAsk: OffsetAsk{Topic: "t", Partition: 0, Timestamp: -2}},
		{OffsetAsk: OffsetAsk{Topic: "t", Partition: 1}},
		{OffsetAsk: OffsetAsk{Topic: "t", Partition: 0, Timestamp: -1}},
		{OffsetAsk: OffsetAsk{Topic: "u", Partition: 0}},
	}}
	first := takeDistinct(q)
	require.Len(t, first, 3)
	assert.Equal(t, int64(-2), first[0].Timestamp)
	require.Len(t, q.asks, 1)
	assert.Equal(t, int64(-1), q.asks[0].Timestamp, "the second ask for t/0 waits for the next request")
}
