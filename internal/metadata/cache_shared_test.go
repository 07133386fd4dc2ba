package metadata

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

func answerAt(epoch int32) *protocol.MetadataResponse {
	return &protocol.MetadataResponse{Brokers: testBrokers(), Topics: mdAnswer{id: 1, parts: []mdPart{{0, 1, epoch, nil}}}.topics()}
}

// Callers asking for the same topics while a request is in flight join it;
// one that needs an answer sent after it asked (SentAfter) waits for the
// request to end and sends the next one.
func TestSharedJoinsTheRequestInFlight(t *testing.T) {
	c := New()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ask := Ask{Who: "u", Topics: []string{"t"}}
	gate := make(chan struct{})
	var sent atomic.Int32
	send := func(context.Context) (*protocol.MetadataResponse, error) {
		n := sent.Add(1)
		if n == 1 {
			<-gate
		}
		return answerAt(n), nil
	}
	first := make(chan error, 1)
	go func() { _, err := c.Shared(ctx, ask, send); first <- err }()
	require.Eventually(t, func() bool { return c.Joined(ask) == 0 }, 5*time.Second, time.Millisecond)

	joined := make(chan *protocol.MetadataResponse, 1)
	go func() { md, _ := c.Shared(ctx, ask, send); joined <- md }()
	later := ask
	later.SentAfter = time.Now()
	next := make(chan *protocol.MetadataResponse, 1)
	go func() { md, _ := c.Shared(ctx, later, send); next <- md }()
	require.Eventually(t, func() bool { return c.Joined(ask) == 2 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, -1, c.Joined(Ask{Who: "other", Topics: []string{"t"}}), "another user's request is not that one")

	close(gate)
	require.NoError(t, <-first)
	assert.Equal(t, int32(1), (<-joined).Topics[0].Partitions[0].LeaderEpoch, "the joiner got the first answer")
	assert.Equal(t, int32(2), (<-next).Topics[0].Partitions[0].LeaderEpoch, "a later answer for SentAfter")
	assert.Equal(t, int32(2), sent.Load())
	p, ok := c.Partition("t", 0)
	require.True(t, ok)
	assert.Equal(t, 2, p.LeaderEpoch, "both answers merged")
}

// A caller that joined a request whose sender gave up sends its own.
func TestSharedSenderCancelled(t *testing.T) {
	c := New()
	ask := Ask{Topics: []string{"t"}}
	senderCtx, cancelSender := context.WithCancel(context.Background())
	sending := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := c.Shared(senderCtx, ask, func(ctx context.Context) (*protocol.MetadataResponse, error) {
			close(sending)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		first <- err
	}()
	<-sending
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	second := make(chan error, 1)
	go func() {
		_, err := c.Shared(ctx, ask, func(context.Context) (*protocol.MetadataResponse, error) { return answerAt(3), nil })
		second <- err
	}()
	require.Eventually(t, func() bool { return c.Joined(ask) == 1 }, 5*time.Second, time.Millisecond)
	cancelSender()
	require.ErrorIs(t, <-first, context.Canceled)
	require.NoError(t, <-second, "the joiner sent its own request")
	p, ok := c.Partition("t", 0)
	require.True(t, ok)
	assert.Equal(t, 3, p.LeaderEpoch)
}

// Acquire shares one cache per set of bootstrap addresses, in any order,
// until the last user releases it.
func TestAcquireSharesUntilReleased(t *testing.T) {
	a := Acquire([]string{"x:1", "y:2"})
	b := Acquire([]string{"y:2", "x:1"})
	require.Same(t, a, b)
	assert.NotSame(t, a, Acquire(nil), "no addresses: a cache of its own")
	a.Release()
	assert.True(t, InUse([]string{"x:1", "y:2"}))
	b.Release()
	assert.False(t, InUse([]string{"x:1", "y:2"}))
	c := Acquire([]string{"x:1", "y:2"})
	defer c.Release()
	assert.NotSame(t, a, c, "a forgotten cache starts afresh")
}
