package producer

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testWrite writes one message per key synchronously, to partition
// key-'0' of topic t, and returns the errors of the messages.
func testWrite(t *testing.T, c *Core[testMsg], keys ...string) []error {
	t.Helper()
	msgs := make([]testMsg, len(keys))
	parts := make([]TopicPartition, len(keys))
	for i, k := range keys {
		msgs[i] = testMsg{Value: []byte(k)}
		parts[i] = TopicPartition{"t", int(k[0] - '0')}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs, err := Wait(ctx, c.Enqueue(msgs, parts, true))
	require.NoError(t, err)
	return errs
}

// With acks=all, batches carry a producer id and per-partition sequence
// numbers; a retry keeps them (so a broker can drop a duplicate). With
// acks=1 they carry none.
func TestIdempotentNumbering(t *testing.T) {
	set := &testSettings{batchSize: 100, batchBytes: 1 << 20}
	set.setAcks(-1)
	c, tc := newTestCore(t, set)
	require.Nil(t, testWrite(t, c, "0", "0", "1"))
	tc.script(testStep{code: errRequestTimedOut})
	require.Nil(t, testWrite(t, c, "0", "1", "1", "1"))
	require.Nil(t, testWrite(t, c, "0"))

	// Partition 0: 2 records, then 1 (sent twice: the retry), then 1.
	assert.Equal(t, []testBatch{{1000, 0, 2}, {1000, 2, 1}, {1000, 2, 1}, {1000, 3, 1}}, tc.numbering(0))
	assert.Equal(t, []testBatch{{1000, 0, 1}, {1000, 1, 3}, {1000, 1, 3}}, tc.numbering(1))
	assert.Equal(t, 1, tc.inits, "InitProducerId requests")

	set.setAcks(1)
	require.Nil(t, testWrite(t, c, "0"))
	b := tc.numbering(0)
	assert.Equal(t, testBatch{-1, -1, 1}, b[len(b)-1], "acks=1: not numbered")
}

// A batch refused for its sequence (OutOfOrderSequenceNumber) is numbered
// again under a new producer id; a batch failing for good leaves a hole,
// so the next batch takes a new producer id too. DuplicateSequenceNumber
// means the batch was written before.
func TestIdempotentRecovery(t *testing.T) {
	var offsets []int64
	set := &testSettings{batchSize: 100, batchBytes: 1 << 20}
	set.completion = func(msgs []testMsg, err error) { offsets = append(offsets, msgs[0].Offset) }
	set.setAcks(-1)
	c, tc := newTestCore(t, set)
	require.Nil(t, testWrite(t, c, "0a"))
	tc.script(testStep{code: testError(codeOutOfOrderSequenceNumber)})
	require.Nil(t, testWrite(t, c, "0b"))
	tc.script(testStep{code: errInvalidRecord})
	errs := testWrite(t, c, "0refused")
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], errInvalidRecord)
	require.Nil(t, testWrite(t, c, "0c"))
	tc.script(testStep{code: testError(codeDuplicateSequenceNumber)})
	require.Nil(t, testWrite(t, c, "0dup"))

	assert.Equal(t, int64(-1), offsets[len(offsets)-1], "offset after DuplicateSequenceNumber: unknown")
	// a: 1000/0; b refused at 1000/1, then 1001/0; "refused" at 1001/1
	// fails for good; c at 1002/0; dup at 1002/1.
	assert.Equal(t, []testBatch{{1000, 0, 1}, {1000, 1, 1}, {1001, 0, 1}, {1001, 1, 1}, {1002, 0, 1}, {1002, 1, 1}}, tc.numbering(0))
	assert.Equal(t, int64(3), tc.appended(0), "a, b and c are in the log")
}
