package kafka

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	// The fetcher records its position after handing the records over.
	rtPositionAt(t, r, 20)

	before := r.RoutingStats()
	st := r.Stats()
	require.Len(t, st.Routing, 1)
	_ = r.Stats() // a second reader of the resetting stats
	after := r.RoutingStats()
	assert.Equal(t, before, after, "Stats() must not reset RoutingStats")
	// The first Stats since the start covers the same span as RoutingStats:
	// one type, the same counters and the same position.
	first := st.Routing[0]
	want := after.Partitions[0]
	assert.Equal(t, want, first, "Stats().Routing and RoutingStats describe the partition alike")
	assert.Equal(t, first.Bytes, first.SameRackBytes+first.CrossRackBytes)
	assert.Equal(t, first.SameRackRatio(), want.SameRackRatio())

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
	rtPositionAt(t, r, 24)
	more := r.RoutingStats()
	assert.Greater(t, more.SameRackBytes, after.SameRackBytes)
	assert.Equal(t, int64(24), more.Partitions[0].HighWatermark)
}

// rtPositionAt waits until r's only partition has recorded offset as its
// next fetch.
func rtPositionAt(t *testing.T, r *Reader, offset int64) {
	t.Helper()
	require.Eventually(t, func() bool {
		ps := r.RoutingStats().Partitions
		return len(ps) == 1 && ps[0].Offset == offset
	}, 10*time.Second, 5*time.Millisecond, "position %d recorded", offset)
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
	assert.Equal(t, s.Bytes, st.Routing[0].CrossRackBytes)
}

// Two Readers of one topic (one per partition, one of them also once
// reading the other's partition) are summed; the partition is described
// by the Reader reading it now.
func TestMergeRoutingStats(t *testing.T) {
	a := RoutingStats{
		Rack: "b", Bytes: 30, SameRackBytes: 20, CrossRackBytes: 10,
		RackBytes: map[string]int64{"a": 10, "b": 20},
		Reroutes:  map[RerouteReason]int64{ReroutePreferredReplica: 1},
		Brokers:   []BrokerRoutingStats{{ID: 2, Rack: "b", Bytes: 20}, {ID: 1, Rack: "a", Bytes: 10}},
		Partitions: []PartitionRoutingStats{
			{Topic: "t", Partition: 0, Broker: 2, BrokerRack: "b", Leader: 1, Bytes: 25, SameRackBytes: 20, CrossRackBytes: 5,
				Reroutes: map[RerouteReason]int64{ReroutePreferredReplica: 1}, Offset: 7, HighWatermark: 9, Lag: 2},
			{Topic: "t", Partition: 1, Broker: -1, Leader: 3, Bytes: 5, CrossRackBytes: 5, Offset: 1, HighWatermark: 1, Lag: 0},
		},
	}
	b := RoutingStats{
		Rack: "b", Bytes: 8, CrossRackBytes: 8,
		RackBytes: map[string]int64{"c": 8},
		Reroutes:  map[RerouteReason]int64{RerouteFollowerFailed: 2},
		Brokers:   []BrokerRoutingStats{{ID: 3, Rack: "c", Bytes: 8}},
		Partitions: []PartitionRoutingStats{
			{Topic: "t", Partition: 1, Broker: 3, BrokerRack: "c", Leader: 3, Bytes: 8, CrossRackBytes: 8,
				Reroutes: map[RerouteReason]int64{RerouteFollowerFailed: 2}, Offset: 40, HighWatermark: 50, Lag: 10},
		},
	}
	m := MergeRoutingStats(a, b)
	assert.Equal(t, "b", m.Rack)
	assert.Equal(t, int64(38), m.Bytes)
	assert.Equal(t, int64(20), m.SameRackBytes)
	assert.Equal(t, int64(18), m.CrossRackBytes)
	assert.Equal(t, map[string]int64{"a": 10, "b": 20, "c": 8}, m.RackBytes)
	assert.Equal(t, map[RerouteReason]int64{ReroutePreferredReplica: 1, RerouteFollowerFailed: 2}, m.Reroutes)
	assert.Equal(t, []BrokerRoutingStats{{ID: 1, Rack: "a", Bytes: 10}, {ID: 2, Rack: "b", Bytes: 20}, {ID: 3, Rack: "c", Bytes: 8}}, m.Brokers)
	require.Len(t, m.Partitions, 2)
	p1 := m.Partitions[1]
	assert.Equal(t, 3, p1.Broker, "the Reader reading partition 1 now describes it")
	assert.Equal(t, int64(10), p1.Lag)
	assert.Equal(t, int64(13), p1.Bytes)
	assert.Equal(t, map[RerouteReason]int64{RerouteFollowerFailed: 2}, p1.Reroutes)
	assert.Nil(t, a.Partitions[1].Reroutes, "the inputs are not changed")
	assert.Equal(t, RoutingStats{RackBytes: map[string]int64{}, Reroutes: map[RerouteReason]int64{}}, MergeRoutingStats())
}

