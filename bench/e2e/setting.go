package e2e

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/rackfetch/kafka-go"
)

// Modes of consuming a topic.
const (
	// ModePartition reads every partition directly, without a group: one
	// Reader per partition for the Reader-based clients (as a kafka-go user
	// without groups runs it), franz-go ConsumePartitions, sarama
	// ConsumePartition for each partition.
	ModePartition = "partition"
	// ModeGroup reads the whole topic as the only member of a fresh group.
	ModeGroup = "group"
)

// Clients, in the order a round runs them.
var Clients = []string{"franz-go", "rackfetch", "rackfetch-batch", "kafka-go", "sarama"}

// Base is the client every ratio is taken against.
const Base = "franz-go"

// Setting is one cell of the matrix: what topic is read, how, and with what
// per-partition fetch size.
type Setting struct {
	Mode       string `json:"mode"`
	Partitions int    `json:"partitions"`
	ValueSize  int    `json:"value_size"`
	Records    int    `json:"records"` // over all partitions; a multiple of Partitions
	FetchBytes int    `json:"fetch_bytes"`
}

// Name says every setting, for tables and logs.
func (s Setting) Name() string {
	return fmt.Sprintf("%s · %d partitions · %s values · %s records · fetch %s",
		s.Mode, s.Partitions, Size(s.ValueSize), Count(s.Records), Size(s.FetchBytes))
}

// Short is a compact label for charts.
func (s Setting) Short() string {
	return fmt.Sprintf("%s · %dp · %s · %s", s.Mode, s.Partitions, Size(s.ValueSize), Size(s.FetchBytes))
}

// Topic names the topic holding the setting's records: it depends only on
// the records, so every fetch size and mode reads the same topic, and later
// runs reuse it.
func (s Setting) Topic() string {
	return fmt.Sprintf("bench-e2e-p%d-v%d-n%d", s.Partitions, s.ValueSize, s.Records)
}

// PerPartition is the number of records in each partition.
func (s Setting) PerPartition() int { return s.Records / s.Partitions }

// Size writes a byte count as kafka-go's docs do: 1MiB, 10MB, 100B.
func Size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%dMB", n/1e6)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// Count writes a record count: 3M, 300k, 6000.
func Count(n int) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%dM", n/1e6)
	case n >= 1e3 && n%1e3 == 0:
		return fmt.Sprintf("%dk", n/1e3)
	}
	return fmt.Sprint(n)
}

// EnsureTopic creates the setting's topic (replication factor 3) and fills
// it with records 0..Records-1, record i in partition i%Partitions, unless
// it already holds them. A topic holding some other number of records is
// an error: delete it.
func EnsureTopic(ctx context.Context, brokers []string, s Setting, logf func(string, ...any)) error {
	topic := s.Topic()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 30 * time.Second}
	resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: s.Partitions, ReplicationFactor: 3,
	}}})
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	if err := resp.Errors[topic]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	held, err := topicRecords(ctx, cl, s)
	if err != nil {
		return err
	}
	switch held {
	case int64(s.Records):
		return nil
	case 0:
	default:
		return fmt.Errorf("topic %s holds %d records, neither 0 nor %d: delete it", topic, held, s.Records)
	}
	start := time.Now()
	if err := produce(ctx, brokers, s); err != nil {
		return err
	}
	if held, err = topicRecords(ctx, cl, s); err != nil {
		return err
	}
	if held != int64(s.Records) {
		return fmt.Errorf("topic %s holds %d records after producing %d", topic, held, s.Records)
	}
	logf("produced %d records into %s in %.1fs", s.Records, topic, time.Since(start).Seconds())
	return nil
}

// topicRecords returns how many records the topic's partitions hold,
// waiting for every partition to have a leader (a new topic's take a moment).
func topicRecords(ctx context.Context, cl *kafka.Client, s Setting) (int64, error) {
	req := make([]kafka.OffsetRequest, s.Partitions)
	for p := range req {
		req[p] = kafka.LastOffsetOf(p)
	}
	for {
		resp, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{s.Topic(): req}})
		if err == nil {
			var n int64
			parts := resp.Topics[s.Topic()]
			for _, p := range parts {
				if p.Error != nil {
					err = p.Error
					break
				}
				n += p.LastOffset
			}
			if err == nil && len(parts) == s.Partitions {
				return n, nil
			}
			if err == nil {
				err = fmt.Errorf("%d partitions answered, want %d", len(parts), s.Partitions)
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("reading the end offsets of %s: %w", s.Topic(), err)
		case <-time.After(200 * time.Millisecond): // leader election of a new topic
		}
	}
}

// produce writes the setting's records with franz-go (uncompressed, acks
// all, idempotent), record i to partition i%Partitions.
func produce(ctx context.Context, brokers []string, s Setting) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.DefaultProduceTopic(s.Topic()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(200_000),
	)
	if err != nil {
		return fmt.Errorf("producing into %s: %w", s.Topic(), err)
	}
	defer cl.Close()
	var firstErr error
	var failed = make(chan error, 1)
	buf := make([]byte, 0, s.ValueSize+64)
	for i := 0; i < s.Records; i++ {
		k, v := Record(buf, i, s.ValueSize)
		r := &kgo.Record{Key: append([]byte(nil), k...), Value: append([]byte(nil), v...), Partition: int32(i % s.Partitions)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case failed <- err:
				default:
				}
			}
		})
		if i%100_000 == 0 {
			select {
			case firstErr = <-failed:
				return fmt.Errorf("producing into %s: %w", s.Topic(), firstErr)
			default:
			}
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("producing into %s: %w", s.Topic(), err)
	}
	select {
	case firstErr = <-failed:
		return fmt.Errorf("producing into %s: %w", s.Topic(), firstErr)
	default:
	}
	return nil
}
