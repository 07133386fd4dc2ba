package idle

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	kafka "github.com/rackfetch/kafka-go"
)

// TopicName names the topic of partitions × perPartition records.
func TopicName(partitions, perPartition int) string {
	return fmt.Sprintf("bench-idle-p%d-n%d", partitions, perPartition)
}

// EnsureTopic creates the topic (replication factor 3) with perPartition
// small records in each partition, unless it already holds them.
func EnsureTopic(ctx context.Context, brokers []string, partitions, perPartition int) error {
	topic := TopicName(partitions, perPartition)
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 30 * time.Second}
	resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: partitions, ReplicationFactor: 3,
	}}})
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	if err := resp.Errors[topic]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	held, err := records(ctx, cl, topic, partitions)
	if err != nil {
		return err
	}
	switch held {
	case int64(partitions * perPartition):
		return nil
	case 0:
	default:
		return fmt.Errorf("topic %s holds %d records, neither 0 nor %d: delete it", topic, held, partitions*perPartition)
	}
	pr, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return fmt.Errorf("producing into %s: %w", topic, err)
	}
	defer pr.Close()
	var recs []*kgo.Record
	for i := 0; i < partitions*perPartition; i++ {
		v := []byte("record " + strconv.Itoa(i))
		recs = append(recs, &kgo.Record{Value: v, Partition: int32(i % partitions)})
	}
	if err := pr.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("producing into %s: %w", topic, err)
	}
	return nil
}

// records counts what the topic holds, waiting for every partition to have
// a leader (a new topic's take a moment).
func records(ctx context.Context, cl *kafka.Client, topic string, partitions int) (int64, error) {
	req := make([]kafka.OffsetRequest, partitions)
	for p := range req {
		req[p] = kafka.LastOffsetOf(p)
	}
	for {
		resp, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: req}})
		if err == nil {
			var n int64
			parts := resp.Topics[topic]
			for _, p := range parts {
				if p.Error != nil {
					err = p.Error
					break
				}
				n += p.LastOffset
			}
			if err == nil && len(parts) == partitions {
				return n, nil
			}
			if err == nil {
				err = fmt.Errorf("%d partitions answered, want %d", len(parts), partitions)
			}
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("reading the end offsets of %s: %w", topic, err)
		case <-time.After(200 * time.Millisecond): // a new topic's leaders are being elected
		}
	}
}

// Racks maps each broker's address to its rack, as metadata says.
func Racks(ctx context.Context, brokers []string) (map[string]string, error) {
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 30 * time.Second}
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		return nil, fmt.Errorf("reading metadata: %w", err)
	}
	m := map[string]string{}
	for _, b := range md.Brokers {
		m[fmt.Sprintf("%s:%d", b.Host, b.Port)] = b.Rack
	}
	return m, nil
}
