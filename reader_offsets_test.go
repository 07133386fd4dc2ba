package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// queuedOffsetAsks returns how many ListOffsets asks for the broker at
// addr wait for a request.
func queuedOffsetAsks(addr string) int {
	return consumer.QueuedOffsetAsks(func(c any) bool { return c.(*Conn).RemoteAddr().String() == addr })
}

// listOffsetBatched asks for the offset of timestamp of t/p on conn, in a
// batch.
func listOffsetBatched(ctx context.Context, conn *Conn, p int, timestamp int64) (int64, error) {
	return consumer.ListOffset(ctx, offsetTarget(conn, 0), consumer.OffsetAsk{Topic: "t", Partition: int32(p), Epoch: -1, Timestamp: timestamp})
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
		off, err := listOffsetBatched(ctx, conn, p, FirstOffset)
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

	type answer struct {
		offset int64
		err    error
	}
	sent := make(chan answer, 1)
	go func() {
		off, err := listOffsetBatched(rtCtx(t), conn, 0, LastOffset)
		sent <- answer{off, err}
	}()
	require.Eventually(t, func() bool { return b.Requests(protocol.ListOffsets) == 1 }, 10*time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := listOffsetBatched(ctx, conn, 1, LastOffset)
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
