package integration

// Admin requests of the rack tests through the public Client: reordering a partition's replicas and
// electing its preferred leader, sent to the controller of the cluster conn belongs to.

import (
	"context"
	"fmt"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

// reorderReplicas asks the cluster of conn to make replicas the replica list of topic/partition. With the
// same brokers in another order nothing moves: only the preferred leader (the first) changes.
func reorderReplicas(ctx context.Context, conn *kafka.Conn, topic string, partition int, replicas []int) error {
	cl := &kafka.Client{Addr: conn.RemoteAddr()}
	resp, err := cl.AlterPartitionReassignments(ctx, &kafka.AlterPartitionReassignmentsRequest{
		Topic:       topic,
		Assignments: []kafka.AlterPartitionReassignmentsRequestAssignment{{PartitionID: partition, BrokerIDs: replicas}},
		Timeout:     adminTimeout(ctx),
	})
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("AlterPartitionReassignments: %w", resp.Error)
	}
	for _, p := range resp.PartitionResults {
		if p.Error != nil {
			return fmt.Errorf("AlterPartitionReassignments %s/%d: %w", p.Topic, p.PartitionID, p.Error)
		}
	}
	return nil
}

// electPreferredLeader runs a preferred leader election for topic/partition. ElectionNotNeeded (already
// led by its preferred replica) is returned as such, so callers may poll until it appears.
func electPreferredLeader(ctx context.Context, conn *kafka.Conn, topic string, partition int) error {
	cl := &kafka.Client{Addr: conn.RemoteAddr()}
	resp, err := cl.ElectLeaders(ctx, &kafka.ElectLeadersRequest{Topic: topic, Partitions: []int{partition}, Timeout: adminTimeout(ctx)})
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("ElectLeaders: %w", resp.Error)
	}
	for _, p := range resp.PartitionResults {
		if p.Error != nil {
			return fmt.Errorf("ElectLeaders %s/%d: %w", topic, p.Partition, p.Error)
		}
	}
	return nil
}

// adminTimeout is how long the controller may take: what is left of ctx, at most 30 s.
func adminTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left > 0 && left < 30*time.Second {
			return left
		}
	}
	return 30 * time.Second
}
