package recordqueue

// The errors the queue holds for the application stay bounded while it
// does not read: a failure retried again and again is queued once until
// taken, and no more than maxQueuedErrors wait.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingBudget is a Budget that counts what it holds.
type countingBudget struct{ held int64 }

func (b *countingBudget) Add(n int64)     { b.held += n }
func (b *countingBudget) Release(n int64) { b.held -= n }

// newTestQueue returns a queue of capacity 100 in generation 1, counting
// its runs in budget, whose errors repeat when their texts are equal.
func newTestQueue(budget *countingBudget) *Queue {
	q := new(Queue)
	q.Init(100, budget, func(a, b error) bool { return a.Error() == b.Error() })
	q.Reset(1)
	return q
}

// testRun is a run of n records of t/partition from offset from, each with
// a value of 10 bytes.
func testRun(partition int, from int64, n int) *Run {
	run := &Run{Topic: "t", Partition: partition, bufs: [][]byte{make([]byte, 10*n)}}
	for i := 0; i < n; i++ {
		run.recs = append(run.recs, Record{Offset: from + int64(i), Timestamp: -1, key: span{n: -1}, value: span{off: int32(10 * i), n: 10}})
	}
	run.bytes = int64(10 * n)
	return run
}

// next pops the next record or error of q: its offset.
func next(t *testing.T, q *Queue) (int64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	run, i, err := q.Pop(ctx)
	require.False(t, errors.Is(err, context.DeadlineExceeded), "the queue is empty")
	if err != nil {
		return -1, err
	}
	return run.At(i).Offset, nil
}

func TestQueueCoalescesRepeatedError(t *testing.T) {
	q := newTestQueue(&countingBudget{})
	p0, p1 := TopicPartition{"t", 0}, TopicPartition{"t", 1}
	denied := errors.New("fetching t/0: denied")

	require.NoError(t, q.Push(1, p0, testRun(0, 0, 2)))
	for i := 0; i < 10; i++ {
		require.True(t, q.PushPartitionErr(1, p0, denied))
	}
	assert.Equal(t, 1, q.QueuedErrors(), "ten retries of one failure while the application does not read")
	require.NoError(t, q.Push(1, p0, testRun(0, 2, 1)))
	require.True(t, q.PushPartitionErr(1, p0, denied))
	require.True(t, q.PushPartitionErr(1, p1, denied))
	assert.Equal(t, 3, q.QueuedErrors(), "after records of the partition, and for another partition, the error is queued again")

	// The order of each partition's records and errors is kept.
	for _, want := range []int64{0, 1} {
		off, err := next(t, q)
		require.NoError(t, err)
		assert.Equal(t, want, off)
	}
	_, err := next(t, q)
	require.ErrorIs(t, err, denied)
	assert.Contains(t, err.Error(), "repeated 9 more times")
	off, err := next(t, q)
	require.NoError(t, err)
	assert.Equal(t, int64(2), off)
	_, err = next(t, q)
	require.ErrorIs(t, err, denied)
	assert.Equal(t, denied.Error(), err.Error(), "once: nothing coalesced")
	_, err = next(t, q)
	require.ErrorIs(t, err, denied)

	// Taken: the next occurrence is queued again.
	assert.Zero(t, q.QueuedErrors())
	require.True(t, q.PushPartitionErr(1, p0, denied))
	assert.Equal(t, 1, q.QueuedErrors())
}

func TestQueueBoundsErrors(t *testing.T) {
	q := newTestQueue(&countingBudget{})
	for i := 0; i < maxQueuedErrors+24; i++ {
		require.True(t, q.PushPartitionErr(1, TopicPartition{"t", 0}, fmt.Errorf("failure %d", i)))
	}
	assert.Equal(t, maxQueuedErrors, q.QueuedErrors())
	_, err := next(t, q)
	assert.EqualError(t, err, "failure 0 (24 other errors not queued before it was read)", "the oldest counts what was refused")
	for i := 1; i < maxQueuedErrors; i++ {
		_, err := next(t, q)
		assert.EqualError(t, err, fmt.Sprintf("failure %d", i))
	}
	require.True(t, q.PushPartitionErr(1, TopicPartition{"t", 0}, errors.New("room again")))
	_, err = next(t, q)
	assert.EqualError(t, err, "room again")
	assert.False(t, q.PushPartitionErr(2, TopicPartition{"t", 0}, errors.New("stale")), "another generation's error")
}
