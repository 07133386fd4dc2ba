package integration

import (
	"context"
	"syscall"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// BenchmarkWriterIntegrationRack compares a Writer with Rack "b" to the same Writer without a rack on the
// real cluster (a topic of six partitions led in racks a, b, c, a, b, c): one op is one keyless message of
// 100 bytes, written in synchronous calls of 1000, RequireAll, other settings at their defaults. It reports
// records/s and the client's CPU time per record (user + system, this process only).
//
//	go test -run - -bench WriterIntegrationRack -count 5 ./integration/
func BenchmarkWriterIntegrationRack(b *testing.B) {
	c, topic := wrBenchTopic(b)

	value := make([]byte, 100)
	msgs := make([]kafka.Message, 1000)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: value}
	}
	for _, rack := range []string{"", "b"} {
		name := "rack=none"
		if rack != "" {
			name = "rack=" + rack
		}
		b.Run(name, func(b *testing.B) {
			w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, Rack: rack, RequiredAcks: kafka.RequireAll}
			defer w.Close()
			ctx := context.Background()
			deadline := time.Now().Add(30 * time.Second)
			for w.WriteMessages(ctx, msgs...) != nil { // warm up: metadata, connections, producer id
				if time.Now().After(deadline) {
					b.Fatal("the topic never took writes")
				}
			}
			cpu0 := wbCPU()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i += len(msgs) {
				if err := w.WriteMessages(ctx, msgs[:min(len(msgs), b.N-i)]...); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64((wbCPU()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/record")
		})
	}
}

// wbCPU is the CPU time this process has used (user + system).
func wbCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wrBenchTopic is the benchmarks' cluster and a topic of six partitions led
// in racks a, b, c, a, b, c.
func wrBenchTopic(b *testing.B) (*ktesting.Cluster, string) {
	c := ktesting.RequireRackCluster(b)
	ids := map[string]int{}
	for _, r := range []string{"a", "b", "c"} {
		in := c.BrokersInRack(r)
		if len(in) != 1 {
			b.Fatalf("rack %q has brokers %v, want one", r, in)
		}
		ids[r] = in[0]
	}
	return c, createTopic(b, c, kafka.TopicConfig{ReplicaAssignments: wrTopic(ids["a"], ids["b"], ids["c"])})
}
