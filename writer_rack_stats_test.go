package kafka

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// The bytes a Writer produced, by the rack of the partitions' leaders
// (WriterTotals.SameRackBytes, OtherRackBytes and RackBytes,
// WriterStats.SameRackBytes and OtherRackBytes), on the fake cluster of
// writer_rack_test.go: brokers 1, 2 and 3 in racks a, b and c, leading
// partitions 0 and 3, 1 and 4, 2 and 5.

// wrReceived returns the bytes of the record batches broker id received in
// produce requests.
func wrReceived(c *fakebroker.Cluster, id int32) int64 {
	var n int64
	for _, req := range wtProduced(c.Broker(id)) {
		for _, rt := range req.Topics {
			for _, rp := range rt.Partitions {
				n += int64(len(rp.Records))
			}
		}
	}
	return n
}

// firstPartition places every message on the first partition it is
// offered: partition 0 (led in rack a) for keyed messages, the first
// partition led in the Writer's Rack for keyless ones.
var firstPartition = BalancerFunc(func(_ Message, ps ...int) int { return ps[0] })

// A rack-b Writer writing keyless messages writes them all to rack b: all
// its bytes are same-rack ones, the encoded batches broker 2 received.
func TestWriterRackStatsKeylessSameRack(t *testing.T) {
	c := wrCluster(t)
	w := wtWriter(t, c)
	w.Rack = "b"
	require.NoError(t, w.WriteMessages(wtContext(t), wrKeyless(60)...))

	tot := w.Totals()
	assert.Positive(t, tot.SameRackBytes)
	assert.Zero(t, tot.OtherRackBytes)
	assert.Equal(t, map[string]int64{"b": tot.SameRackBytes}, tot.RackBytes)
	assert.Equal(t, wrReceived(c, 2), tot.SameRackBytes, "the encoded batches broker 2 received")
	assert.NotEqual(t, tot.Bytes, tot.SameRackBytes, "encoded batch bytes, not the messages' Bytes")

	s := w.Stats()
	assert.Equal(t, [2]int64{tot.SameRackBytes, 0}, [2]int64{s.SameRackBytes, s.OtherRackBytes})
	s = w.Stats()
	assert.Equal(t, [2]int64{0, 0}, [2]int64{s.SameRackBytes, s.OtherRackBytes}, "Stats resets its window")
	assert.Equal(t, tot, w.Totals(), "Stats resets no total")

	tot.RackBytes["b"] = 0
	assert.Equal(t, tot.SameRackBytes, w.Totals().RackBytes["b"], "each call returns a map of its own")
}

// A keyed message keeps its partition, led in rack a: its bytes are
// other-rack ones, under "a".
func TestWriterRackStatsKeyedOtherRack(t *testing.T) {
	c := wrCluster(t)
	w := wtWriter(t, c)
	w.Rack, w.Balancer = "b", firstPartition
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, wtMessages("k", 5)...))
	require.Len(t, c.Records(wtTopic, 0), 5, "the keyed messages went to partition 0")

	tot := w.Totals()
	assert.Zero(t, tot.SameRackBytes)
	assert.Positive(t, tot.OtherRackBytes)
	assert.Equal(t, map[string]int64{"a": tot.OtherRackBytes}, tot.RackBytes)
	assert.Equal(t, wrReceived(c, 1), tot.OtherRackBytes, "the encoded batches broker 1 received")
	s := w.Stats()
	assert.Equal(t, [2]int64{0, tot.OtherRackBytes}, [2]int64{s.SameRackBytes, s.OtherRackBytes})

	// Keyless messages then go to rack b: both counters, each rack's own.
	require.NoError(t, w.WriteMessages(ctx, wrKeyless(4)...))
	tot = w.Totals()
	assert.Positive(t, tot.SameRackBytes)
	assert.Equal(t, map[string]int64{"a": tot.OtherRackBytes, "b": tot.SameRackBytes}, tot.RackBytes)
	assert.Equal(t, [2]int64{wrReceived(c, 2), wrReceived(c, 1)}, [2]int64{tot.SameRackBytes, tot.OtherRackBytes})
	s = w.Stats()
	assert.Equal(t, [2]int64{tot.SameRackBytes, 0}, [2]int64{s.SameRackBytes, s.OtherRackBytes}, "since the last call")
}

// A leader without a rack is another rack than the Writer's, under "".
func TestWriterRackStatsLeaderWithoutRack(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2, Racks: []string{"", "b"}})
	c.CreateTopic(wtTopic, 2, 2) // leaders 1 (no rack) and 2 (rack b)
	wtProducerIDs(c)
	w := wtWriter(t, c)
	w.Rack, w.Balancer = "b", firstPartition
	require.NoError(t, w.WriteMessages(wtContext(t), Message{Key: []byte("k"), Value: []byte("v")}))
	require.Len(t, c.Records(wtTopic, 0), 1)

	tot := w.Totals()
	assert.Zero(t, tot.SameRackBytes)
	assert.Positive(t, tot.OtherRackBytes)
	assert.Equal(t, map[string]int64{"": tot.OtherRackBytes}, tot.RackBytes)
}

// Without a Rack, the bytes are counted by the leaders' racks only: same
// and other stay 0. A WriterSet sums the racks' bytes of its Writers.
func TestWriterRackStatsWithoutRack(t *testing.T) {
	c := wrCluster(t)
	w := wtWriter(t, c)
	require.NoError(t, w.WriteMessages(wtContext(t), wrKeyless(60)...))
	require.Len(t, wrPartitions(c), 6, "every partition written")

	tot := w.Totals()
	assert.Equal(t, [2]int64{0, 0}, [2]int64{tot.SameRackBytes, tot.OtherRackBytes})
	assert.Equal(t, map[string]int64{"a": wrReceived(c, 1), "b": wrReceived(c, 2), "c": wrReceived(c, 3)}, tot.RackBytes)
	for rack, n := range tot.RackBytes {
		assert.Positive(t, n, "rack %q", rack)
	}
	s := w.Stats()
	assert.Equal(t, [2]int64{0, 0}, [2]int64{s.SameRackBytes, s.OtherRackBytes})

	w2 := wtWriter(t, c)
	w2.Rack = "b"
	require.NoError(t, w2.WriteMessages(wtContext(t), wrKeyless(6)...))
	tot2 := w2.Totals()
	got := NewWriterSet(w, w2).Totals()
	require.Len(t, got, 1, "one client ID and topic")
	assert.Equal(t, map[string]int64{"a": tot.RackBytes["a"], "b": tot.RackBytes["b"] + tot2.SameRackBytes, "c": tot.RackBytes["c"]}, got[0].RackBytes)
	assert.Equal(t, [2]int64{tot2.SameRackBytes, 0}, [2]int64{got[0].SameRackBytes, got[0].OtherRackBytes})
	assert.Equal(t, map[string]int64{"b": tot2.SameRackBytes}, w2.Totals().RackBytes, "the set's sum left the Writer's map alone")
}
