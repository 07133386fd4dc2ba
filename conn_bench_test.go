package kafka

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Benchmarks of Conn through the in-process fake broker. The fake runs in
// the same process, so allocations and CPU counted here include its side
// (per fetch and per produce, not per record).

const (
	benchRecordsPerOp    = 1000
	benchRecordsPerBatch = 100
)

// BenchmarkConnReadBatch reads benchRecordsPerOp records per op with
// ReadBatch and ReadMessage, as a consumer loop does.
func BenchmarkConnReadBatch(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"1KB", 1024}, {"100B", 100}} {
		size := size
		b.Run(size.name, func(b *testing.B) { benchConnReadBatch(b, size.bytes) })
	}
}

func benchConnReadBatch(b *testing.B, valueSize int) {
	c := ctCluster(b, fakebroker.Config{}, 1, 1)
	value := bytes.Repeat([]byte("v"), valueSize)
	recs := make([]protocol.Record, benchRecordsPerBatch)
	for i := range recs {
		recs[i] = protocol.Record{Key: []byte("key"), Value: value}
	}
	for n := 0; n < benchRecordsPerOp; n += benchRecordsPerBatch {
		c.Append(ctTopic, 0, recs...)
	}
	conn := ctDial(b, nil, c, 0)
	read := func() {
		if _, err := conn.Seek(0, SeekAbsolute|SeekDontCheck); err != nil {
			b.Fatal(err)
		}
		for n := 0; n < benchRecordsPerOp; {
			batch := conn.ReadBatch(1, 256<<10)
			for {
				m, err := batch.ReadMessage()
				if err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					break
				}
				if len(m.Value) != valueSize {
					b.Fatalf("value of %d bytes", len(m.Value))
				}
				n++
			}
			if err := batch.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	read() // warm up: topic id, buffers

	b.SetBytes(int64(benchRecordsPerOp * valueSize))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		read()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	records := float64(b.N) * benchRecordsPerOp
	b.ReportMetric(records/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/records, "allocs/record")
}

// BenchmarkConnWriteMessages writes batches of 100 messages of 100 bytes.
// The broker answers at once without keeping the records, so the
// benchmark measures the client's encoding and round trip.
func BenchmarkConnWriteMessages(b *testing.B) {
	const perOp, size = 100, 100
	c := ctCluster(b, fakebroker.Config{}, 1, 1)
	var next int64
	c.Broker(1).Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		r := req.(*protocol.ProduceRequest)
		base := next
		next += perOp
		return &protocol.ProduceResponse{Topics: []protocol.ProduceResponseTopic{{
			Name: r.Topics[0].Name,
			Partitions: []protocol.ProduceResponsePartition{{
				Index: r.Topics[0].Partitions[0].Index, BaseOffset: base, LogAppendTimeMs: -1, LogStartOffset: 0,
			}},
		}}}, fakebroker.Action{}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := (&Dialer{}).DialLeader(ctx, "tcp", c.Broker(1).Addr(), ctTopic, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	msgs := make([]Message, perOp)
	for i := range msgs {
		msgs[i] = Message{Key: []byte("key"), Value: bytes.Repeat([]byte("v"), size)}
	}

	b.SetBytes(perOp * (size + 3))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := conn.WriteMessages(msgs...); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)*perOp/b.Elapsed().Seconds(), "msgs/s")
}
