package kafka

// Benchmarks of the Reader on an in-process fake broker (repeatable, no
// cluster): records/s and allocations per record for 100 B and 1 KB
// values, one message at a time (FetchMessage) and by batch (FetchBatch).
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
			r := rbSetup(b, size)
			ctx := context.Background()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			done := rbCount(b)
			for i := 0; i < b.N; i++ {
				m, err := r.FetchMessage(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if m.Offset == rbLog-1 {
					r.SetOffset(0)
				}
			}
			done()
		})
		b.Run(fmt.Sprintf("FetchBatch/value=%dB", size), func(b *testing.B) {
			r := rbSetup(b, size)
			ctx := context.Background()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			done := rbCount(b)
			for n := 0; n < b.N; {
				batch, err := r.FetchBatch(ctx)
				if err != nil {
					b.Fatal(err)
				}
				n += len(batch.Messages)
				if batch.Messages[len(batch.Messages)-1].Offset == rbLog-1 {
					r.SetOffset(0)
				}
			}
			done()
		})
	}
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
