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

// benchQueue pushes runs of 1000 records of 100 B and takes them with
// take, which returns how many messages it took. The push (one lock per
// 1000 records) is inside the timer: stopping the timer for it would cost
// far more than it (testing reads memory statistics at every stop).
func benchQueue(b *testing.B, take func(*readerQueue, context.Context) (int, error)) {
	const runLen = 1000
	buf := make([]byte, runLen*100)
	recs := make([]compactRecord, runLen)
	for i := range recs {
		recs[i] = compactRecord{offset: int64(i), timestamp: 1_700_000_000_000, key: span{n: -1}, value: span{off: int32(i * 100), n: 100}}
	}
	var q readerQueue
	q.init(100)
	q.gen = 1
	tp := topicPartition{"t", 0}
	ctx := context.Background()
	runs := make([]queuedRun, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += runLen {
		run := &runs[(n/runLen)%len(runs)]
		*run = queuedRun{topic: "t", recs: recs, bufs: [][]byte{buf}, bytes: int64(len(buf))}
		if err := q.push(1, tp, run); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < runLen; {
			k, err := take(&q, ctx)
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
	const runLen = 1000
	buf := make([]byte, runLen*100)
	recs := make([]compactRecord, runLen)
	for i := range recs {
		recs[i] = compactRecord{offset: int64(i), timestamp: 1_700_000_000_000, key: span{n: -1}, value: span{off: int32(i * 100), n: 100}}
	}
	var q readerQueue
	q.init(100)
	q.gen = 1
	tp := topicPartition{"t", 0}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			run := &queuedRun{topic: "t", recs: recs, bufs: [][]byte{buf}, bytes: int64(len(buf))}
			if q.push(1, tp, run) != nil || q.waitTaken(ctx, 1, tp, runLen, func() {}) != nil {
				return
			}
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
