package group

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/protocol"
)

// startOffsets turns the partitions SyncGroup assigned (by topic) into the
// generation's Assignments: the committed offset where there is one, else
// the StartOffset policy. Topics the group does not subscribe to are left
// out; every subscribed topic has an entry, empty when nothing of it is
// assigned.
func (g *Group) startOffsets(ctx context.Context, conn Conn, gen *Generation, assigned map[string][]int) (map[string][]Assignment, error) {
	mine := make(map[string][]int, len(g.cfg.Topics))
	for _, topic := range g.cfg.Topics {
		if ps := assigned[topic]; len(ps) > 0 {
			mine[topic] = ps
		}
	}
	offsets := map[string]map[int]int64{}
	if len(mine) > 0 {
		var err error
		if offsets, err = g.fetchOffsets(ctx, conn, mine); err != nil {
			return nil, fmt.Errorf("fetching the committed offsets of group %s: %w", g.cfg.ID, err)
		}
		if g.cfg.StartOffset == LastOffset {
			if err := g.resolveStartOffsets(ctx, conn, gen, mine, offsets); err != nil {
				return nil, err
			}
		}
	}
	out := make(map[string][]Assignment, len(g.cfg.Topics))
	for _, topic := range g.cfg.Topics {
		pas := make([]Assignment, 0, len(mine[topic]))
		for _, p := range mine[topic] {
			offset, ok := offsets[topic][p]
			if !ok || offset < 0 {
				offset = g.cfg.StartOffset
			}
			pas = append(pas, Assignment{ID: p, Offset: offset})
		}
		out[topic] = pas
	}
	return out, nil
}

// resolveStartOffsets fills, for StartOffset LastOffset, the partitions
// without a committed offset with their current end offset, and commits
// those offsets for the group before the generation is handed out.
//
// Handing out the relative LastOffset instead loses messages (a known
// kafka-go bug): the member would resolve "last" only when it starts
// reading; if the generation ends before its first commit, the next owner
// finds nothing committed and resolves "last" again, later, skipping every
// message produced in between. Resolving the concrete end offset once, at
// the partition leader, when the group first gets the partition, and
// committing it at once (the group is stable after SyncGroup, so the
// coordinator takes the commit), makes the starting point part of the
// group's state: every later generation reads it back with OffsetFetch.
// If the commit fails the generation is not handed out at all (the join
// is retried), so no member ever reads from an uncommitted start.
func (g *Group) resolveStartOffsets(ctx context.Context, conn Conn, gen *Generation, mine map[string][]int, offsets map[string]map[int]int64) error {
	missing := map[string][]int{}
	for topic, ps := range mine {
		for _, p := range ps {
			if o, ok := offsets[topic][p]; !ok || o < 0 {
				missing[topic] = append(missing[topic], p)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ends, err := g.listEndOffsets(ctx, missing)
	if err != nil {
		return fmt.Errorf("resolving the last offsets of group %s: %w", g.cfg.ID, err)
	}
	if err := gen.commit(ctx, conn, ends); err != nil {
		return fmt.Errorf("committing the start offsets of group %s: %w", g.cfg.ID, err)
	}
	g.deps.Log.Printf("group %s starts at the last offsets %s (committed)", g.cfg.ID, formatOffsets(ends))
	for topic, ps := range ends {
		if offsets[topic] == nil {
			offsets[topic] = map[int]int64{}
		}
		for p, o := range ps {
			offsets[topic][p] = o
		}
	}
	return nil
}

type topicPartition struct {
	topic     string
	partition int
}

func (tp topicPartition) String() string { return tp.topic + "/" + strconv.Itoa(tp.partition) }

// listEndOffsets asks the partitions' leaders for their end offsets
// (ListOffsets "latest": the high watermark, or the last stable offset
// with read committed). Partitions whose leader moved are retried after a
// metadata refresh.
func (g *Group) listEndOffsets(ctx context.Context, partitions map[string][]int) (map[string]map[int]int64, error) {
	cl := g.deps.Cluster
	out := map[string]map[int]int64{}
	pending := map[topicPartition]bool{}
	var topics []string
	for t, ps := range partitions {
		topics = append(topics, t)
		for _, p := range ps {
			pending[topicPartition{t, p}] = true
		}
	}
	var lastErr error
	for attempt := 1; len(pending) > 0; attempt++ {
		if attempt > 3 {
			return nil, lastErr
		}
		if attempt > 1 {
			if !retry.Sleep(ctx, retry.Backoff(attempt-1, 100*time.Millisecond, time.Second)) {
				return nil, ctx.Err()
			}
			rctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
			if err := cl.Refresh(rctx, topics...); err != nil {
				lastErr = err
			}
			cancel()
		}
		requests := map[Conn]*protocol.ListOffsetsRequest{}
		for tp := range pending {
			rctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
			c, err := cl.LeaderConn(rctx, tp.topic, tp.partition)
			cancel()
			if err != nil {
				lastErr = err
				continue
			}
			req := requests[c]
			if req == nil {
				req = &protocol.ListOffsetsRequest{
					ReplicaID:      -1,
					IsolationLevel: g.cfg.IsolationLevel,
					TimeoutMs:      int32(g.cfg.Timeout / time.Millisecond),
				}
				requests[c] = req
			}
			addListOffsetsPartition(req, tp)
		}
		for c, req := range requests {
			rctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
			resp, _, err := c.RoundTrip(rctx, req, -1)
			cancel()
			if err != nil {
				lastErr = err
				cl.DropConn(c)
				continue
			}
			for _, t := range resp.(*protocol.ListOffsetsResponse).Topics {
				for _, p := range t.Partitions {
					tp := topicPartition{t.Name, int(p.PartitionIndex)}
					if !pending[tp] {
						continue
					}
					if err := g.deps.Errors.FromCode(p.ErrorCode, ""); err != nil {
						lastErr = fmt.Errorf("listing the last offset of %s: %w", tp, err)
						if !g.deps.Errors.Temporary(err) {
							return nil, lastErr
						}
						continue
					}
					if out[tp.topic] == nil {
						out[tp.topic] = map[int]int64{}
					}
					out[tp.topic][tp.partition] = p.Offset
					delete(pending, tp)
				}
			}
		}
	}
	return out, nil
}

func addListOffsetsPartition(req *protocol.ListOffsetsRequest, tp topicPartition) {
	p := protocol.ListOffsetsRequestPartition{
		PartitionIndex: int32(tp.partition),
		// -1 skips the epoch check: the answer is only used if it comes
		// from the leader, which a stale epoch would not change.
		CurrentLeaderEpoch: -1,
		Timestamp:          LastOffset,
	}
	for i := range req.Topics {
		if req.Topics[i].Name == tp.topic {
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
			return
		}
	}
	req.Topics = append(req.Topics, protocol.ListOffsetsRequestTopic{Name: tp.topic, Partitions: []protocol.ListOffsetsRequestPartition{p}})
}
