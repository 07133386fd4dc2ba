package kafka

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The exported reasons keep the strings Stats().Routing always used as
// map keys: dashboards keyed by them must not break.
func TestRerouteReasonValues(t *testing.T) {
	want := map[RerouteReason]string{
		ReroutePreferredReplica: "preferred replica",
		RerouteTTL:              "preference expired",
		RerouteFollowerFailed:   "follower failed",
		RerouteFollowerGone:     "follower left the ISR",
		RerouteUnknownReplica:   "preferred replica not in metadata or ISR",
		RerouteLeaderChanged:    "leader changed",
		RerouteLeaderPreferred:  "leader named no preference",
		RerouteCoolingDown:      "preferred replica cooling down",
		RerouteFlapDamped:       "replica switch budget used up",
		RerouteLeaderError:      "leader failed",
		RerouteStaleClient:      "client metadata stale",
	}
	require.Len(t, RerouteReasons(), len(want))
	for _, r := range RerouteReasons() {
		assert.Equal(t, want[r], string(r))
	}
}

// A rack-b Reader: the cumulative counters show the move to the rack-b
// follower and its bytes, and reading Stats (which resets its own
// counters) leaves them as they were.
func TestReaderRoutingStatsCumulative(t *testing.T) {
	c := rtRackCluster(t, true)
	for i := 0; i < 5; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	r := rtRackReader(t, c, &rtLogger{})
	rtExpect(t, r, 0, 20)

	before := r.RoutingStats()
	st := r.Stats()
	require.Len(t, st.Routing, 1)
	_ = r.Stats() // a second reader of the resetting stats
	after := r.RoutingStats()
	assert.Equal(t, before, after, "Stats() must not reset RoutingStats")
	assert.Equal(t, st.Routing[0].SameRackBytes, after.SameRackBytes, "same-rack bytes agree with Stats().Routing")

	assert.Equal(t, "b", after.Rack)
	assert.Equal(t, int64(1), after.Reroutes[ReroutePreferredReplica])
	assert.Equal(t, after.Bytes, after.SameRackBytes+after.CrossRackBytes)
	assert.Greater(t, after.SameRackRatio(), 0.5)
	assert.Equal(t, after.SameRackBytes, after.RackBytes["b"])
	assert.Equal(t, after.RackShare("b"), after.SameRackRatio())

	var b2 *BrokerRoutingStats
	for i := range after.Brokers {
		if after.Brokers[i].ID == 2 {
			b2 = &after.Brokers[i]
		}
	}
	require.NotNil(t, b2, "broker 2 in %+v", after.Brokers)
	assert.Equal(t, "b", b2.Rack)
	assert.Equal(t, after.SameRackBytes, b2.Bytes)

	require.Len(t, after.Partitions, 1)
	p := after.Partitions[0]
	assert.Equal(t, "t", p.Topic)
	assert.Equal(t, 2, p.Broker)
	assert.Equal(t, "b", p.BrokerRack)
	assert.Equal(t, 1, p.Leader)
	assert.Equal(t, int64(1), p.Reroutes[ReroutePreferredReplica])
	assert.Equal(t, int64(20), p.HighWatermark)
	assert.Equal(t, int64(20), p.Offset)
	assert.Equal(t, int64(0), p.Lag)

	// More records: the counters only grow.
	rtAppend(c, 0, 20, 4)
	rtExpect(t, r, 20, 4)
	more := r.RoutingStats()
	assert.Greater(t, more.SameRackBytes, after.SameRackBytes)
	assert.Equal(t, int64(24), more.Partitions[0].HighWatermark)
}

// Without a Rack every byte is cross-rack (as in Stats), yet the bytes by
// the broker's rack show where they came from: the baseline before turning
// Rack on.
func TestReaderRoutingStatsWithoutRack(t *testing.T) {
	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 8)
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.MaxBytes = 1 })
	rtExpect(t, r, 0, 8)

	s := r.RoutingStats()
	assert.Equal(t, "", s.Rack)
	require.Positive(t, s.Bytes)
	assert.Zero(t, s.SameRackBytes)
	assert.Equal(t, s.Bytes, s.CrossRackBytes)
	assert.Equal(t, s.Bytes, s.RackBytes["a"], "the leader is in rack a")
	assert.Equal(t, 1.0, s.RackShare("a"))
	assert.Zero(t, s.RackShare("b"))
	assert.Empty(t, s.Reroutes)
	require.Len(t, s.Brokers, 1)
	assert.Equal(t, BrokerRoutingStats{ID: 1, Rack: "a", Bytes: s.Bytes}, s.Brokers[0])

	st := r.Stats()
	require.Len(t, st.Routing, 1)
	assert.Zero(t, st.Routing[0].SameRackBytes)
	assert.Equal(t, s.Bytes, st.Routing[0].OtherRackBytes)
}
