package kafka

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

// A leader killed with kill -9 stays in the metadata until the cluster
// elects another: attempts that cannot reach it wait for a reachable
// leader instead of using up MaxAttempts.
func TestWriterWaitsForReachableLeader(t *testing.T) {
	c := wtCluster(t, 2, 1)
	w := wtWriter(t, c) // MaxAttempts 10, backoffs of a few ms
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("a")}))

	// The leader dies; broker 2's metadata keeps naming it.
	c.Broker(1).StopUnnoticed()
	errc := make(chan error, 1)
	go func() { errc <- w.WriteMessages(ctx, Message{Value: []byte("b")}) }()
	// Three times the attempts MaxAttempts allows go by before the
	// election.
	select {
	case <-c.Broker(2).Await(protocol.Metadata, 3*w.maxAttempts()):
	case err := <-errc:
		t.Fatalf("WriteMessages returned before the election: %v", err)
	}
	c.SetLeader(wtTopic, 0, 2)
	require.NoError(t, <-errc)
	wtSameValues(t, "log", wtValues(c, wtTopic, 0), "a", "b")
}

// Without an election the message fails once DeliveryTimeout has passed,
// with the dial's error.
func TestWriterDeliveryTimeout(t *testing.T) {
	c := wtCluster(t, 2, 1)
	w := wtWriter(t, c)
	w.DeliveryTimeout = 100 * time.Millisecond
	ctx := wtContext(t)
	require.NoError(t, w.WriteMessages(ctx, Message{Value: []byte("a")}))
	c.Broker(1).StopUnnoticed()

	err := w.WriteMessages(ctx, Message{Value: []byte("b")})
	var werr WriteErrors
	require.ErrorAs(t, err, &werr)
	require.True(t, errors.Is(werr[0], syscall.ECONNREFUSED), "err = %v, want connection refused", werr[0])
	require.ErrorContains(t, werr[0], "connecting to broker 1")
	require.Greater(t, c.Broker(2).Requests(protocol.Metadata), w.maxAttempts(),
		"the Writer gave up before DeliveryTimeout: MaxAttempts counted the unreachable leader")
}
