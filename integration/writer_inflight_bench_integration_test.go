package integration

import (
	"context"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

// BenchmarkWriterIntegrationConcurrentCalls measures a Writer the way
// services use one: a goroutine per partition (six partitions led in racks
// a, b, c, a, b, c), each making synchronous calls of 10 messages of 100
// bytes, RequireAll, other settings at their defaults. One op is one
// message. Besides records/s it reports the produce requests per second
// and per record and the connections the Transport opened, which the
// requests a Writer keeps in flight per broker trade against each other.
//
//	go test -run - -bench WriterIntegrationConcurrentCalls -count 5 ./integration/
func BenchmarkWriterIntegrationConcurrentCalls(b *testing.B) {
	c, topic := wrBenchTopic(b)

	var dials atomic.Int64
	d := &net.Dialer{}
	w := &kafka.Writer{
		Addr:         kafka.TCP(c.Brokers...),
		Topic:        topic,
		RequiredAcks: kafka.RequireAll,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int {
			p, _ := strconv.Atoi(string(m.Key))
			return p
		}),
		Transport: &kafka.Transport{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		}},
	}
	defer w.Close()

	const partitions, perCall = 6, 10
	value := make([]byte, 100)
	calls := make([][]kafka.Message, partitions)
	for p := range calls {
		calls[p] = make([]kafka.Message, perCall)
		for i := range calls[p] {
			calls[p][i] = kafka.Message{Key: []byte(strconv.Itoa(p)), Value: value}
		}
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for p := range calls { // warm up: metadata, connections, producer id
		for w.WriteMessages(ctx, calls[p]...) != nil {
			if time.Now().After(deadline) {
				b.Fatal("the topic never took writes")
			}
		}
	}
	w.Stats() // resets the counters
	dials0 := dials.Load()

	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	errs := make(chan error, partitions)
	b.ResetTimer()
	start := time.Now()
	for p := range calls {
		wg.Add(1)
		go func(msgs []kafka.Message) {
			defer wg.Done()
			for left.Add(-perCall) > -perCall {
				if err := w.WriteMessages(ctx, msgs...); err != nil {
					errs <- err
					return
				}
			}
		}(calls[p])
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	st := w.Stats()
	b.ReportMetric(float64(st.Messages)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(st.Writes)/elapsed.Seconds(), "requests/s")
	b.ReportMetric(float64(st.Writes)/float64(st.Messages), "requests/record")
	b.ReportMetric(float64(dials.Load()-dials0), "dials")
}
