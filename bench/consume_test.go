package bench

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	segkafka "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/compress"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// Settings of the end-to-end consume benchmark: every client reads the same
// pre-produced records of one partition from the first offset, one fetch of
// at most consumeMaxBytes at a time, and stops after the last.
const (
	consumeRecords  = 200_000
	consumeValue    = 100
	consumeMaxBytes = 1 << 20
	consumeMaxWait  = 500 * time.Millisecond
)

var consumeCodecs = []struct {
	name string
	c    compress.Compression
}{
	{"none", compress.None},
	{"lz4", compress.Lz4},
}

// A consumer reads n records from the partition's first offset, calls
// visit for each and closes everything it opened.
type consumer func(ctx context.Context, brokers []string, topic string, n int, visit func(key, value []byte)) error

var consumers = []struct {
	name string
	run  consumer
}{
	{"rackfetch", consumeRackfetch},
	{"rackfetch-batch", consumeRackfetchBatch},
	{"franz-go", consumeFranz},
	{"kafka-go", consumeSegmentio},
	{"sarama", consumeSarama},
}

// BenchmarkConsume reads consumeRecords pre-produced records of one
// partition through each client's consumer API against the real cluster of
// KAFKA_BROKERS (skipped without one). Per op: one consumer made, the
// records read, the consumer closed. Metrics: records/s and the process's
// CPU time per record (user+sys: the client's goroutines and GC; the
// brokers run in other processes). Run it with -benchtime=1x and several
// rounds (see RESULTS.md).
func BenchmarkConsume(b *testing.B) {
	c := ktesting.RequireCluster(b)
	if v, err := sarama.ParseKafkaVersion(c.Version); err == nil {
		saramaVersion = v
	}
	for _, codec := range consumeCodecs {
		topic := consumeTopic(b, c.Brokers, codec.name, codec.c)
		for _, cl := range consumers {
			name := fmt.Sprintf("records=%d/value=%dB/batch=%d/codec=%s/maxbytes=%dKiB/maxwait=%s/client=%s",
				consumeRecords, consumeValue, recordsPerBatch, codec.name, consumeMaxBytes>>10, consumeMaxWait, cl.name)
			b.Run(name, func(b *testing.B) { benchConsume(b, cl.run, c.Brokers, topic) })
		}
	}
}

func benchConsume(b *testing.B, run consumer, brokers []string, topic string) {
	var n, sum int
	visit := func(k, v []byte) {
		n++
		sum += len(k) + len(v)
	}
	cpu0 := cpuTime()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := run(ctx, brokers, topic, consumeRecords, visit)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	if n != b.N*consumeRecords || sum == 0 {
		b.Fatalf("%d records read, want %d", n, b.N*consumeRecords)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/record")
}

// consumeTopic returns a one-partition topic (replication factor 3) holding
// consumeRecords records compressed with c, in batches of recordsPerBatch,
// produced by this client's Writer. The topic is named by its settings and
// kept, so that later rounds read the same records without producing them
// again.
func consumeTopic(b *testing.B, brokers []string, codecName string, c compress.Compression) string {
	topic := fmt.Sprintf("bench-consume-%s-%d-%d", codecName, consumeRecords, consumeValue)
	conn, err := kafka.Dial("tcp", brokers[0])
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		b.Fatal(err)
	}
	cc, err := kafka.Dial("tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	if err := cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: 3}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var last int64
	for {
		leader, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, 0)
		if err == nil {
			last, err = leader.ReadLastOffset()
			leader.Close()
			if err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			b.Fatalf("topic %s: %v", topic, err)
		}
		time.Sleep(200 * time.Millisecond) // leader election of the new topic
	}
	if last >= consumeRecords {
		return topic
	}
	if last != 0 {
		b.Fatalf("topic %s holds %d records, neither 0 nor %d: delete it", topic, last, consumeRecords)
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(brokers...),
		Topic:        topic,
		BatchSize:    recordsPerBatch,
		BatchTimeout: 10 * time.Millisecond,
		RequiredAcks: kafka.RequireAll,
		Compression:  c,
	}
	defer w.Close()
	src := records(consumeValue)
	msgs := make([]kafka.Message, 0, 10_000)
	for i := 0; i < consumeRecords; i++ {
		r := &src[i%len(src)]
		msgs = append(msgs, kafka.Message{Key: r.Key, Value: r.Value})
		if len(msgs) == cap(msgs) {
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
	return topic
}

// consumeRackfetch reads through this client's Reader one message at a
// time (ReadMessage, without a group: no commits), as kafka-go's users do.
func consumeRackfetch(ctx context.Context, brokers []string, topic string, n int, visit func(k, v []byte)) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: brokers, Topic: topic, Partition: 0,
		MinBytes: 1, MaxBytes: consumeMaxBytes, MaxWait: consumeMaxWait,
	})
	defer r.Close()
	for i := 0; i < n; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return err
		}
		visit(m.Key, m.Value)
	}
	return nil
}

