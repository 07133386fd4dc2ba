package kafka

// Unit tests of the Reader's rack-aware path (ReaderConfig.Rack) on the
// fake brokers: following the leader's preferred replica, a forged or
// unknown preference, a failing follower, a follower's OffsetOutOfRange.

import (
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rtRackCluster: brokers 1, 2, 3 in racks a, b, c; topic t with one
// partition replicated on all three, led by broker 1 (rack a).
func rtRackCluster(t testing.TB, selector bool) *fakebroker.Cluster {
	return rtCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: selector}, 1, 3)
}

func rtRackReader(t testing.TB, c *fakebroker.Cluster, log *rtLogger) *Reader {
	return rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack = "b"
		cfg.MaxBytes = 1 // one batch per fetch
		cfg.Logger = log
	})
}

func TestReaderRackReadsFromSameRackReplica(t *testing.T) {
	c := rtRackCluster(t, true)
	for i := 0; i < 5; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	log := &rtLogger{}
	r := rtRackReader(t, c, log)
	rtExpect(t, r, 0, 20)

	if c.Broker(2).FetchBytes() == 0 || c.Broker(3).Requests(protocol.Fetch) != 0 {
		t.Fatalf("fetch bytes: broker 2 %d, broker 3 fetches %d", c.Broker(2).FetchBytes(), c.Broker(3).Requests(protocol.Fetch))
	}
	if n := c.Broker(2).Requests(protocol.ListOffsets); n != 0 {
		t.Errorf("%d ListOffsets sent to the follower", n)
	}
	for _, b := range []int32{1, 2} {
		for _, rec := range c.Broker(b).Received(protocol.Fetch) {
			if rec.Header.Version < 11 || rec.Request.(*protocol.FetchRequest).RackID != "b" {
				t.Fatalf("broker %d got Fetch v%d with rack %q", b, rec.Header.Version, rec.Request.(*protocol.FetchRequest).RackID)
			}
		}
	}
	if log.find("broker 1 (rack a) → broker 2 (rack b), preferred replica") == "" {
		t.Errorf("no reroute line in %q", log.all())
	}
	st := r.Stats()
	rt := st.Routing[0]
	if rt.Broker != 2 || rt.BrokerRack != "b" || rt.Leader != 1 || rt.Reroutes[ReroutePreferredReplica] != 1 || rt.SameRackRatio() < 0.9 {
		t.Errorf("routing: %+v (same-rack ratio %.3f)", rt, rt.SameRackRatio())
	}
}

// The leader names a broker that does not exist: the reader stays on the
// leader and loses nothing.
func TestReaderRackForgedPreferredReplica(t *testing.T) {
	c := rtRackCluster(t, false)
	for i := 0; i < 3; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	for n := 1; n <= 3; n++ {
		c.Broker(1).Script(protocol.Fetch, n, fakebroker.Step{Edit: fakebroker.PreferReplica(9)})
	}
	r := rtRackReader(t, c, &rtLogger{})
	rtExpect(t, r, 0, 12)
	for _, b := range []int32{2, 3} {
		if n := c.Broker(b).Requests(protocol.Fetch); n != 0 {
			t.Errorf("broker %d got %d fetches", b, n)
		}
	}
}

// The follower dies: back to the leader at once, which serves the records
// although it keeps naming the follower (cooling down); nothing lost.
func TestReaderRackFollowerFails(t *testing.T) {
	c := rtRackCluster(t, true)
	for i := 0; i < 4; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	log := &rtLogger{}
	r := rtRackReader(t, c, log)
	rtExpect(t, r, 0, 8)
	c.Broker(2).Stop()
	rtExpect(t, r, 8, 8)
	rtAppend(c, 0, 16, 4)
	rtExpect(t, r, 16, 4)
	if log.find("broker 2 (rack b) → broker 1 (rack a), follower failed") == "" {
		t.Errorf("no failover line in %q", log.all())
	}
	if st := r.Stats(); st.Routing[0].Broker != 1 {
		t.Errorf("routing: %+v", st.Routing)
	}
}

// A follower's OffsetOutOfRange is not authoritative: back to the leader,
// no reset, nothing skipped.
func TestReaderRackFollowerOffsetOutOfRange(t *testing.T) {
	c := rtRackCluster(t, true)
	for i := 0; i < 3; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	c.Broker(2).Script(protocol.Fetch, 2, fakebroker.Step{ErrorCode: 1})
	errLog := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes, cfg.ErrorLogger = "b", 1, errLog
	})
	rtExpect(t, r, 0, 12)
	if s := errLog.find("moving to offset"); s != "" {
		t.Errorf("a follower's OffsetOutOfRange reset the position: %s", s)
	}
}

// A rack given only through the Dialer (kafka-go programs configure
// Dialer.RackID) routes like ReaderConfig.Rack: the reader follows the
// preferred replica instead of stalling on the leader's empty answers.
func TestReaderRackFromDialer(t *testing.T) {
	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 8)
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Dialer = &Dialer{RackID: "b"}
		cfg.MaxBytes = 1
	})
	if got := r.Config().Rack; got != "b" {
		t.Errorf("Config().Rack = %q, want the Dialer's rack", got)
	}
	rtExpect(t, r, 0, 8)
	if c.Broker(2).FetchBytes() == 0 {
		t.Error("nothing read from the rack-b follower")
	}
}

