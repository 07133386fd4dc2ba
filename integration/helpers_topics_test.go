package integration

// Topics for the integration tests: created through the controller, waited for until every broker sees
// them led and in sync, deleted at the end of the test; and the brokers of a metadata answer.

import (
	"fmt"
	"sort"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// partitionsOn reads the partitions of topic as broker addr sees them.
func partitionsOn(addr, topic string) ([]kafka.Partition, error) {
	conn, err := newDialer().Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(itTimeout))
	return conn.ReadPartitions(topic)
}

// settled reports whether every partition has a live leader and its whole replica set in sync.
func settled(ps []kafka.Partition, want int) bool {
	if len(ps) != want {
		return false
	}
	for _, p := range ps {
		if p.Error != nil || p.Leader.ID < 0 || p.Leader.Host == "" || len(p.Isr) != len(p.Replicas) || len(p.Replicas) == 0 {
			return false
		}
	}
	return true
}

// createTopic creates a topic (RF 3 unless cfg assigns replicas), waits until every broker's metadata has
// all its partitions led and fully in sync, and deletes it at the end of the test.
func createTopic(t testing.TB, c *ktesting.Cluster, cfg kafka.TopicConfig) string {
	t.Helper()
	if cfg.Topic == "" {
		cfg.Topic = ktesting.UniqueTopic(t)
	}
	partitions := cfg.NumPartitions
	if len(cfg.ReplicaAssignments) > 0 {
		cfg.NumPartitions, cfg.ReplicationFactor = -1, -1
		partitions = len(cfg.ReplicaAssignments)
	} else {
		if partitions <= 0 {
			cfg.NumPartitions, partitions = 1, 1
		}
		cfg.ReplicationFactor = 3
	}
	if err := dialController(t, c).CreateTopics(cfg); err != nil {
		t.Fatalf("CreateTopics %s: %v", cfg.Topic, err)
	}
	t.Cleanup(func() {
		conn, err := newDialer().Dial("tcp", c.Brokers[0])
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(itTimeout))
		conn.DeleteTopics(cfg.Topic)
	})
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, fmt.Sprintf("topic %s settled on %s", cfg.Topic, addr), func() bool {
			ps, err := partitionsOn(addr, cfg.Topic)
			return err == nil && settled(ps, partitions)
		})
	}
	return cfg.Topic
}

func brokerIDs(bs []kafka.Broker) []int {
	ids := make([]int, len(bs))
	for i, b := range bs {
		ids[i] = b.ID
	}
	sort.Ints(ids)
	return ids
}

func hasBroker(bs []kafka.Broker, id int) bool {
	for _, b := range bs {
		if b.ID == id {
			return true
		}
	}
	return false
}
