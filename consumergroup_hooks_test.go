package kafka

import (
	"context"

	"github.com/rackfetch/kafka-go/internal/group"
)

// Test hooks into the state internal/group keeps for a Generation and a
// ConsumerGroup.

// ended is closed when the generation ends.
func (g *Generation) ended() <-chan struct{} { return g.gen.Done() }

// endReason is why the generation ended.
func (g *Generation) endReason() error { return g.gen.EndReason() }

func (g *Generation) isEnded() bool {
	select {
	case <-g.gen.Done():
		return true
	default:
		return false
	}
}

// committedOffsets reads the group's committed offsets through the
// generation's coordinator: -1 where none is committed.
func (g *Generation) committedOffsets(ctx context.Context, partitions map[string][]int) (map[string]map[int]int64, error) {
	return g.gen.CommittedOffsets(ctx, partitions)
}

// fetchOffsets reads the group's committed offsets on conn, a connection
// to its coordinator.
func (cg *ConsumerGroup) fetchOffsets(ctx context.Context, conn *Conn, partitions map[string][]int) (map[string]map[int]int64, error) {
	return group.FetchOffsets(ctx, groupConn{conn}, cg.config.ID, cg.config.Timeout, partitions, groupErrors{})
}
