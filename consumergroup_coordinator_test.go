package kafka

// A group coordinator that stops answering (a SIGSTOPped broker) on the fake
// brokers: the member keeps its generation, and so its partitions, until
// the session timeout says the broker evicted it; heartbeats and commits are
// retried against the coordinator looked up again.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/require"
)

// cgFreeze makes b hold its answers to keys until release closes: a frozen
// broker accepts the requests and never answers.
func cgFreeze(b *fakebroker.Broker, release <-chan struct{}, keys ...protocol.ApiKey) {
	for _, key := range keys {
		b.Handle(key, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			return b.Default(req, hdr), fakebroker.Action{Wait: release}
		})
	}
}

// cgMoveCoordinator makes every broker of c but from (which may be frozen)
// name to as the coordinator, and to answer the group requests as the
// fake's coordinator (from) would: the coordinator moved, with the
// group's state.
func cgMoveCoordinator(c *fakebroker.Cluster, from, to *fakebroker.Broker) {
	for _, b := range c.Brokers() {
		if b != from {
			cgNameCoordinator(b, to)
		}
	}
	for _, key := range []protocol.ApiKey{protocol.Heartbeat, protocol.OffsetCommit, protocol.OffsetFetch, protocol.JoinGroup, protocol.SyncGroup, protocol.LeaveGroup} {
		to.Handle(key, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			return from.Default(req, hdr), fakebroker.Action{}
		})
	}
}

// cgNameCoordinator makes b answer FindCoordinator with to.
func cgNameCoordinator(b, to *fakebroker.Broker) {
	b.Handle(protocol.FindCoordinator, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		r := req.(*protocol.FindCoordinatorRequest)
		resp := &protocol.FindCoordinatorResponse{NodeID: to.ID(), Host: to.Host(), Port: to.Port()}
		for _, key := range r.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, protocol.FindCoordinatorResponseCoordinator{
				CoordinatorKey: key, NodeID: to.ID(), Host: to.Host(), Port: to.Port(),
			})
		}
		return resp, fakebroker.Action{}
	})
}

// The coordinator freezes for less than the session timeout and the group
// moves to another broker: no generation ends (the generation's functions,
// the fetchers in a Reader, keep running), the heartbeat that timed out is
// retried against the coordinator looked up again, at a broker that
// answers, and a commit made meanwhile is retried until it goes through.
func TestConsumerGroupFrozenCoordinatorKeepsGeneration(t *testing.T) {
	c := cgFake(t, 2, 2)
	b1, b2 := c.Broker(1), c.Broker(2)
	cfg := cgConfig(c, "g-frozen")
	cfg.HeartbeatInterval = 50 * time.Millisecond
	cfg.Timeout = 300 * time.Millisecond
	cfg.SessionTimeout = 4 * time.Second
	cg := cgNew(t, cfg)
	m := cgRun(t, cg, nil)
	cgWait(t, b1.Await(protocol.Heartbeat, 3), 5*time.Second, "heartbeats of the first generation")
	gen := m.latest()
	require.NotNil(t, gen)

	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	frozenAt := time.Now()
	// Frozen: nothing the group sends to broker 1 is answered, but the
	// other broker still names it as the coordinator, as Kafka does until
	// the controller fences the frozen broker.
	cgFreeze(b1, release, protocol.Heartbeat, protocol.OffsetCommit, protocol.FindCoordinator)
	commitErr := make(chan error, 1)
	go func() { commitErr <- gen.CommitOffsets(map[string]map[int]int64{cgTopic: {0: 7}}) }()

	// A few heartbeats time out at the frozen coordinator.
	held := b1.Requests(protocol.Heartbeat)
	cgWait(t, b1.Await(protocol.Heartbeat, held+2), 5*time.Second, "heartbeats retried at the frozen coordinator")
	findsAt2 := b2.Requests(protocol.FindCoordinator)
	require.Greater(t, findsAt2, 0, "the coordinator was never looked up at the broker that answers")

	cgMoveCoordinator(c, b1, b2)
	cgWait(t, b2.Await(protocol.Heartbeat, 3), 5*time.Second, "heartbeats at the new coordinator")
	silence := time.Since(frozenAt)
	require.Less(t, silence, cfg.SessionTimeout, "the test must end the silence before the session timeout")

	select {
	case err := <-commitErr:
		require.NoError(t, err, "the commit made while the coordinator was frozen")
	case <-time.After(5 * time.Second):
		t.Fatal("the commit made while the coordinator was frozen did not return")
	}
	off, ok := c.Committed("g-frozen", cgTopic, 0)
	require.True(t, ok)
	require.Equal(t, int64(7), off)

	gens, _ := m.count()
	require.Equal(t, 1, gens, "generations")
	select {
	case <-gen.ended():
		t.Fatalf("the generation ended: %v", gen.endReason())
	default:
	}
	require.Equal(t, 0, b2.Requests(protocol.JoinGroup), "the member rejoined")
	t.Logf("coordinator silent for %v; heartbeats at broker 1: %d, at broker 2: %d", silence.Round(time.Millisecond), b1.Requests(protocol.Heartbeat), b2.Requests(protocol.Heartbeat))
}

