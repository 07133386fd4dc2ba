package recordqueue

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A record put back (its commit failed) is the next one taken, with the
// same bytes; it counts in the queue's bytes again but not a second time
// in the process-wide budget, which its run gave back when it was taken.
func TestQueueUnpop(t *testing.T) {
	budget := &countingBudget{}
	q := newTestQueue(budget)
	tp := TopicPartition{"t", 0}
	require.NoError(t, q.Push(1, tp, testRun(0, 5, 3)))
	assert.Equal(t, int64(30), budget.held)

	ctx := context.Background()
	var last *Run
	for want := int64(5); want < 8; want++ {
		run, i, err := q.Pop(ctx)
		require.NoError(t, err)
		require.Equal(t, want, run.At(i).Offset)
		last = run
	}
	assert.Zero(t, budget.held, "the run was taken whole")
	assert.Zero(t, q.Len())

	q.Unpop(last, 6)
	assert.Equal(t, 1, q.Len())
	assert.Equal(t, int64(10), q.BufferedBytes())
	assert.Zero(t, budget.held, "a record put back is not counted again")
	run, i, err := q.Pop(ctx)
	require.NoError(t, err)
	rec := run.At(i)
	assert.Equal(t, int64(6), rec.Offset)
	assert.Equal(t, last.Value(last.At(1)), run.Value(rec))
	assert.Zero(t, q.Len())
	assert.Zero(t, q.BufferedBytes())
	assert.Zero(t, budget.held, "nothing given back twice")

	q.Unpop(last, 42) // not a record of the run
	assert.Zero(t, q.Len())
	q.Reset(2)
	q.Unpop(last, 6) // an earlier generation's
	assert.Zero(t, q.Len())
}

// PopBatch hands out a run in pieces of at most the queue's capacity; a
// new generation drops what is queued and gives its bytes back; a closed
// queue ends the reads.
func TestQueuePopBatchResetClose(t *testing.T) {
	budget := &countingBudget{}
	q := newTestQueue(budget)
	tp := TopicPartition{"t", 0}
	require.NoError(t, q.Push(1, tp, testRun(0, 0, 250)))
	ctx := context.Background()
	for _, want := range [][2]int{{0, 100}, {100, 200}, {200, 250}} {
		_, i, j, err := q.PopBatch(ctx)
		require.NoError(t, err)
		assert.Equal(t, want, [2]int{i, j})
	}
	assert.Zero(t, budget.held)

	require.NoError(t, q.Push(1, tp, testRun(0, 250, 5)))
	q.Reset(2)
	assert.Zero(t, q.Len())
	assert.Zero(t, budget.held, "dropped by the new generation")
	assert.ErrorIs(t, q.Push(1, tp, testRun(0, 255, 1)), errStaleGeneration)

	q.Close()
	_, _, err := q.Pop(ctx)
	assert.ErrorIs(t, err, io.EOF)
	assert.ErrorIs(t, q.Push(2, tp, testRun(0, 255, 1)), io.ErrClosedPipe)
}
