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
	const runLen = 1000
	buf := make([]byte, runLen*100)
	recs := make([]compactRecord, runLen)
	for i := range recs {
		recs[i] = compactRecord{offset: int64(i), timestamp: -1, key: span{n: -1}, value: span{off: int32(i * 100), n: 100}}
	}
	var q readerQueue
	q.init(100)
	q.gen = 1
	tp := topicPartition{"t", 0}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += runLen {
		b.StopTimer()
		run := &queuedRun{topic: "t", recs: recs, bufs: [][]byte{buf}, bytes: int64(len(buf))}
		if err := q.push(1, tp, run); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for i := 0; i < runLen; i++ {
			if _, _, _, err := q.pop(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}
