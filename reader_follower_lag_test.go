package kafka

// Unit tests of the lag check on the fake brokers (internal/routing/lag.go).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

func TestReaderConfigMaxFollowerLag(t *testing.T) {
	base := ReaderConfig{Brokers: []string{"x"}, Topic: "t"}
	for _, lag := range []time.Duration{-1, 0, time.Second, time.Minute} {
		cfg := base
		cfg.MaxFollowerLag = lag
		assert.NoError(t, cfg.Validate(), "MaxFollowerLag %v", lag)
	}
	cfg := base
	cfg.MaxFollowerLag = 500 * time.Millisecond
	assert.ErrorContains(t, cfg.Validate(), "MaxFollowerLag")

	assert.Equal(t, 10*time.Second, base.withDefaults().MaxFollowerLag)
	off := base
	off.MaxFollowerLag = -1
	off = off.withDefaults()
	assert.Equal(t, time.Duration(0), off.routing().MaxFollowerLag, "negative turns the check off")
	on := base.withDefaults()
	assert.Equal(t, 10*time.Second, on.routing().MaxFollowerLag)
}

// rtLagReader: 20 records of which the rack-b follower holds 0-3, and a
// rack-b reader with MaxFollowerLag lag, one batch a fetch.
func rtLagReader(t *testing.T, selector bool, lag time.Duration) (*fakebroker.Cluster, *Reader, *rtLogger) {
	c := rtRackCluster(t, selector)
	for i := 0; i < 5; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	c.SetReplicaHighWatermark("t", 0, 2, 4)
	log := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes, cfg.Logger = "b", 1, log
		cfg.MaxFollowerLag = lag
	})
	return c, r, log
}

// The rack-b follower holds offsets 0-3 of 20: the reader reads them from
// it, waits there with a backoff (the fake answers at once, like a follower
// asked past its log end), leaves it within MaxFollowerLag for the leader
// and reads the rest there, in order.
func TestReaderFollowerLagLeavesForLeader(t *testing.T) {
	c, r, log := rtLagReader(t, true, time.Second)
	rtExpect(t, r, 0, 4)
	waitStart := time.Now()
	f0 := c.Broker(2).Requests(protocol.Fetch)
	rtExpect(t, r, 4, 16)
	waited := time.Since(waitStart)
	fetches := c.Broker(2).Requests(protocol.Fetch) - f0
	t.Logf("left the follower after %v; %d fetches at it meanwhile (%.1f/s)", waited, fetches, float64(fetches)/waited.Seconds())
	assert.Less(t, waited, 2*time.Second, "the follower was left later than MaxFollowerLag (+ slack)")
	assert.LessOrEqual(t, fetches, 10, "the reader spun at the follower")
	assert.NotEmpty(t, log.find("broker 2 (rack b) → broker 1 (rack a), follower lagging"), "no reroute line in %q", log.all())
	rt := r.Stats().Routing[0]
	assert.Equal(t, int64(1), rt.Reroutes[RerouteFollowerLagging])
	assert.Equal(t, 1, rt.Broker)
}

// A leader that names the follower whatever its log end (Kafka before 3.4)
// sends the reader to an offset the follower does not have: its
// OffsetOutOfRange is waited out with a backoff, not taken as a failure,
// and reads return to the follower once it has caught up.
func TestReaderFollowerLagOutOfRangeWaits(t *testing.T) {
	c, r, log := rtLagReader(t, false, time.Minute) // only the backoff at work here
	rtExpect(t, r, 0, 20)                           // from the leader: no selector yet
	leader := c.Broker(1)
	leader.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := leader.Default(req, hdr).(*protocol.FetchResponse)
		if req.(*protocol.FetchRequest).RackID == "b" {
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					resp.Topics[i].Partitions[j].PreferredReadReplica = 2
					resp.Topics[i].Partitions[j].Records = nil
				}
			}
		}
		return resp, fakebroker.Action{}
	})
	rtAppend(c, 0, 20, 4)
	// The follower answers OffsetOutOfRange at 20 until it catches up.
	require.Eventually(t, func() bool { return c.Broker(2).Requests(protocol.Fetch) > 0 }, 10*time.Second, 10*time.Millisecond)
	waitStart := time.Now()
	f0 := c.Broker(2).Requests(protocol.Fetch)
	<-time.After(2 * time.Second) // the measurement window
	fetches := c.Broker(2).Requests(protocol.Fetch) - f0
	t.Logf("%d fetches at the follower in %v waiting for offset 20 (%.1f/s)", fetches, time.Since(waitStart), float64(fetches)/time.Since(waitStart).Seconds())
	assert.LessOrEqual(t, fetches, 10, "the reader spun at the follower")
	c.SetReplicaHighWatermark("t", 0, 2, 24)
	rtExpect(t, r, 20, 4)
	rt := r.Stats().Routing[0]
	assert.Equal(t, 2, rt.Broker, "not reading from the caught-up follower")
	assert.Zero(t, rt.Reroutes[RerouteFollowerFailed], "the follower behind was taken as failed: %v", rt.Reroutes)
	assert.Empty(t, log.find("follower failed"))
}

// A follower that lacks the reader's offset answers only OffsetOutOfRange:
// no records flow, and the leader's answer that sent the reader there made
// the leader quiet (the reader stood at its high watermark). The follower's
// OffsetOutOfRange brings the leader's sampling back, so the lag check sees
// the leader's end move on and the reader leaves within MaxFollowerLag.
func TestReaderFollowerOutOfRangeSamplesAQuietLeader(t *testing.T) {
	c, r, _ := rtLagReader(t, false, time.Second)
	// The follower holds 0-3; the leader names it for every offset, as
	// leaders before Kafka 3.4 did, and sends no records with the name.
	leader := c.Broker(1)
	leader.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := leader.Default(req, hdr).(*protocol.FetchResponse)
		if req.(*protocol.FetchRequest).RackID == "b" {
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					resp.Topics[i].Partitions[j].PreferredReadReplica = 2
					resp.Topics[i].Partitions[j].Records = nil
				}
			}
		}
		return resp, fakebroker.Action{}
	})
	require.NoError(t, r.SetOffset(20)) // the leader's end: it looks quiet
	got := make(chan Message, 1)
	go func() {
		m, err := r.FetchMessage(rtCtx(t))
		if err != nil {
			t.Errorf("FetchMessage: %v", err)
		}
		got <- m
	}()
	outOfRange := func() bool { return c.Broker(2).Requests(protocol.Fetch) > 2 }
	require.Eventually(t, outOfRange, 10*time.Second, 10*time.Millisecond, "the reader never went to the follower")
	rtAppend(c, 0, 20, 4) // the leader moves on; the follower does not
	start := time.Now()
	m := <-got
	assert.Equal(t, int64(20), m.Offset)
	rtExpect(t, r, 21, 3)
	t.Logf("read offsets 20-23 %v after they were written", time.Since(start).Round(time.Millisecond))
	assert.Equal(t, 1, r.Stats().Routing[0].Broker, "reading from the leader")
}