// The high watermark a follower reports trails the leader's: it only ever
// raises the one known, a leader lookup raises it too, and the leader's own
// fetch answer replaces it (it may go down after an unclean election).
func TestRoutingTotalsHighWatermark(t *testing.T) {
	tp := topicPartition{"t", 0}
	var tot routingTotals
	lag := func() (int64, int64) {
		p := tot.snapshot("b").Partitions[0]
		return p.HighWatermark, p.Lag
	}
	tot.position(tp, 8, 10, true)
	hw, l := lag()
	assert.Equal(t, []int64{10, 2}, []int64{hw, l})
	tot.position(tp, 9, 9, false) // a follower behind the leader's last answer
	hw, l = lag()
	assert.Equal(t, []int64{10, 1}, []int64{hw, l})
	tot.leaderHighWatermark(tp, 15) // ReadLag at the leader
	hw, l = lag()
	assert.Equal(t, []int64{15, 6}, []int64{hw, l})
	tot.position(tp, 12, 16, false)
	hw, l = lag()
	assert.Equal(t, []int64{16, 4}, []int64{hw, l})
	tot.leaderHighWatermark(tp, 14) // an older lookup
	hw, _ = lag()
	assert.Equal(t, int64(16), hw)
	tot.position(tp, 12, 13, true) // the leader's word
	hw, l = lag()
	assert.Equal(t, []int64{13, 1}, []int64{hw, l})
}

// ReadLag asks the leader: its answer is the partition's high watermark
// in RoutingStats, even before any fetch (none has started here).
func TestReaderRoutingStatsReadLagSetsHighWatermark(t *testing.T) {
	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 8)
	r := rtRackReader(t, c, &rtLogger{})
	lag, err := r.ReadLag(rtCtx(t))
	require.NoError(t, err)
	assert.Equal(t, int64(8), lag)
	s := r.RoutingStats()
	require.Len(t, s.Partitions, 1)
	p := s.Partitions[0]
	assert.Equal(t, int64(8), p.HighWatermark)
	assert.Equal(t, int64(-1), p.Offset, "nothing fetched yet")
	assert.Equal(t, int64(-1), p.Lag)
	assert.Zero(t, s.Bytes)
}

