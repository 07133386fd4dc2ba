package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/internal/routing"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The public side of client-side selection; the routing through it is
// tested in internal/routing (choice_test.go). The partition is replicated
// on brokers 1..4 (racks a..d), leader 1 at epoch 5, ISR {1,2,3}.

func rsBroker(id int) Broker {
	if id < 0 {
		return Broker{ID: id}
	}
	return Broker{ID: id, Host: fmt.Sprintf("broker-%d", id), Port: 9092, Rack: string(rune('a' + id - 1))}
}

// rsPart returns the partition led by leader at epoch, replicas 1..4, ISR isr.
func rsPart(leader, epoch int, isr ...int) Partition {
	p := Partition{Topic: "t", Leader: rsBroker(leader), LeaderEpoch: epoch}
	for id := 1; id <= 4; id++ {
		p.Replicas = append(p.Replicas, rsBroker(id))
	}
	for _, id := range isr {
		p.Isr = append(p.Isr, rsBroker(id))
	}
	return p
}

var rsDefault = rsPart(1, 5, 1, 2, 3)

// rsOffline marks broker id offline in p.
func rsOffline(p Partition, id int) Partition {
	p.OfflineReplicas = []Broker{{ID: id}}
	return p
}

// rsPick is a ReplicaSelector that returns id and records what it saw.
type rsPick struct {
	id   int
	seen *[]Partition
}

func (p rsPick) SelectReplica(rack string, part Partition) (int, bool) {
	if p.seen != nil {
		*p.seen = append(*p.seen, part)
	}
	return p.id, p.id >= 0
}

func TestRackAffinityReplicaSelector(t *testing.T) {
	sel := RackAffinityReplicaSelector{}
	two := func(id int) Broker { b := rsBroker(id); b.Rack = "b"; return b }
	// Brokers 2, 3 and 4 in rack b, leader 1 in rack a.
	p := Partition{Leader: rsBroker(1), Replicas: []Broker{rsBroker(1), two(2), two(3), two(4)}, Isr: []Broker{rsBroker(1), two(4), two(2)}}
	for id, want := range map[int]int{0: 2, 1: 4, 2: 2, 3: 4} {
		p.ID = id
		got, ok := sel.SelectReplica("b", p)
		assert.True(t, ok)
		assert.Equal(t, want, got, "partition %d: deterministic over the rack's in-sync replicas", id)
	}
	got, ok := sel.SelectReplica("a", p)
	assert.True(t, ok)
	assert.Equal(t, 1, got, "the leader in the client's rack")
	_, ok = sel.SelectReplica("c", p)
	assert.False(t, ok, "no replica in rack c")
	_, ok = sel.SelectReplica("", p)
	assert.False(t, ok, "no client rack")
	// The ISR lists the broker by ID only: its rack comes from Replicas.
	q := rsDefault
	q.Isr = []Broker{{ID: 1}, {ID: 2}}
	got, ok = sel.SelectReplica("b", q)
	assert.True(t, ok)
	assert.Equal(t, 2, got)
}

func TestReplicaToRead(t *testing.T) {
	assert.Equal(t, rsBroker(2), ReplicaToRead(nil, "b", rsDefault), "the in-rack follower")
	assert.Equal(t, rsBroker(1), ReplicaToRead(nil, "d", rsDefault), "rack d's replica is out of the ISR: the leader")
	assert.Equal(t, rsBroker(1), ReplicaToRead(nil, "b", rsOffline(rsDefault, 2)), "offline: the leader")
	assert.Equal(t, rsBroker(1), ReplicaToRead(nil, "", rsDefault), "no rack: the leader")
	assert.Equal(t, rsBroker(1), ReplicaToRead(rsPick{id: 4}, "b", rsDefault), "a pick out of the ISR: the leader")
	assert.Equal(t, rsBroker(3), ReplicaToRead(rsPick{id: 3}, "b", rsDefault))
	assert.Equal(t, Broker{}, ReplicaToRead(nil, "b", Partition{}), "no metadata: no panic")
}

// The Reader's router asks an application's ReplicaSelector with the
// kafka.Partition it accepted, ISR reduced to what may be read.
func TestReplicaSelectorAdapterAsksSelector(t *testing.T) {
	var seen []Partition
	cfg := routingConfig{Rack: "b", Choice: routeChooser(rsPick{id: 3, seen: &seen})}
	s := newReplicaSelector(cfg, newCooldownCache(), rsOffline(rsDefault, 2), time.Unix(0, 0))
	d := s.next(metadataEvent(1, time.Unix(1, 0), rsOffline(rsDefault, 2)))
	assert.Equal(t, 3, d.Broker, "the application's pick")
	assert.Equal(t, RerouteClientChoice, RerouteReason(d.Reason))
	require.NotEmpty(t, seen)
	want := rsOffline(rsDefault, 2)
	want.Isr = []Broker{rsBroker(1), rsBroker(3)}
	assert.Equal(t, want, seen[0], "offline 2 left out, the rest as metadata said")
}