// A follower that stops answering (a frozen process, a black-holed link)
// is left for the leader once MaxWait + ReplicaStallTimeout pass. With a
// one-hour ReadBatchTimeout nothing else could end the wait, so reading on
// shows the stall was detected.
func TestReaderRackFollowerStalls(t *testing.T) {
	c := rtRackCluster(t, true)
	for i := 0; i < 4; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	log := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes, cfg.Logger = "b", 1, log
		cfg.MaxWait = 100 * time.Millisecond
		cfg.ReadBatchTimeout = time.Hour
		cfg.ReplicaStallTimeout = 300 * time.Millisecond
	})
	rtExpect(t, r, 0, 8)
	if c.Broker(2).FetchBytes() == 0 {
		t.Fatal("nothing read from the rack-b follower before the stall")
	}

	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	follower := c.Broker(2)
	follower.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return follower.Default(req, hdr), fakebroker.Action{Wait: hold}
	})
	rtExpect(t, r, 8, 8)
	rtAppend(c, 0, 16, 4)
	rtExpect(t, r, 16, 4)
	if log.find("broker 2 (rack b) → broker 1 (rack a), follower failed") == "" {
		t.Errorf("no failover line in %q", log.all())
	}
	if st := r.Stats(); st.Routing[0].Broker != 1 {
		t.Errorf("routing after the stall: %+v", st.Routing[0])
	}
}

// A leader no follower can stand in for gets the whole ReadBatchTimeout:
// ReplicaStallTimeout never cuts a fetch from it.
func TestReaderRackLeaderNotCutByStallTimeout(t *testing.T) {
	c := rtRackCluster(t, false) // no selector: every fetch goes to the leader
	rtAppend(c, 0, 0, 4)
	// The leader alone in sync: no follower can stand in for it (with one,
	// a stalled leader is left: TestReaderLeaderUnreachableFollowerServes).
	st := c.Partition("t", 0)
	st.ISR = []int32{st.Leader}
	c.SetPartition("t", 0, st)
	release := make(chan struct{})
	leader := c.Broker(1)
	// The first fetch is held 20x longer than MaxWait + ReplicaStallTimeout
	// (scripted before the Reader starts, which may fetch at once).
	go func() {
		defer close(release)
		timer := time.NewTimer(time.Second)
		defer timer.Stop()
		<-timer.C
	}()
	leader.Script(protocol.Fetch, 1, fakebroker.Step{Action: fakebroker.Action{Wait: release}})
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack = "b"
		cfg.MaxWait = 50 * time.Millisecond
		cfg.ReplicaStallTimeout = time.Millisecond
	})
	rtExpect(t, r, 0, 4)
	if n := leader.Requests(protocol.Fetch); n != 1 {
		t.Errorf("%d fetches sent to the leader, want 1 (a held fetch was cut and retried)", n)
	}
}

// The follower dies and the leader keeps naming it (as a real leader does
// until replica.lag.time.max.ms drops it from the ISR): the Reader fails
// over once and, when the 2 s cooldown is up, probes the broker instead of
// sending reads back to it; once it listens again, a probe reaches it and
// reads return. Nothing is lost meanwhile.
func TestReaderRackDeadFollowerProbedBeforeReturn(t *testing.T) {
	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 4)
	log := &rtLogger{}
	r := rtRackReader(t, c, log)
	rtExpect(t, r, 0, 4)
	require.Equal(t, 2, r.RoutingStats().Partitions[0].Broker, "read from the rack-b follower")

	follower := c.Broker(2)
	follower.StopUnnoticed()
	start := time.Now()
	next := 4
	readOne := func() {
		rtAppend(c, 0, next, 1)
		rtExpect(t, r, next, 1)
		next++
	}
	// Past the first cooldown (2 s) and a few probes: reads stay on the
	// leader, which keeps naming the dead follower.
	pace := time.NewTicker(20 * time.Millisecond)
	defer pace.Stop()
	for time.Since(start) < 4*time.Second {
		readOne()
		<-pace.C
	}
	rs := r.RoutingStats()
	assert.Equal(t, int64(1), rs.Reroutes[RerouteFollowerFailed], "the dead follower was read again after its cooldown")
	assert.Equal(t, 1, rs.Partitions[0].Broker, "reads stay on the leader while the follower is down")
	assert.Empty(t, log.find("answers again"), "a probe reached a stopped broker")

	follower.Start()
	deadline := time.Now().Add(10 * time.Second)
	for r.RoutingStats().Partitions[0].Broker != 2 {
		require.True(t, time.Now().Before(deadline), "reads not back on broker 2 10 s after it listens again")
		readOne()
		<-pace.C
	}
	assert.NotEmpty(t, log.find("broker 2 (rack b) answers again"))
	assert.Equal(t, int64(1), r.RoutingStats().Reroutes[RerouteFollowerFailed])
	readOne()
}
