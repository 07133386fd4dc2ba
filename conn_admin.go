package kafka

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// ConfigEntry is one topic configuration key and value.
type ConfigEntry struct {
	ConfigName  string
	ConfigValue string
}

// ReplicaAssignment places a partition's replicas on given brokers.
type ReplicaAssignment struct {
	Partition int
	// The list of brokers where the partition should be allocated. There
	// must be as many entries in this list as there are replicas of the
	// partition. The first entry represents the broker that will be the
	// preferred leader for the partition.
	Replicas []int
}

// TopicConfig describes a topic to create.
type TopicConfig struct {
	// Topic name
	Topic string

	// NumPartitions created. -1 indicates unset.
	NumPartitions int

	// ReplicationFactor for the topic. -1 indicates unset.
	ReplicationFactor int

	// ReplicaAssignments among kafka brokers for this topic partitions. If
	// this is set num_partitions and replication_factor must be unset.
	ReplicaAssignments []ReplicaAssignment

	// ConfigEntries holds topic level configuration for topic to be set.
	ConfigEntries []ConfigEntry
}

// CreateTopics creates one topic per configuration. Creating a topic that
// already exists is not an error.
func (c *Conn) CreateTopics(topics ...TopicConfig) error {
	req := &protocol.CreateTopicsRequest{TimeoutMs: c.requestTimeoutMs()}
	for _, t := range topics {
		rt := protocol.CreateTopicsRequestTopic{
			Name:              t.Topic,
			NumPartitions:     int32(t.NumPartitions),
			ReplicationFactor: int16(t.ReplicationFactor),
		}
		for _, a := range t.ReplicaAssignments {
			ids := make([]int32, len(a.Replicas))
			for i, r := range a.Replicas {
				ids[i] = int32(r)
			}
			rt.Assignments = append(rt.Assignments, protocol.CreateTopicsRequestAssignment{PartitionIndex: int32(a.Partition), BrokerIDs: ids})
		}
		for _, e := range t.ConfigEntries {
			v := e.ConfigValue
			rt.Configs = append(rt.Configs, protocol.CreateTopicsRequestConfig{Name: e.ConfigName, Value: &v})
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, _, err := c.roundTrip(context.Background(), req, -1)
	if err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	for _, t := range resp.(*protocol.CreateTopicsResponse).Topics {
		if t.ErrorCode != 0 && Error(t.ErrorCode) != TopicAlreadyExists {
			return fmt.Errorf("creating topic %q: %w", t.Name, makeError(t.ErrorCode, deref(t.ErrorMessage)))
		}
	}
	return nil
}

// DeleteTopics deletes the specified topics.
func (c *Conn) DeleteTopics(topics ...string) error {
	req := &protocol.DeleteTopicsRequest{TimeoutMs: c.requestTimeoutMs(), TopicNames: topics}
	for _, t := range topics {
		req.Topics = append(req.Topics, protocol.DeleteTopicsRequestTopic{Name: t})
	}
	resp, _, err := c.roundTrip(context.Background(), req, -1)
	if err != nil {
		return fmt.Errorf("deleting topics: %w", err)
	}
	for _, t := range resp.(*protocol.DeleteTopicsResponse).Responses {
		if t.ErrorCode != 0 {
			return fmt.Errorf("deleting topic %q: %w", t.Name, makeError(t.ErrorCode, deref(t.ErrorMessage)))
		}
	}
	return nil
}

// requestTimeoutMs is the broker-side timeout for admin requests: the time
// left before the write deadline, or 30 s without one.
func (c *Conn) requestTimeoutMs() int32 {
	d := c.wdeadline.get()
	if d.IsZero() {
		return 30000
	}
	ms := time.Until(d).Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if ms > math.MaxInt32 {
		ms = math.MaxInt32
	}
	return int32(ms)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
