package kafka

// Benchmarks of the Writer on an in-process fake broker (repeatable, no
// cluster). The fake answers produce requests without storing the records,
// so memory stays flat whatever b.N; its decoding of each request over
// loopback TCP is included in the time.
//
//	go test -run - -bench BenchmarkWriter -benchmem
//
// Records: records/s writing 100 messages per synchronous call, and with
// many goroutines writing one message each (batching while in flight).
// LoneWrite: one op is one synchronous WriteMessages of a single message,
// so ns/op is the latency a lone write sees (BatchTimeout is never waited).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

func wbSetup(b *testing.B, partitions int) *Writer {
	c := fakebroker.NewCluster(b, fakebroker.Config{})
	c.CreateTopic("t", partitions, 1)
	wtProducerIDs(c)
	var offset int64
	c.Broker(1).Handle(protocol.Produce, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		pr := req.(*protocol.ProduceRequest)
		resp := &protocol.ProduceResponse{}
		for _, t := range pr.Topics {
			rt := protocol.ProduceResponseTopic{Name: t.Name}
			for _, p := range t.Partitions {
				h, err := protocol.ParseRecordBatchHeader(p.Records)
				code := int16(0)
				if err != nil {
					code = int16(InvalidMessage)
				}
				rt.Partitions = append(rt.Partitions, protocol.ProduceResponsePartition{Index: p.Index, ErrorCode: code, BaseOffset: offset, LogAppendTimeMs: -1})
				offset += int64(h.NumRecords)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if pr.Acks == 0 {
			return nil, fakebroker.Action{}
		}
		return resp, fakebroker.Action{}
	})
	w := &Writer{Addr: TCP(c.Addrs()...), Topic: "t", RequiredAcks: RequireOne, Transport: &Transport{}}
	b.Cleanup(func() { w.Close() })
	// Warm up: metadata, connections.
	if err := w.WriteMessages(context.Background(), Message{Value: []byte("warm")}); err != nil {
		b.Fatal(err)
	}
	return w
}

func wbMessages(n, size int) []Message {
	value := make([]byte, size)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{Key: []byte(fmt.Sprintf("key-%06d", i)), Value: value}
	}
	return msgs
}

func BenchmarkWriterRecords(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("calls-of-100/value=%dB", size), func(b *testing.B) {
			w := wbSetup(b, 4)
			msgs := wbMessages(100, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			start := time.Now()
			b.ResetTimer()
			for n := 0; n < b.N; n += len(msgs) {
				chunk := msgs
				if rest := b.N - n; rest < len(chunk) {
					chunk = chunk[:rest]
				}
				if err := w.WriteMessages(ctx, chunk...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
		b.Run(fmt.Sprintf("parallel-single/value=%dB", size), func(b *testing.B) {
			w := wbSetup(b, 4)
			msg := wbMessages(1, size)[0]
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.SetParallelism(32) // many goroutines per CPU, each writing alone
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := w.WriteMessages(ctx, msg); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
	}
}

func BenchmarkWriterLoneWrite(b *testing.B) {
	ctx := context.Background()
	for _, acks := range []RequiredAcks{RequireAll, RequireOne, RequireNone} {
		b.Run("acks="+acks.String(), func(b *testing.B) {
			w := wbSetup(b, 1)
			w.RequiredAcks = acks
			msg := Message{Key: []byte("k"), Value: []byte("a lone message")}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.WriteMessages(ctx, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
