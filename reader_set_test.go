package kafka

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