// The routing state machine's tables are in internal/routing; these check
// the adapter: what each error tells the router, and the metadata the
// fetcher gets back.

func TestRouteFailure(t *testing.T) {
	stale := routing.Failure{Scope: routing.ScopeStaleClient, Refresh: routing.RefreshYes}
	fenced := routing.Failure{Scope: routing.ScopeStaleClient, Refresh: routing.RefreshYes, ReplicaAhead: true}
	conn := routing.Failure{Scope: routing.ScopeBroker, Refresh: routing.RefreshFromLeader}
	part := routing.Failure{Scope: routing.ScopePartition}
	partRefresh := routing.Failure{Scope: routing.ScopePartition, Refresh: routing.RefreshYes}
	for _, tc := range []struct {
		err  error
		want routing.Failure
	}{
		{NotLeaderForPartition, stale},
		{FencedLeaderEpoch, fenced},
		{UnknownLeaderEpoch, stale},
		{fmt.Errorf("fetching: %w", NotLeaderForPartition), stale},
		{makeError(int16(FencedLeaderEpoch), "epoch 4 < 5"), fenced},
		{OffsetOutOfRange, routing.Failure{Scope: routing.ScopePartition, OutOfRange: true}},
		{ReplicaNotAvailable, partRefresh},
		{UnknownTopicOrPartition, partRefresh},
		{LeaderNotAvailable, partRefresh},
		{UnknownTopicID, partRefresh},
		{InconsistentTopicID, partRefresh},
		{TopicAuthorizationFailed, part},
		{&protocol.RecordBatchError{Offset: 7, Err: errors.New("crc mismatch")}, routing.Failure{Scope: routing.ScopePartition, Refresh: routing.RefreshFromLeader}},
		{KafkaStorageError, routing.Failure{Scope: routing.ScopeBroker, Refresh: routing.RefreshYes}},
		{RequestTimedOut, routing.Failure{Scope: routing.ScopeBroker, Unreachable: true}},
		// A stall as Conn reports it: no byte of the answer in time.
		{fmt.Errorf("waiting for the Fetch response: %w: %w", RequestTimedOut, os.ErrDeadlineExceeded), routing.Failure{Scope: routing.ScopeBroker, Unreachable: true}},
		{io.EOF, conn},
		{io.ErrUnexpectedEOF, conn},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, conn},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, conn},
		{context.DeadlineExceeded, routing.Failure{Scope: routing.ScopeBroker, Refresh: routing.RefreshFromLeader, Unreachable: true}},
		{errors.New("some transport failure"), conn},
		{context.Canceled, routing.Failure{Scope: routing.ScopeBroker, Canceled: true, Refresh: routing.RefreshFromLeader}},
	} {
		assert.Equal(t, tc.want, routeFailure(tc.err), "%v", tc.err)
	}
}

// The fetcher acts on the kafka.Partition the router accepted, never on
// one it refused (an older epoch, no leader).
func TestReplicaSelectorAdapterPartition(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := newReplicaSelector(routingConfig{Rack: "b"}, newCooldownCache(), rsDefault, t0)
	assert.Equal(t, rsDefault, s.partition())
	newer := rsPart(3, 6, 1, 2, 3)
	d := s.next(metadataEvent(1, t0.Add(time.Second), newer))
	assert.Equal(t, 3, d.Broker)
	assert.True(t, d.ValidateOffset)
	assert.Equal(t, newer, s.partition())
	s.next(metadataEvent(3, t0.Add(2*time.Second), rsPart(1, 5, 1, 2, 3)))
	assert.Equal(t, newer, s.partition(), "an older epoch is not taken")
	noLeader := rsPart(-1, 7, 2, 3)
	s.next(metadataEvent(3, t0.Add(3*time.Second), noLeader))
	assert.Equal(t, newer, s.partition(), "no leader is not taken")
	assert.Equal(t, 3, s.current())
}

// A fetch answer goes to the router without a conversion or an allocation:
// only metadata and failures are converted.
func TestReplicaSelectorAdapterNoAllocPerFetch(t *testing.T) {
	t0 := time.Unix(0, 0)
	s := newReplicaSelector(routingConfig{Rack: "b"}, newCooldownCache(), rsDefault, t0)
	d := s.next(routeEvent{Event: routing.Event{Kind: eventFetched, Broker: 1, Now: t0, Preferred: 2, Empty: true, FetchOffset: 10, HighWatermark: 10}})
	assert.Equal(t, 2, d.Broker)
	ev := routeEvent{Event: routing.Event{Kind: eventFetched, Broker: 2, Now: t0, Preferred: -1, FetchOffset: 10, HighWatermark: 100, NextOffset: 20, LongPolled: true}}
	allocs := testing.AllocsPerRun(100, func() {
		ev.Now = ev.Now.Add(time.Millisecond)
		s.next(ev)
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 2, s.current())
}
