package kafka

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/internal/recordqueue"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// rqDecoded returns the run of t/3 decoded from one batch of recs, from
// offset 7 to the high watermark after the last.
func rqDecoded(tb testing.TB, recs ...protocol.Record) *queuedRun {
	tb.Helper()
	bb := protocol.NewRecordBatchBuilder()
	bb.BaseOffset = 7
	for _, rec := range recs {
		bb.Add(rec)
	}
	data, err := bb.AppendTo(nil)
	require.NoError(tb, err)
	dec := recordqueue.Decoder{KafkaError: kafkaError}
	hw := int64(7 + len(recs))
	p := &protocol.FetchResponsePartition{HighWatermark: hw, LastStableOffset: hw, Records: data}
	fb, err := dec.Decode(p, "t", 3, 7, int8(ReadUncommitted), 1, recordqueue.Limits{MaxBytes: len(data), Asked: len(data)})
	require.NoError(tb, err)
	require.Equal(tb, len(recs), fb.Records())
	return fb.Run
}

// fillMessage writes every field of the Message it is given: FetchBatchInto
// reuses the caller's Messages, so nothing of the previous message may
// survive.
func TestFillMessageOverwritesEveryField(t *testing.T) {
	run := rqDecoded(t,
		protocol.Record{Timestamp: 1_700_000_000_000, Key: []byte("k1"), Value: []byte("v1"), Headers: []Header{{Key: "h", Value: []byte("x")}}},
		protocol.Record{Timestamp: -1, Value: []byte("v2")},
	)
	var m Message
	fillMessage(run, 0, &m)
	assert.Equal(t, Message{
		Topic: "t", Partition: 3, Offset: 7, HighWaterMark: 9,
		Key: []byte("k1"), Value: []byte("v1"),
		Headers: []Header{{Key: "h", Value: []byte("x")}},
		Time:    time.UnixMilli(1_700_000_000_000),
	}, m)

	m.WriterData = "left by the application"
	fillMessage(run, 1, &m)
	assert.Equal(t, Message{Topic: "t", Partition: 3, Offset: 8, HighWaterMark: 9, Value: []byte("v2")}, m)
}

// An error repeats a queued one with the same Kafka error code, whatever
// its text, or else with the same text.
func TestSameError(t *testing.T) {
	assert.True(t, sameError(fmt.Errorf("fetching t/0 at offset 1: %w", TopicAuthorizationFailed), fmt.Errorf("fetching t/0 at offset 2: %w", TopicAuthorizationFailed)))
	assert.False(t, sameError(fmt.Errorf("fetching t/0: %w", TopicAuthorizationFailed), fmt.Errorf("fetching t/0: %w", OffsetOutOfRange)))
	assert.True(t, sameError(errors.New("failure"), errors.New("failure")))
	assert.False(t, sameError(errors.New("failure 1"), errors.New("failure 2")))
}

// A message whose commit fails in ReadMessage is put back: the next
// ReadMessage returns it again, same bytes, and the rest follows in order.
func TestReaderReadMessageAgainAfterFailedCommit(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 4)
	r := rtGroupReader(t, c, "rq-unpop", nil)
	ctx := rtCtx(t)
	m, err := r.ReadMessage(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(0), m.Offset)

	b := c.Broker(1)
	b.Handle(protocol.OffsetCommit, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := b.Default(req, hdr).(*protocol.OffsetCommitResponse)
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = int16(OffsetMetadataTooLarge)
			}
		}
		return resp, fakebroker.Action{}
	})
	_, err = r.ReadMessage(ctx)
	require.ErrorIs(t, err, OffsetMetadataTooLarge)
	b.Handle(protocol.OffsetCommit, nil)

	for want := int64(1); want < 4; want++ {
		m, err := r.ReadMessage(ctx)
		require.NoError(t, err)
		assert.Equal(t, want, m.Offset)
		assert.Equal(t, fmt.Sprintf("v%d", want), string(m.Value))
	}
	off, ok := c.Committed("rq-unpop", "t", 0)
	require.True(t, ok)
	assert.Equal(t, int64(4), off)
}

// The errors the Reader queues for the application stay bounded while it
// does not read: a failure retried again and again is queued once until
// taken (internal/recordqueue tests the queue's bounds).

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
	assert.Equal(t, 1, r.queue.QueuedErrors(), "after %d denied fetches", b.Requests(protocol.Fetch))

	_, err = r.FetchMessage(ctx)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
	// Taken: the next denied fetch queues it again.
	_, err = r.FetchMessage(ctx)
	require.ErrorIs(t, err, TopicAuthorizationFailed)
}
