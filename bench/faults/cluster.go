package faults

import (
	"context"
	"errors"
	"fmt"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
	"github.com/rackfetch/kafka-go/testing/netfault"
)

// Partitions of every window's topic: two led in each rack.
const Partitions = 6

// Cluster is the netfault cluster a matrix runs on: clients bootstrap from
// the fault proxy's addresses, the producer and the harness's own requests
// use the brokers' listeners, outside any fault.
type Cluster struct {
	Brokers      []string // the brokers' own listeners, by IDs' order
	FaultBrokers []string // the same brokers behind the fault proxy
	IDs          []int
	Racks        map[int]string
	NF           *netfault.Client
}

// ClusterFromEnv reads the cluster that `kafka-cluster env` describes; it
// must have been started with KAFKA_NETFAULT=1.
func ClusterFromEnv() (*Cluster, error) {
	c, err := ktesting.ClusterFromEnv()
	if err != nil {
		return nil, err
	}
	if len(c.FaultBrokers) == 0 || c.FaultControl == "" {
		return nil, errors.New("the cluster has no fault proxy (KAFKA_FAULT_BROKERS unset): start it with KAFKA_NETFAULT=1")
	}
	if len(c.BrokerIDs) != len(c.Brokers) {
		return nil, errors.New("KAFKA_BROKER_IDS is unset: the brokers' ids are needed to name a fault's broker")
	}
	return &Cluster{Brokers: c.Brokers, FaultBrokers: c.FaultBrokers, IDs: c.BrokerIDs, Racks: c.Racks,
		NF: &netfault.Client{Addr: c.FaultControl}}, nil
}

// InRack returns the broker in rack.
func (c *Cluster) InRack(rack string) (int, error) {
	for _, id := range c.IDs {
		if c.Racks[id] == rack {
			return id, nil
		}
	}
	return 0, fmt.Errorf("no broker in rack %q (racks %v)", rack, c.Racks)
}

// FaultAddr is broker id's address behind the proxy.
func (c *Cluster) FaultAddr(id int) string {
	for i, b := range c.IDs {
		if b == id {
			return c.FaultBrokers[i]
		}
	}
	return ""
}

func (c *Cluster) admin() *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 10 * time.Second}
}

// assignments leads two partitions in each of racks a, b and c, every
// partition on every broker (RF 3).
func assignments(a, b, c int) []kafka.ReplicaAssignment {
	lists := [Partitions][]int{{a, b, c}, {b, c, a}, {c, a, b}, {a, c, b}, {b, a, c}, {c, b, a}}
	out := make([]kafka.ReplicaAssignment, Partitions)
	for p, r := range lists {
		out[p] = kafka.ReplicaAssignment{Partition: p, Replicas: r}
	}
	return out
}

// CreateTopic creates a topic led in racks a, b and c and waits until every
// partition has its first replica as leader and a full ISR.
func (c *Cluster) CreateTopic(ctx context.Context, topic string) error {
	var ids [3]int
	for i, rack := range []string{"a", "b", "c"} {
		id, err := c.InRack(rack)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	resp, err := c.admin().CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignments: assignments(ids[0], ids[1], ids[2]),
	}}})
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	if err := resp.Errors[topic]; err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	return poll(ctx, 60*time.Second, "topic "+topic+" led by its first replicas with full ISRs", func() bool {
		st, err := c.topicState(ctx, topic)
		if err != nil || len(st.leader) != Partitions {
			return false
		}
		for p, want := range assignments(ids[0], ids[1], ids[2]) {
			if st.leader[p] != want.Replicas[0] || st.isr[p] != 3 {
				return false
			}
		}
		return true
	})
}

// DeleteTopic deletes a window's topic once it is done with, so that a
// whole matrix leaves the cluster as it found it.
func (c *Cluster) DeleteTopic(topic string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.admin().DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
		return fmt.Errorf("deleting topic %s: %w", topic, err)
	}
	return nil
}

// topicState is a topic's leaders and ISRs, by partition.
type topicState struct {
	leader map[int]int
	isr    map[int]int          // ISR sizes
	inISR  map[int]map[int]bool // partition → broker → in its ISR
}

func (c *Cluster) topicState(ctx context.Context, topic string) (topicState, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := c.admin().Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return topicState{}, fmt.Errorf("reading the metadata of %s: %w", topic, err)
	}
	st := topicState{leader: map[int]int{}, isr: map[int]int{}, inISR: map[int]map[int]bool{}}
	for _, t := range md.Topics {
		if t.Name != topic || t.Error != nil {
			continue
		}
		for _, p := range t.Partitions {
			if p.Error != nil {
				continue
			}
			st.leader[p.ID] = p.Leader.ID
			st.isr[p.ID] = len(p.Isr)
			st.inISR[p.ID] = map[int]bool{}
			for _, b := range p.Isr {
				st.inISR[p.ID][b.ID] = true
			}
		}
	}
	return st, nil
}

// Coordinator asks which broker coordinates group.
func (c *Cluster) Coordinator(ctx context.Context, group string) (int, error) {
	id := -1
	err := poll(ctx, 30*time.Second, "the coordinator of group "+group, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		resp, err := c.admin().FindCoordinator(cctx, &kafka.FindCoordinatorRequest{Key: group, KeyType: kafka.CoordinatorKeyTypeConsumer})
		if err != nil || resp.Error != nil || resp.Coordinator == nil {
			return false
		}
		id = resp.Coordinator.NodeID
		return true
	})
	return id, err
}

// GroupCoordinatedBy returns a group id made from base whose coordinator is
// broker id (the first of 100 tried).
func (c *Cluster) GroupCoordinatedBy(ctx context.Context, base string, id int) (string, error) {
	for i := 0; i < 100; i++ {
		g := fmt.Sprintf("%s-g%d", base, i)
		coord, err := c.Coordinator(ctx, g)
		if err != nil {
			return "", err
		}
		if coord == id {
			return g, nil
		}
	}
	return "", fmt.Errorf("no group id of 100 made from %s is coordinated by broker %d", base, id)
}

// poll checks cond every 100 ms until it holds, limit passes or ctx ends.
func poll(ctx context.Context, limit time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: not within %v", what, limit)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
