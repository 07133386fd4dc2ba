package integration

// What the brokers say about a group Reader test's topic and group (prefix rgi): the partitions' leaders
// and end offsets, the group's coordinator and committed offsets, and preferred leader elections handing
// partitions back to a restarted broker.

import (
	"context"
	"fmt"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// rgiLeaders returns the leader of each partition of topic, as a live
// broker sees it.
func rgiLeaders(t *testing.T, c *ktesting.Cluster, topic string, partitions int) map[int]int {
	t.Helper()
	leaders := map[int]int{}
	eventually(t, 30*time.Second, "leaders of "+topic, func() bool {
		for _, addr := range c.Brokers {
			ps, err := partitionsOn(addr, topic)
			if err != nil || len(ps) != partitions {
				continue
			}
			for _, p := range ps {
				if p.Leader.ID < 0 {
					return false
				}
				leaders[p.ID] = p.Leader.ID
			}
			return true
		}
		return false
	})
	return leaders
}

// rgiLeadBack moves the leadership of topic's partitions back to their
// preferred replicas (a preferred leader election) until broker id, just
// restarted, leads one of them again, so readers must read from it.
func rgiLeadBack(t *testing.T, c *ktesting.Cluster, topic string, partitions, id int) {
	t.Helper()
	ps := make([]int, partitions)
	for i := range ps {
		ps[i] = i
	}
	cl := cmetaClient(t, c)
	eventually(t, 45*time.Second, fmt.Sprintf("broker %d leading a partition of %s again", id, topic), func() bool {
		for _, l := range rgiLeaders(t, c, topic, partitions) {
			if l == id {
				return true
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Partitions whose preferred leader is not in sync yet, or already
		// leads, answer with an error: the poll tries again.
		cl.ElectLeaders(ctx, &kafka.ElectLeadersRequest{Topic: topic, Partitions: ps, Timeout: 5 * time.Second})
		return false
	})
}

// rgiEnds returns the end offset (high watermark) of each partition at its
// leader, as named by the broker with the newest leader epoch: a broker just
// resumed from SIGSTOP still names itself for a moment and would report a
// stale end.
func rgiEnds(t *testing.T, c *ktesting.Cluster, topic string, partitions int) map[int]int64 {
	t.Helper()
	d := &kafka.Dialer{ClientID: "kafka-go-rg-itest", Timeout: 5 * time.Second}
	ends := map[int]int64{}
	for part := 0; part < partitions; part++ {
		eventually(t, 30*time.Second, fmt.Sprintf("end offset of %s/%d", topic, part), func() bool {
			best := kafka.Partition{LeaderEpoch: -2}
			for _, addr := range c.Brokers {
				ps, err := partitionsOn(addr, topic)
				if err != nil {
					continue
				}
				for _, p := range ps {
					if p.ID == part && p.Leader.ID >= 0 && p.LeaderEpoch > best.LeaderEpoch {
						best = p
					}
				}
			}
			if best.LeaderEpoch == -2 {
				return false
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, err := d.DialPartition(ctx, "tcp", "", best)
			if err != nil {
				return false
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			end, err := conn.ReadLastOffset()
			ends[part] = end
			return err == nil
		})
	}
	return ends
}

// rgiCoordinatorID is the broker coordinating group.
func rgiCoordinatorID(t *testing.T, c *ktesting.Cluster, group string) int {
	t.Helper()
	cl := cmetaClient(t, c)
	id := -1
	eventually(t, 30*time.Second, "coordinator of "+group, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := cl.FindCoordinator(ctx, &kafka.FindCoordinatorRequest{Key: group, KeyType: kafka.CoordinatorKeyTypeConsumer})
		if err != nil || r.Error != nil || r.Coordinator == nil {
			return false
		}
		id = r.Coordinator.NodeID
		return true
	})
	return id
}

// rgiCommitted reads the group's committed offsets (-1: none) with
// OffsetFetch at its coordinator.
func rgiCommitted(t *testing.T, c *ktesting.Cluster, group, topic string, partitions int) map[int]int64 {
	t.Helper()
	ps := make([]int, partitions)
	for i := range ps {
		ps[i] = i
	}
	cl := cmetaClient(t, c)
	out := map[int]int64{}
	eventually(t, 30*time.Second, "committed offsets of "+group, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ps}})
		if err == nil && r.Error != nil {
			err = r.Error
		}
		if err == nil {
			for _, p := range r.Topics[topic] {
				if p.Error != nil {
					err = fmt.Errorf("partition %d: %w", p.Partition, p.Error)
					break
				}
				out[p.Partition] = p.CommittedOffset
			}
		}
		if err != nil {
			t.Logf("OffsetFetch of %s: %v", group, err)
		}
		return err == nil
	})
	return out
}