// consumeRackfetchBatch reads through this client's Reader a fetch at a
// time (FetchBatch).
func consumeRackfetchBatch(ctx context.Context, brokers []string, topic string, n int, visit func(k, v []byte)) error {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: brokers, Topic: topic, Partition: 0,
		MinBytes: 1, MaxBytes: consumeMaxBytes, MaxWait: consumeMaxWait,
	})
	defer r.Close()
	for got := 0; got < n; {
		batch, err := r.FetchBatch(ctx)
		if err != nil {
			return err
		}
		for i := range batch.Messages {
			visit(batch.Messages[i].Key, batch.Messages[i].Value)
		}
		got += len(batch.Messages)
	}
	return nil
}

// consumeFranz reads through a franz-go client consuming the partition
// directly (no group), a poll at a time.
func consumeFranz(ctx context.Context, brokers []string, topic string, n int, visit func(k, v []byte)) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchMinBytes(1),
		kgo.FetchMaxBytes(consumeMaxBytes),
		kgo.FetchMaxPartitionBytes(consumeMaxBytes),
		kgo.FetchMaxWait(consumeMaxWait),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	for got := 0; got < n; {
		fetches := cl.PollFetches(ctx)
		if err := fetches.Err0(); err != nil {
			return err
		}
		fetches.EachRecord(func(r *kgo.Record) {
			visit(r.Key, r.Value)
			got++
		})
	}
	return nil
}

// consumeSegmentio reads through segmentio/kafka-go's Reader, ReadMessage
// without a group.
func consumeSegmentio(ctx context.Context, brokers []string, topic string, n int, visit func(k, v []byte)) error {
	r := segkafka.NewReader(segkafka.ReaderConfig{
		Brokers: brokers, Topic: topic, Partition: 0,
		MinBytes: 1, MaxBytes: consumeMaxBytes, MaxWait: consumeMaxWait,
	})
	defer r.Close()
	for i := 0; i < n; i++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return err
		}
		visit(m.Key, m.Value)
	}
	return nil
}

// saramaVersion is the cluster's version (KAFKA_VERSION) when sarama knows
// it, so that sarama uses the same protocol versions as the others.
var saramaVersion = sarama.V2_8_0_0

// consumeSarama reads through sarama's partition consumer from the oldest
// offset, a message at a time from its channel.
func consumeSarama(ctx context.Context, brokers []string, topic string, n int, visit func(k, v []byte)) error {
	cfg := sarama.NewConfig()
	cfg.Version = saramaVersion
	cfg.Consumer.Fetch.Min = 1
	cfg.Consumer.Fetch.Default = consumeMaxBytes
	cfg.Consumer.MaxWaitTime = consumeMaxWait
	c, err := sarama.NewConsumer(brokers, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return err
	}
	defer pc.Close()
	for i := 0; i < n; i++ {
		select {
		case m := <-pc.Messages():
			visit(m.Key, m.Value)
		case err := <-pc.Errors():
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
