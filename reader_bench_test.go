package kafka

// Benchmarks of the Reader on an in-process fake broker (repeatable, no
// cluster): records/s and allocations per record for 100 B and 1 KB
// values, one message at a time (FetchMessage) and by batch (FetchBatch,
// FetchBatchInto).
// One op is one record. The fake broker's own work (serving the fetches
// over loopback TCP) is included in the time and allocations.
//
//	go test -run - -bench BenchmarkReader -benchmem

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// rbLog is the number of records in the benchmark's partition; the reader
// starts over from offset 0 at its end.
const rbLog = 20000

func rbSetup(b *testing.B, valueSize int) *Reader {
	c := fakebroker.NewCluster(b, fakebroker.Config{})
	c.CreateTopic("t", 1, 1)
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	recs := make([]protocol.Record, 100)
	for i := range recs {
		recs[i] = protocol.Record{Key: []byte(fmt.Sprintf("key-%06d", i)), Value: value}
	}
	for n := 0; n < rbLog; n += len(recs) {
		c.Append("t", 0, recs...)
	}
	r := NewReader(ReaderConfig{
		Brokers:         c.Addrs(),
		Topic:           "t",
		MaxBytes:        1 << 20,
		MaxWait:         100 * time.Millisecond,
		QueueCapacity:   10000,
		ReadLagInterval: -1,
	})
	b.Cleanup(func() { r.Close() })
	// Warm up: connections, metadata, buffers.
	if _, err := r.FetchMessage(context.Background()); err != nil {
		b.Fatal(err)
	}
	r.SetOffset(0)
	return r
}

func BenchmarkReader(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("FetchMessage/value=%dB", size), func(b *testing.B) {
			rbLoop(b, size, func(r *Reader, ctx context.Context) (int64, int, error) {
				m, err := r.FetchMessage(ctx)
				return m.Offset, 1, err
			})
		})
		b.Run(fmt.Sprintf("FetchBatchInto/value=%dB", size), func(b *testing.B) {
			var batch MessageBatch
			rbLoop(b, size, func(r *Reader, ctx context.Context) (int64, int, error) {
				if err := r.FetchBatchInto(ctx, &batch); err != nil {
					return 0, 0, err
				}
				return batch.Messages[len(batch.Messages)-1].Offset, len(batch.Messages), nil
			})
		})
		b.Run(fmt.Sprintf("FetchBatch/value=%dB", size), func(b *testing.B) {
			rbLoop(b, size, func(r *Reader, ctx context.Context) (int64, int, error) {
				batch, err := r.FetchBatch(ctx)
				if err != nil {
					return 0, 0, err
				}
				return batch.Messages[len(batch.Messages)-1].Offset, len(batch.Messages), nil
			})
		})
	}
}

// rbLoop reads b.N records with read, which returns the last offset it read
// and how many records, starting over at the end of the log.
func rbLoop(b *testing.B, size int, read func(*Reader, context.Context) (last int64, n int, err error)) {
	r := rbSetup(b, size)
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	done := rbCount(b)
	for n := 0; n < b.N; {
		last, k, err := read(r, ctx)
		if err != nil {
			b.Fatal(err)
		}
		n += k
		if last == rbLog-1 {
			r.SetOffset(0)
		}
	}
	done()
}

// rbCount resets the timer and returns a func reporting records/s and
// allocations per record (allocs/op rounds to an integer), fake broker
// included.
func rbCount(b *testing.B) func() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	b.ResetTimer()
	return func() {
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		b.ReportMetric(float64(ms.Mallocs-mallocs)/float64(b.N), "allocs/record")
	}
}

// BenchmarkReaderQueuePop measures the queue's part of FetchMessage: one
// op is one message taken from runs of 1000 queued 100 B records (the
// fetcher's side, pushing the runs, is outside the timer).
//
//	go test -run - -bench BenchmarkReaderQueuePop -benchmem
func BenchmarkReaderQueuePop(b *testing.B) {
	benchQueue(b, func(q *readerQueue, ctx context.Context) (int, error) {
		var m Message
		_, err := q.pop(ctx, &m)
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
				if into {
					batch.empty() // as FetchBatchInto does
				}
				_, err := q.popBatch(ctx, &batch, !into)
				return len(batch.Messages), err
			})
		})
	}
}

// benchRunLen is the records of each run the queue benchmarks push.
const benchRunLen = 1000

// benchSetup sets q up in generation 1 and returns a func making a run of
// benchRunLen records of 100 B (the same records every time).
func benchSetup(b *testing.B, q *readerQueue) func() *queuedRun {
	recs := make([]protocol.Record, benchRunLen)
	for i := range recs {
		recs[i] = protocol.Record{Timestamp: 1_700_000_000_000, Value: make([]byte, 100)}
	}
	run := rqDecoded(b, recs...)
	q.init(100)
	q.reset(1)
	return func() *queuedRun { return run.Slice(0, benchRunLen) }
}

// benchQueue pushes runs of benchRunLen records and takes them with take,
// which returns how many messages it took. The push (one lock per run) is
// inside the timer: stopping the timer for it would cost far more than it
// (testing reads memory statistics at every stop).
func benchQueue(b *testing.B, take func(*readerQueue, context.Context) (int, error)) {
	q := new(readerQueue)
	newRun := benchSetup(b, q)
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
	q := new(readerQueue)
	ctx := benchPushAhead(b, q, benchSetup(b, q))
	b.ReportAllocs()
	b.ResetTimer()
	var m Message
	for n := 0; n < b.N; n++ {
		if _, err := q.pop(ctx, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPushAhead pushes runs into q from another goroutine until the
// benchmark ends: a run, then a wait until only it is left, again, as a
// fetcher pushes them. It returns the context for the taker.
func benchPushAhead(b *testing.B, q *readerQueue, newRun func() *queuedRun) context.Context {
	tp := topicPartition{"t", 0}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() {
		cancel()
		q.close()
	})
	go func() {
		for q.push(1, tp, newRun()) == nil && q.waitTaken(ctx, 1, tp, benchRunLen, func() {}) == nil {
		}
	}()
	return ctx
}

// BenchmarkReaderFetchMessage is BenchmarkReaderQueueHandoff through the
// Reader's whole FetchMessage path (its position in partition mode, the
// group's in group mode): one op is one message.
//
//	go test -run - -bench BenchmarkReaderFetchMessage -benchmem
func BenchmarkReaderFetchMessage(b *testing.B) {
	for _, group := range []bool{false, true} {
		name := "partition"
		if group {
			name = "group"
		}
		b.Run(name, func(b *testing.B) {
			r := &Reader{config: ReaderConfig{Topic: "t"}, started: true, gen: 1, cancel: func() {}}
			if group {
				r.config.GroupID = "g"
				r.group = &readerGroup{r: r, pos: map[topicPartition]*groupPos{}, lastGen: 1}
			}
			ctx := benchPushAhead(b, &r.queue, benchSetup(b, &r.queue))
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				if _, err := r.FetchMessage(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
