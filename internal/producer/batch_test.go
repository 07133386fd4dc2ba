package producer

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testMessages(n int, value string) ([]testMsg, []TopicPartition) {
	msgs := make([]testMsg, n)
	parts := make([]TopicPartition, n)
	for i := range msgs {
		msgs[i] = testMsg{Value: []byte(value + strconv.Itoa(i))}
		parts[i] = TopicPartition{"t", 0}
	}
	return msgs, parts
}

// A message that would take a batch past BatchBytes starts the next
// batch: each message is in exactly one batch, in order, and the
// positions handed back locate it there.
func TestEnqueueStartsNextBatchPastBatchBytes(t *testing.T) {
	var written []testMsg
	// Two messages of 2-byte values fit, not a third.
	set := &testSettings{batchSize: 100, batchBytes: 3*(36+2) - 1}
	set.completion = func(msgs []testMsg, err error) {
		require.NoError(t, err)
		written = append(written, msgs...)
	}
	c, tc := newTestCore(t, set)
	msgs, parts := testMessages(5, "v")
	refs := c.Enqueue(msgs, parts, true)
	require.Len(t, refs, 5)
	assert.Equal(t, []int{0, 1, 0, 1, 0}, []int{refs[0].pos, refs[1].pos, refs[2].pos, refs[3].pos, refs[4].pos})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs, err := Wait(ctx, refs)
	require.NoError(t, err)
	require.Nil(t, errs)

	assert.Equal(t, [][]int32{{2}, {2}, {1}}, tc.batchSizes(), "records per batch, request by request")
	require.Len(t, written, 5)
	for i, m := range written {
		assert.Equal(t, "v"+strconv.Itoa(i), string(m.Value))
		assert.Equal(t, int64(i), m.Offset)
		assert.Equal(t, "t", m.Topic)
	}
	for i := range msgs {
		assert.Empty(t, msgs[i].Topic, "the caller's messages are left as they are")
	}
}

// Enqueue copies each message into its batch once and nothing else: the
// caller's messages stay where they are (a slice on the caller's stack
// is not moved to the heap).
func TestEnqueueKeepsCallersMessagesOffTheHeap(t *testing.T) {
	c, _ := newTestCore(t, &testSettings{batchSize: 1 << 30, batchBytes: 1 << 40})
	parts := []TopicPartition{{"t", 0}}
	value := []byte("v")
	allocs := testing.AllocsPerRun(1000, func() {
		var one [1]testMsg
		one[0].Value = value
		c.Enqueue(one[:], parts, false) // appended to the open batch
	})
	// The batch's slice grows now and then: less than one per call.
	assert.Zero(t, allocs)
	assert.Equal(t, 1001, c.openMessages("t", 0))
}

func TestAddSeqWraps(t *testing.T) {
	assert.Equal(t, int32(5), addSeq(2, 3))
	assert.Equal(t, int32(0), addSeq(2147483647, 1))
	assert.Equal(t, int32(2), addSeq(2147483646, 4))
}