// A coordinator silent for longer than the session timeout: the broker has
// evicted the member by then, so the generation ends (not before the
// session ran out) and the member rejoins once the coordinator answers.
func TestConsumerGroupCoordinatorSilentPastSessionEnds(t *testing.T) {
	c := cgFake(t, 2, 2)
	b1 := c.Broker(1)
	cfg := cgConfig(c, "g-silent")
	cfg.HeartbeatInterval = 50 * time.Millisecond
	cfg.Timeout = 200 * time.Millisecond
	cfg.SessionTimeout = 1500 * time.Millisecond
	cg := cgNew(t, cfg)
	m := cgRun(t, cg, nil)
	cgWait(t, b1.Await(protocol.Heartbeat, 3), 5*time.Second, "heartbeats of the first generation")
	gen := m.latest()

	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	cgFreeze(b1, release, protocol.Heartbeat)
	frozenAt := time.Now()
	cgWait(t, gen.ended(), 5*time.Second, "the end of the generation")
	ended := time.Since(frozenAt)
	// The last answered heartbeat was at most one interval before the
	// freeze.
	require.GreaterOrEqual(t, ended, cfg.SessionTimeout-cfg.HeartbeatInterval-10*time.Millisecond, "the generation ended before the session timeout")
	require.Error(t, gen.endReason())
	require.True(t, strings.Contains(gen.endReason().Error(), "session timeout"), "end reason: %v", gen.endReason())

	b1.Handle(protocol.Heartbeat, nil)
	cgEventually(t, 5*time.Second, "a new generation", func() bool { g, _ := m.count(); return g >= 2 })
	require.Greater(t, m.latest().ID, gen.ID)
	t.Logf("generation ended %v after the coordinator froze (session timeout %v)", ended.Round(time.Millisecond), cfg.SessionTimeout)
}

// A commit refused because the generation is over still ends it at once
// (the coordinator said so), while a commit whose coordinator moved is
// retried.
func TestConsumerGroupCommitCoordinatorMovedIsRetried(t *testing.T) {
	c := cgFake(t, 2, 2)
	b1 := c.Broker(1)
	cg := cgNew(t, cgConfig(c, "g-commit-moved"))
	gen := cgNext(t, cg, 5*time.Second)
	gen.Start(func(ctx context.Context) { <-ctx.Done() })
	b1.ScriptNext(protocol.OffsetCommit, fakebroker.Step{ErrorCode: int16(NotCoordinatorForGroup)})
	b1.ScriptNext(protocol.OffsetCommit, fakebroker.Step{Action: fakebroker.Action{Close: true}})
	require.NoError(t, gen.CommitOffsets(map[string]map[int]int64{cgTopic: {1: 3}}))
	off, ok := c.Committed("g-commit-moved", cgTopic, 1)
	require.True(t, ok)
	require.Equal(t, int64(3), off)
	require.False(t, gen.isEnded(), "the generation ended")

	b1.ScriptNext(protocol.OffsetCommit, fakebroker.Step{ErrorCode: int16(IllegalGeneration)})
	err := gen.CommitOffsets(map[string]map[int]int64{cgTopic: {1: 4}})
	require.ErrorIs(t, err, IllegalGeneration)
	require.True(t, gen.isEnded(), "the generation goes on after IllegalGeneration")
}
