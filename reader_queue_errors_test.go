package kafka

// The errors the Reader queues for the application stay bounded while it
// does not read: a failure retried again and again is queued once until
// taken, and no more than maxQueuedErrors wait.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rtQueuedErrors counts the errors waiting in q.
func rtQueuedErrors(q *readerQueue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, run := range q.runs[q.head:] {
		if run.err != nil {
			n++
		}
	}
	return n
}

// rqRun is a run of n records of t/partition from offset from.
func rqRun(partition int, from int64, n int) *queuedRun {
	run := &queuedRun{topic: "t", partition: partition}
	for i := 0; i < n; i++ {
		run.recs = append(run.recs, compactRecord{offset: from + int64(i), timestamp: -1, key: span{n: -1}, value: span{n: -1}})
	}
	return run
}

// rqNext pops the next message or error of q.
func rqNext(t *testing.T, q *readerQueue) (Message, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var m Message
	_, err := q.pop(ctx, &m)
	require.False(t, errors.Is(err, context.DeadlineExceeded), "the queue is empty")
	return m, err
}

func TestReaderQueueCoalescesRepeatedError(t *testing.T) {
	q := new(readerQueue)
	q.init(100)
	q.gen = 1
	p0, p1 := topicPartition{"t", 0}, topicPartition{"t", 1}
	denied := fmt.Errorf("fetching t/0: %w", TopicAuthorizationFailed)

	require.NoError(t, q.push(1, p0, rqRun(0, 0, 2)))
	for i := 0; i < 10; i++ {
		require.True(t, q.pushPartitionErr(1, p0, denied))
	}
	assert.Equal(t, 1, rtQueuedErrors(q), "ten retries of one failure while the application does not read")
	require.NoError(t, q.push(1, p0, rqRun(0, 2, 1)))
	require.True(t, q.pushPartitionErr(1, p0, denied))
	require.True(t, q.pushPartitionErr(1, p1, denied))
	assert.Equal(t, 3, rtQueuedErrors(q), "after records of the partition, and for another partition, the error is queued again")

	// The order of each partition's records and errors is kept.
	for _, want := range []int64{0, 1} {
		m, err := rqNext(t, q)
		require.NoError(t, err)
		assert.Equal(t, want, m.Offset)
	}
	_, err := rqNext(t, q)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
	assert.Contains(t, err.Error(), "repeated 9 more times")
	m, err := rqNext(t, q)
	require.NoError(t, err)
	assert.Equal(t, int64(2), m.Offset)
	_, err = rqNext(t, q)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
	assert.Equal(t, denied.Error(), err.Error(), "once: nothing coalesced")
	_, err = rqNext(t, q)
	require.ErrorIs(t, err, TopicAuthorizationFailed)

	// Taken: the next occurrence is queued again.
	assert.Zero(t, rtQueuedErrors(q))
	require.True(t, q.pushPartitionErr(1, p0, denied))
	assert.Equal(t, 1, rtQueuedErrors(q))
}

func TestReaderQueueBoundsErrors(t *testing.T) {
	q := new(readerQueue)
	q.init(100)
	q.gen = 1
	for i := 0; i < maxQueuedErrors+24; i++ {
		require.True(t, q.pushPartitionErr(1, topicPartition{"t", 0}, fmt.Errorf("failure %d", i)))
	}
	assert.Equal(t, maxQueuedErrors, rtQueuedErrors(q))
	_, err := rqNext(t, q)
	assert.EqualError(t, err, "failure 0 (24 other errors not queued before it was read)", "the oldest counts what was refused")
	for i := 1; i < maxQueuedErrors; i++ {
		_, err := rqNext(t, q)
		assert.EqualError(t, err, fmt.Sprintf("failure %d", i))
	}
	require.True(t, q.pushPartitionErr(1, topicPartition{"t", 0}, errors.New("room again")))
	_, err = rqNext(t, q)
	assert.EqualError(t, err, "room again")
	assert.False(t, q.pushPartitionErr(2, topicPartition{"t", 0}, errors.New("stale")), "another generation's error")
}

// A partition the Reader may not read: every fetch answers
// TOPIC_AUTHORIZATION_FAILED, which no retry fixes and which the
// application is told of; while it does not read, one error waits.
func TestReaderCoalescesRepeatedFetchError(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 4)
	b := c.Broker(1)
	b.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := b.Default(req, hdr).(*protocol.FetchResponse)
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				p := &resp.Topics[i].Partitions[j]
				p.ErrorCode, p.Records = int16(TopicAuthorizationFailed), nil
			}
		}
		return resp, fakebroker.Action{}
	})
	r := rtReader(t, c, nil)
	ctx := rtCtx(t)
	_, err := r.beforeRead() // the Reader starts reading
	require.NoError(t, err)
	select {
	case <-b.Await(protocol.Fetch, 10):
	case <-ctx.Done():
		t.Fatalf("%d fetches", b.Requests(protocol.Fetch))
	}
	assert.Equal(t, 1, rtQueuedErrors(&r.queue), "after %d denied fetches", b.Requests(protocol.Fetch))

	_, err = r.FetchMessage(ctx)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
	// Taken: the next denied fetch queues it again.
	_, err = r.FetchMessage(ctx)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
}
