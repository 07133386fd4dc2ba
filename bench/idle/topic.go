package idle

import (
	"context"
	"fmt"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/bench/e2e"
)

// setting is the e2e benchmark's description of the topic: the same
// topic making and filling serves both benchmarks.
func setting(partitions, perPartition int) e2e.Setting {
	return e2e.Setting{Mode: e2e.ModePartition, Partitions: partitions, ValueSize: 100, Records: partitions * perPartition}
}

// TopicName names the topic of partitions × perPartition records.
func TopicName(partitions, perPartition int) string { return setting(partitions, perPartition).Topic() }

// EnsureTopic creates the topic (replication factor 3) with perPartition
// records of 100 bytes in each partition, unless it already holds them.
func EnsureTopic(ctx context.Context, brokers []string, partitions, perPartition int) error {
	return e2e.EnsureTopic(ctx, brokers, setting(partitions, perPartition), func(string, ...any) {})
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
