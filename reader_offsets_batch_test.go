package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// queuedOffsetAsks returns how many ListOffsets asks for the broker at
// addr wait for a request.
func queuedOffsetAsks(addr string) int {
	offsetQueues.mu.Lock()
	defer offsetQueues.mu.Unlock()
	n := 0
	for k, q := range offsetQueues.m {
		if k.conn.RemoteAddr().String() == addr {
			n += len(q.asks)
		}
	}
	return n
}

// Asks for start offsets that come while a ListOffsets request is in
// flight on the connection go together in the next request, and each gets
// its own partition's answer. (On the real cluster, a group Reader on 60
// partitions: TestReaderIntegrationEngineSockets.)
func TestListOffsetBatched(t *testing.T) {
	const partitions = 30
	c := rtCluster(t, fakebroker.Config{}, partitions, 1)
	for p := int32(0); p < partitions; p++ {
		rtAppend(c, p, 0, 40)
		c.SetLogStartOffset("t", p, int64(p)) // a different first offset each
	}
	b := c.Broker(c.Partition("t", 0).Leader)
	hold := make(chan struct{})
	b.Script(protocol.ListOffsets, 1, fakebroker.Step{Action: fakebroker.Action{Wait: hold}})
	conn, err := (&Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", c.Addrs()[0])
	require.NoError(t, err)
	defer conn.Close()

	ctx := rtCtx(t)
	var wg sync.WaitGroup
	errs := make([]error, partitions)
	ask := func(p int) {
		defer wg.Done()
		off, err := listOffsetBatched(ctx, conn, 0, &offsetAsk{topic: "t", partition: int32(p), epoch: -1, timestamp: FirstOffset, done: make(chan offsetAnswer, 1)})
		if err == nil && off != int64(p) {
			err = fmt.Errorf("partition %d: first offset %d, want %d", p, off, p)
		}
		errs[p] = err
	}
	wg.Add(1)
	go ask(0)
	require.Eventually(t, func() bool { return b.Requests(protocol.ListOffsets) == 1 }, 10*time.Second, time.Millisecond)
	for p := 1; p < partitions; p++ {
		wg.Add(1)
		go ask(p)
	}
	require.Eventually(t, func() bool { return queuedOffsetAsks(b.Addr()) == partitions-1 }, 10*time.Second, time.Millisecond)
	close(hold)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 2, b.Requests(protocol.ListOffsets), "ListOffsets requests for %d partitions", partitions)
	second := b.Received(protocol.ListOffsets)[1].Request.(*protocol.ListOffsetsRequest)
	require.Len(t, second.Topics, 1)
	assert.Len(t, second.Topics[0].Partitions, partitions-1, "the asks that waited, in one request")
}

// Asks for one partition go in separate requests (a request names a
// partition once), and an error for one partition is that partition's.
func TestListOffsetBatchedDistinctPartitions(t *testing.T) {
	q := &offsetQueue{asks: []*offsetAsk{
		{topic: "t", partition: 0, timestamp: FirstOffset},
		{topic: "t", partition: 1},
		{topic: "t", partition: 0, timestamp: LastOffset},
		{topic: "u", partition: 0},
	}}
	first := takeDistinct(q)
	require.Len(t, first, 3)
	assert.Equal(t, FirstOffset, first[0].timestamp)
	require.Len(t, q.asks, 1)
	assert.Equal(t, LastOffset, q.asks[0].timestamp, "the second ask for t/0 waits for the next request")
}

// A caller whose context ends while another sends gets its context's
// error; the request goes on for the others.
func TestListOffsetBatchedWaiterCancelled(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 2, 1)
	rtAppend(c, 0, 0, 5)
	rtAppend(c, 1, 0, 5)
	b := c.Broker(c.Partition("t", 0).Leader)
	hold := make(chan struct{})
	b.Script(protocol.ListOffsets, 1, fakebroker.Step{Action: fakebroker.Action{Wait: hold}})
	conn, err := (&Dialer{Timeout: 5 * time.Second}).DialContext(context.Background(), "tcp", c.Addrs()[0])
	require.NoError(t, err)
	defer conn.Close()

	sent := make(chan offsetAnswer, 1)
	go func() {
		off, err := listOffsetBatched(rtCtx(t), conn, 0, &offsetAsk{topic: "t", partition: 0, epoch: -1, timestamp: LastOffset, done: make(chan offsetAnswer, 1)})
		sent <- offsetAnswer{off, err}
	}()
	require.Eventually(t, func() bool { return b.Requests(protocol.ListOffsets) == 1 }, 10*time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := listOffsetBatched(ctx, conn, 0, &offsetAsk{topic: "t", partition: 1, epoch: -1, timestamp: LastOffset, done: make(chan offsetAnswer, 1)})
		waited <- err
	}()
	require.Eventually(t, func() bool { return queuedOffsetAsks(b.Addr()) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-waited, context.Canceled)
	close(hold)
	a := <-sent
	require.NoError(t, a.err)
	assert.Equal(t, int64(5), a.offset)
	require.Eventually(t, func() bool { return queuedOffsetAsks(b.Addr()) == 0 }, 10*time.Second, time.Millisecond, "the abandoned ask was sent and answered")
	assert.Equal(t, 2, b.Requests(protocol.ListOffsets))
}
