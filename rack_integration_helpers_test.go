package kafka

// Test hooks of the integration tests that stay in the root package: admin
// requests on a Conn for cluster_frozen_integration_test.go (reordering a
// partition's replicas and electing its preferred leader; integration/
// sends them with the Client), and the fetch engine's counters and idle
// timeout for reader_engine_integration_test.go. Exported only in the test
// build.

import (
	"context"
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/protocol"
)

// RackTestReorderReplicas asks the cluster (through conn, any broker: it
// forwards to the controller) to make replicas the replica list of
// topic/partition. With the same brokers in another order nothing moves:
// only the preferred leader (the first) changes.
func RackTestReorderReplicas(ctx context.Context, conn *Conn, topic string, partition int, replicas []int) error {
	ids := make([]int32, len(replicas))
	for i, r := range replicas {
		ids[i] = int32(r)
	}
	req := &protocol.AlterPartitionReassignmentsRequest{
		TimeoutMs: rackTestTimeoutMs(ctx),
		Topics: []protocol.AlterPartitionReassignmentsRequestTopic{{
			Name:       topic,
			Partitions: []protocol.AlterPartitionReassignmentsRequestPartition{{PartitionIndex: int32(partition), Replicas: ids}},
		}},
	}
	resp, _, err := conn.roundTrip(ctx, req, -1)
	if err != nil {
		return fmt.Errorf("AlterPartitionReassignments: %w", err)
	}
	r := resp.(*protocol.AlterPartitionReassignmentsResponse)
	if r.ErrorCode != 0 {
		return fmt.Errorf("AlterPartitionReassignments: %w", makeError(r.ErrorCode, deref(r.ErrorMessage)))
	}
	for _, t := range r.Responses {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return fmt.Errorf("AlterPartitionReassignments %s/%d: %w", t.Name, p.PartitionIndex, makeError(p.ErrorCode, deref(p.ErrorMessage)))
			}
		}
	}
	return nil
}

// RackTestElectPreferredLeader runs a preferred leader election for
// topic/partition. ElectionNotNeeded (already led by its preferred
// replica) is returned as such, so callers may poll until it appears.
func RackTestElectPreferredLeader(ctx context.Context, conn *Conn, topic string, partition int) error {
	req := &protocol.ElectLeadersRequest{
		ElectionType:    0, // preferred
		TopicPartitions: []protocol.ElectLeadersRequestTopic{{Topic: topic, Partitions: []int32{int32(partition)}}},
		TimeoutMs:       rackTestTimeoutMs(ctx),
	}
	resp, _, err := conn.roundTrip(ctx, req, -1)
	if err != nil {
		return fmt.Errorf("ElectLeaders: %w", err)
	}
	r := resp.(*protocol.ElectLeadersResponse)
	if r.ErrorCode != 0 {
		return fmt.Errorf("ElectLeaders: %w", Error(r.ErrorCode))
	}
	for _, t := range r.ReplicaElectionResults {
		for _, p := range t.PartitionResult {
			if p.ErrorCode != 0 {
				return fmt.Errorf("ElectLeaders %s/%d: %w", t.Topic, p.PartitionID, makeError(p.ErrorCode, deref(p.ErrorMessage)))
			}
		}
	}
	return nil
}

func rackTestTimeoutMs(ctx context.Context) int32 {
	if d, ok := ctx.Deadline(); ok {
		if ms := time.Until(d).Milliseconds(); ms > 0 && ms < 30000 {
			return int32(ms)
		}
	}
	return 30000
}

// ReaderTestEngineStats returns the counters of r's fetch engine.
func ReaderTestEngineStats(r *Reader) fetchengine.Stats { return r.engine.Stats() }

// ReaderTestSameEngine reports whether a and b fetch through one engine.
func ReaderTestSameEngine(a, b *Reader) bool { return a.engine == b.engine }

// SetEngineIdleTimeoutForTest makes the fetch engines of Readers using d
// close an idle data connection after idle.
func SetEngineIdleTimeoutForTest(d *Dialer, idle time.Duration) { engineIdleTimeouts.Store(d, idle) }

// ReaderTestOffsetRequests returns how many ListOffsets requests Readers
// have sent for start offsets and seeks.
func ReaderTestOffsetRequests() int64 { return consumer.OffsetRequests() }
