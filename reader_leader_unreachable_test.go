package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// The leader stops answering (its fetches and new connections hang, as on
// a black-holed path) while it stays leader: an in-sync follower serves
// the records meanwhile, and once the leader answers again, its probe
// sends the reads back. Nothing is lost, repeated or returned as an error.
func TestReaderLeaderUnreachableFollowerServes(t *testing.T) {
	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 4)
	log := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Brokers = c.Addrs()
		cfg.Rack = "a" // the leader's rack: reads start on the leader
		cfg.MaxBytes = 1
		cfg.Logger = log
		cfg.ReplicaStallTimeout = 300 * time.Millisecond
	})
	rtExpect(t, r, 0, 4)
	require.Equal(t, 1, r.Stats().Routing[0].Broker, "not on the leader before its path breaks")

	leader := c.Broker(1)
	hold := make(chan struct{})
	silent := func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return leader.Default(req, hdr), fakebroker.Action{Wait: hold}
	}
	leader.Handle(protocol.Fetch, silent)
	leader.Handle(protocol.ApiVersions, silent)
	healed := false
	heal := func() {
		if !healed {
			healed = true
			leader.Handle(protocol.Fetch, nil)
			leader.Handle(protocol.ApiVersions, nil)
			close(hold)
		}
	}
	t.Cleanup(heal)

	fetched2 := c.Broker(2).FetchBytes()
	rtAppend(c, 0, 4, 4)
	rtExpect(t, r, 4, 4) // without a stand-in: stuck on the silent leader
	assert.Greater(t, c.Broker(2).FetchBytes(), fetched2, "the in-sync follower did not serve")
	assert.NotEmpty(t, log.find("broker 1 (rack a) → broker 2 (rack b), leader unreachable"))
	assert.EqualValues(t, 1, r.RoutingStats().Reroutes[RerouteLeaderUnreachable])

	heal()
	rtAppend(c, 0, 8, 4)
	rtExpect(t, r, 8, 4)
	// The follower long-polls meanwhile: each answer is an event at which
	// the leader's probe is asked for, and its success then taken.
	require.Eventually(t, func() bool { return rtReadingFrom(r) == 1 }, 10*time.Second, 10*time.Millisecond,
		"reads not back on the leader once it answers")
	rtAppend(c, 0, 12, 4)
	rtExpect(t, r, 12, 4)
	assert.NotEmpty(t, log.find("broker 2 (rack b) → broker 1 (rack a), leader reachable again"))
}

// rtReadingFrom returns the broker r reads t/0 from (-1: none).
func rtReadingFrom(r *Reader) int {
	for _, p := range r.RoutingStats().Partitions {
		if p.Topic == "t" && p.Partition == 0 {
			return p.Broker
		}
	}
	return -1
}
