package kafka

import (
	"context"
	"testing"
)

// BenchmarkReaderQueuePop measures the queue's part of FetchMessage: one
// op is one message taken from runs of 1000 queued 100 B records (the
// fetcher's side, pushing the runs, is outside the timer).
//
//	go test -run - -bench BenchmarkReaderQueuePop -benchmem
func BenchmarkReaderQueuePop(b *testing.B) {
	benchQueue(b, func(q *readerQueue, ctx context.Context) (int, error) {
		var m Message
		_, _, err := q.pop(ctx, &m)
		return 1, err
	})
}

// BenchmarkReaderQueuePopBatch is the same for FetchBatch (a fresh array
// per batch) and FetchBatchInto (the caller's array): one op is still one
// message, in batches of QueueCapacity (100).
func BenchmarkReaderQueuePopBatch(b *testing.B) {
	for _, into := range []bool{false, true} {
		name := "FetchBatch"
		if into {
			name = "FetchBatchInto"
		}
		b.Run(name, func(b *testing.B) {
			var batch MessageBatch
			benchQueue(b, func(q *readerQueue, ctx context.Context) (int, error) {
				_, err := q.popBatch(ctx, &batch, !into)
				return len(batch.Messages), err
			})
		})
	}
}

// benchRunLen is the records of each run the queue benchmarks push.
const benchRunLen = 1000

// benchSetup returns a queue in generation 1 and a func making a run of
// benchRunLen records of 100 B (the same records every time).
func benchSetup() (*readerQueue, func() *queuedRun) {
	buf := make([]byte, benchRunLen*100)
	recs := make([]compactRecord, benchRunLen)
	for i := range recs {
		recs[i] = compactRecord{offset: int64(i), timestamp: 1_700_000_000_000, key: span{n: -1}, value: span{off: int32(i * 100), n: 100}}
	}
	q := new(readerQueue)
	q.init(100)
	q.gen = 1
	return q, func() *queuedRun {
		return &queuedRun{topic: "t", recs: recs, bufs: [][]byte{buf}, bytes: int64(len(buf))}
	}
}

// benchQueue pushes runs of benchRunLen records and takes them with take,
// which returns how many messages it took. The push (one lock per run) is
// inside the timer: stopping the timer for it would cost far more than it
// (testing reads memory statistics at every stop).
func benchQueue(b *testing.B, take func(*readerQueue, context.Context) (int, error)) {
	q, newRun := benchSetup()
	tp := topicPartition{"t", 0}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += benchRunLen {
		if err := q.push(1, tp, newRun()); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < benchRunLen; {
			k, err := take(q, ctx)
			if err != nil {
				b.Fatal(err)
			}
			i += k
		}
	}
}

// BenchmarkReaderQueueHandoff is BenchmarkReaderQueuePop with the runs
// pushed by another goroutine, one run ahead as a fetcher pushes them
// (push, then wait until the partition holds no more than that run): the
// queue's state moves between cores as it does under a Reader.
func BenchmarkReaderQueueHandoff(b *testing.B) {
	q, newRun := benchSetup()
	tp := topicPartition{"t", 0}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Push a run, wait until only it is left, again, until closed.
		for q.push(1, tp, newRun()) == nil && q.waitTaken(ctx, 1, tp, benchRunLen, func() {}) == nil {
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	var m Message
	for n := 0; n < b.N; n++ {
		if _, _, err := q.pop(ctx, &m); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	q.close()
}
