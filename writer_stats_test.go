package kafka

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Totals only grow, whatever Stats takes: a produce refused once and
// retried counts in both, Stats then starts again at 0 and Totals keeps
// counting.
func TestWriterTotalsSurviveStats(t *testing.T) {
	c := wtCluster(t, 1, 1)
	c.Broker(1).ScriptNext(protocol.Produce, fakebroker.Step{ErrorCode: int16(NotLeaderForPartition)})
	w := wtWriter(t, c)
	w.Transport = &Transport{ClientID: "orders-svc"}
	require.NoError(t, w.WriteMessages(wtContext(t), Message{Value: []byte("once")}))

	s := w.Stats()
	assert.Equal(t, [4]int64{2, 2, 1, 1}, [4]int64{s.Writes, s.Messages, s.Errors, s.Retries}, "stats: writes, messages, errors, retries")
	tot := w.Totals()
	assert.Equal(t, WriterTotals{
		ClientID: "orders-svc", Topic: wtTopic,
		Writes: 2, Batches: 2, Messages: 2, Bytes: s.Bytes, Errors: 1, Retries: 1,
		WriteTime: tot.WriteTime, RackBytes: tot.RackBytes,
	}, tot)
	assert.Positive(t, tot.Bytes)
	assert.Len(t, tot.RackBytes, 1, "the leader has no rack: %v", tot.RackBytes)
	assert.Positive(t, tot.RackBytes[""], "the batch written once, the refused attempt not counted")
	assert.Positive(t, tot.WriteTime)

	require.NoError(t, w.WriteMessages(wtContext(t), Message{Value: []byte("twice")}))
	s = w.Stats()
	assert.Equal(t, [3]int64{1, 1, 0}, [3]int64{s.Writes, s.Messages, s.Errors}, "stats since the last call")
	tot2 := w.Totals()
	assert.Equal(t, [5]int64{3, 3, 3, 1, 1}, [5]int64{tot2.Writes, tot2.Batches, tot2.Messages, tot2.Errors, tot2.Retries}, "totals since the start")
	assert.Equal(t, tot.Bytes+s.Bytes, tot2.Bytes)
	assert.Equal(t, tot2, w.Totals(), "reading the totals resets nothing")
}

// A set sums the Writers sharing a client ID and topic, in the order the
// first of each was added; a removed Writer leaves it.
func TestWriterSetTotals(t *testing.T) {
	c := wtCluster(t, 1, 1)
	tr := &Transport{ClientID: "a"}
	w1, w2, w3 := wtWriter(t, c), wtWriter(t, c), wtWriter(t, c)
	w1.Transport, w2.Transport = tr, tr
	w3.Transport = &Transport{ClientID: "b"}
	for _, w := range []*Writer{w1, w2, w2, w3} {
		require.NoError(t, w.WriteMessages(wtContext(t), Message{Value: []byte("v")}))
	}
	set := NewWriterSet(w3, w1)
	set.Add(w2)
	got := set.Totals()
	require.Len(t, got, 2)
	assert.Equal(t, [3]any{"b", wtTopic, int64(1)}, [3]any{got[0].ClientID, got[0].Topic, got[0].Messages})
	assert.Equal(t, [3]any{"a", wtTopic, int64(3)}, [3]any{got[1].ClientID, got[1].Topic, got[1].Messages})
	assert.Equal(t, w1.Totals().Bytes+w2.Totals().Bytes, got[1].Bytes)

	set.Remove(w3)
	got = set.Totals()
	require.Len(t, got, 1)
	assert.Equal(t, "a", got[0].ClientID)
}