// The IDs are metric label values and stats keys: dashboards and alerts
// are written against them, so this list only ever grows.
func TestRerouteReasonIDs(t *testing.T) {
	want := map[RerouteReason]string{
		ReroutePreferredReplica:  "preferred_replica",
		RerouteTTL:               "preference_expired",
		RerouteFollowerFailed:    "follower_failed",
		RerouteFollowerGone:      "follower_left_isr",
		RerouteUnknownReplica:    "unknown_replica",
		RerouteLeaderChanged:     "leader_changed",
		RerouteLeaderPreferred:   "leader_no_preference",
		RerouteCoolingDown:       "replica_cooling_down",
		RerouteFlapDamped:        "flap_damped",
		RerouteLeaderError:       "leader_failed",
		RerouteStaleClient:       "stale_metadata",
		RerouteClientChoice:      "client_selected",
		RerouteFollowerLagging:   "follower_lagging",
		RerouteLeaderUnreachable: "leader_unreachable",
		RerouteLeaderReachable:   "leader_reachable",
	}
	require.Len(t, RerouteReasons(), len(want))
	for _, r := range RerouteReasons() {
		assert.Equal(t, want[r], string(r))
	}
}

// Every reason has a unique ID of [a-z_]+ and a unique sentence of its own
// for the logs.
func TestRerouteReasonIDAndSentence(t *testing.T) {
	id := regexp.MustCompile(`^[a-z_]+$`)
	ids, sentences := map[RerouteReason]bool{}, map[string]bool{}
	for _, r := range RerouteReasons() {
		assert.Regexp(t, id, string(r))
		assert.False(t, ids[r], "ID %q used twice", r)
		ids[r] = true
		s := r.Sentence()
		assert.NotEqual(t, string(r), s, "reason %q has no sentence", r)
		assert.NotRegexp(t, id, s, "reason %q: its sentence looks like an ID", r)
		assert.False(t, sentences[s], "sentence %q used twice", s)
		sentences[s] = true
	}
	assert.Len(t, rerouteSentences, len(RerouteReasons()), "a sentence for a reason RerouteReasons does not list")
	assert.Equal(t, "preferred replica not in metadata or ISR", RerouteUnknownReplica.Sentence())
	assert.Equal(t, "some_new_reason", RerouteReason("some_new_reason").Sentence(), "an unknown reason shows its ID")
}

// Readers sharing a client and group ID make one entry, in the order the
// first of each was added; every reroute reason has a counter from the
// start; a removed Reader leaves the set.
func TestReaderSetGroups(t *testing.T) {
	reader := func(clientID, groupID string) *Reader {
		r := NewReader(ReaderConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "t", GroupID: groupID,
			Dialer: &Dialer{ClientID: clientID}})
		t.Cleanup(func() { r.Close() })
		return r
	}
	a1, a2, b := reader("a", "g"), reader("a", "g"), reader("b", "g")
	s := NewReaderSet(a1, b)
	s.Add(a2)

	groups := s.RoutingStats()
	require.Len(t, groups, 2)
	assert.Equal(t, [2]string{"a", "g"}, [2]string{groups[0].ClientID, groups[0].GroupID})
	assert.Equal(t, [2]string{"b", "g"}, [2]string{groups[1].ClientID, groups[1].GroupID})
	for _, reason := range RerouteReasons() {
		n, ok := groups[0].Reroutes[reason]
		assert.True(t, ok && n == 0, "reason %s", reason)
	}

	s.Remove(b)
	groups = s.RoutingStats()
	require.Len(t, groups, 1)
	assert.Equal(t, "a", groups[0].ClientID)
	var empty ReaderSet
	assert.Empty(t, empty.RoutingStats())
}

// LagByTopic sums the known lag of the partitions read now.
func TestRoutingStatsLagByTopic(t *testing.T) {
	s := RoutingStats{Partitions: []PartitionRoutingStats{
		{Topic: "t", Partition: 0, Broker: 1, Lag: 5},
		{Topic: "t", Partition: 1, Broker: 2, Lag: 7},
		{Topic: "t", Partition: 2, Broker: -1, Lag: 100}, // not read now
		{Topic: "u", Partition: 0, Broker: 1, Lag: -1},   // before the first answer
		{Topic: "v", Partition: 0, Broker: 3, Lag: 0},
	}}
	assert.Equal(t, map[string]int64{"t": 12, "v": 0}, s.LagByTopic())
}
