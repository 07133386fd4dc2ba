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
