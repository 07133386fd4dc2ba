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
)

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
