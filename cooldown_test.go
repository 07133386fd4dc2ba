package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/internal/routing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A broker that metadata stops listing (a scale-in) leaves the share's
// cooldowns: its probe is no longer handed out and the cooldowns no
// longer ask for metadata every second. An answer listing no broker
// changes nothing.
func TestCooldownForgetsBrokerMetadataNoLongerLists(t *testing.T) {
	r := &engineShare{cluster: &cluster{meta: metadata.New()}}
	r.rt = newConsumerRuntime(r, &ReaderConfig{})
	cd := r.rt.Cooldowns()
	cd.RequireProbe()
	r.cluster.meta.Merge(testBrokers(), nil)
	t0 := time.Unix(0, 0)
	s := newReplicaSelector(routingConfig{Rack: "b"}, cd, rsDefault, t0)
	require.Equal(t, 2, s.next(routeEvent{Event: routing.Event{Kind: eventFetched, Broker: 1, Now: t0, Preferred: 2, Empty: true}}).Broker)
	s.next(failureEvent(eventDialFailed, 2, t0, errors.New("connection refused"), 0))
	later := t0.Add(time.Minute)
	require.True(t, cd.Active(later), "broker 2 waits for its probe")

	r.cluster.meta.Merge(nil, nil)
	r.cooldownsSawMetadata()
	require.True(t, cd.Active(later), "an answer without brokers says nothing")

	r.cluster.meta.Merge(testBrokers()[:1], nil) // broker 1 only
	assert.Equal(t, []int{1}, r.cluster.listedBrokers())
	r.cooldownsSawMetadata()
	assert.False(t, cd.Active(later), "broker 2 is forgotten")
	_, due := cd.ProbeDue(later)
	assert.False(t, due, "no probe of a broker metadata no longer lists")
}

// A probe that connected and then timed out found a path too slow (a black
// hole, heavy loss, a frozen process); one that could not connect found no
// broker.
func TestConnectedThenTimedOut(t *testing.T) {
	dialTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	readTimeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	assert.False(t, connectedThenTimedOut(fmt.Errorf("dialing broker 2: %w", dialTimeout)))
	assert.False(t, connectedThenTimedOut(fmt.Errorf("dialing broker 2: %w", refused)))
	assert.True(t, connectedThenTimedOut(fmt.Errorf("reading the ApiVersions response: %w", readTimeout)))
	assert.True(t, connectedThenTimedOut(fmt.Errorf("negotiating versions: %w", context.DeadlineExceeded)))
	assert.False(t, connectedThenTimedOut(errors.New("SASL authentication failed")))
}
