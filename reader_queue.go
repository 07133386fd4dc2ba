package kafka

import (
	"context"
	"errors"
	"time"

	"github.com/rackfetch/kafka-go/internal/recordqueue"
)

// The Reader's record path is internal/recordqueue: fetched partitions
// decoded into runs of compact records, queued until the application takes
// them. This file speaks the root's types to it: Messages made from the
// records, partitions named by topicPartition, Kafka errors by Error.

// readerQueue is the Reader's queue of fetched runs.
type readerQueue struct{ recordqueue.Queue }

// queuedRun is records of one partition from one fetch, or an error.
type queuedRun = recordqueue.Run

func (q *readerQueue) init(capacity int) { q.Init(capacity, readersBudget, sameError) }

func (q *readerQueue) len() int { return q.Len() }

func (q *readerQueue) bufferedBytes() int64 { return q.BufferedBytes() }

func (q *readerQueue) reset(gen int64) { q.Reset(gen) }

func (q *readerQueue) close() { q.Close() }

func (q *readerQueue) push(gen int64, tp topicPartition, run *queuedRun) error {
	return q.Push(gen, recordqueue.TopicPartition{Topic: tp.topic, Partition: tp.partition}, run)
}

func (q *readerQueue) waitTaken(ctx context.Context, gen int64, tp topicPartition, limit int, before func()) error {
	return q.WaitTaken(ctx, gen, recordqueue.TopicPartition{Topic: tp.topic, Partition: tp.partition}, limit, before)
}

func (q *readerQueue) pushErr(gen int64, err error) bool { return q.PushErr(gen, err) }

func (q *readerQueue) pushPartitionErr(gen int64, tp topicPartition, err error) bool {
	return q.PushPartitionErr(gen, recordqueue.TopicPartition{Topic: tp.topic, Partition: tp.partition}, err)
}

// unpop puts m, just popped from the run from, back at the head of the
// queue while its generation lasts.
func (q *readerQueue) unpop(from *queuedRun, m Message) { q.Unpop(from, m.Offset) }

// pop takes the next message into *m and returns the run it came from.
func (q *readerQueue) pop(ctx context.Context, m *Message) (*queuedRun, error) {
	run, i, err := q.Pop(ctx)
	if err != nil {
		return nil, err
	}
	fillMessage(run, i, m)
	return run, nil
}

// popBatch fills b with the rest of the first run, at most QueueCapacity
// messages of it, into a fresh array or into b.Messages' own, and returns
// the run.
func (q *readerQueue) popBatch(ctx context.Context, b *MessageBatch, fresh bool) (*queuedRun, error) {
	run, i, end, err := q.PopBatch(ctx)
	if err != nil {
		return nil, err
	}
	n := end - i
	msgs := b.Messages
	switch {
	case fresh:
		msgs = make([]Message, n)
	case cap(msgs) < n:
		// Room for a batch of QueueCapacity, so it does not grow again
		// (up to a thousand messages, 150 KB).
		msgs = make([]Message, n, max(n, min(q.Capacity(), 1000)))
	default:
		msgs = msgs[:n] // emptied by FetchBatchInto
	}
	for k := range msgs {
		fillMessage(run, i+k, &msgs[k])
	}
	*b = MessageBatch{Topic: run.Topic, Partition: run.Partition, HighWaterMark: run.HW, Messages: msgs}
	return run, nil
}

// fillMessage makes *m the Message of record i of run. It stores field by
// field into the caller's Message (no Message-sized temporary to copy:
// those copies were half of FetchMessage's own cost).
func fillMessage(run *queuedRun, i int, m *Message) {
	rec := run.At(i)
	m.Topic = run.Topic
	m.Partition = run.Partition
	m.Offset = rec.Offset
	m.HighWaterMark = run.HW
	m.Key = run.Key(rec)
	m.Value = run.Value(rec)
	m.Headers = run.Headers(rec)
	m.WriterData = nil
	m.Time = time.Time{}
	if rec.Timestamp >= 0 {
		m.Time = time.UnixMilli(rec.Timestamp)
	}
}

// sameError reports whether b repeats a: the same Kafka error code, or
// else the same text (the same failure at the same offset).
func sameError(a, b error) bool {
	var ka, kb Error
	if errors.As(a, &ka) && errors.As(b, &kb) {
		return ka == kb
	}
	return a.Error() == b.Error()
}

// kafkaError is the error of a Kafka error code.
func kafkaError(code int16) error { return Error(code) }
