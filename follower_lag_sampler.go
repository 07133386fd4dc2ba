package kafka

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// The leaders' high watermarks for the lag check (internal/routing/lag.go). While
// partitions read from followers, nothing in the followers' answers says
// how far the leader is: every MaxFollowerLag/8 the share's runtime
// (internal/consumer, once per share of Readers, not per Reader) sends each
// of their leaders one ListOffsets (latest, read uncommitted: the high
// watermark) for all of them, over the control connection. A fetcher hands
// the newest answer for its partition to its router between fetches.

// followerLagSampling is how often leaders are asked while partitions
// read from followers; followerLagPoll bounds a follower's long poll.
func (config *ReaderConfig) followerLagSampling() time.Duration { return config.MaxFollowerLag / 8 }
func (config *ReaderConfig) followerLagPoll() time.Duration     { return config.MaxFollowerLag / 4 }

// followerReads returns the partitions read from a follower now, by
// leader.
func (s *readerStats) followerReads() map[int][]topicPartition {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int][]topicPartition{}
	for tp, rs := range s.routing {
		if rs.broker >= 0 && rs.leader >= 0 && rs.broker != rs.leader {
			out[rs.leader] = append(out[rs.leader], tp)
		}
	}
	return out
}

// listLeaderEnds asks leader for the high watermarks of tps in one
// ListOffsets request and returns those it answered; a partition it does
// not lead (any more) is skipped.
func (s *engineShare) listLeaderEnds(ctx context.Context, leader int, tps []topicPartition) (map[topicPartition]int64, error) {
	cl := s.cluster
	b, ok := cl.broker(leader)
	if !ok {
		return nil, fmt.Errorf("broker %d is not in the cluster metadata", leader)
	}
	req := &protocol.ListOffsetsRequest{ReplicaID: -1}
	for _, tp := range tps {
		p, ok := cl.partition(tp.topic, tp.partition)
		if !ok || p.Leader.ID != leader {
			continue
		}
		req.AddPartition(tp.topic, protocol.ListOffsetsRequestPartition{
			PartitionIndex: int32(tp.partition), CurrentLeaderEpoch: int32(p.LeaderEpoch), Timestamp: LastOffset,
		})
	}
	if len(req.Topics) == 0 {
		return nil, nil
	}
	var failed, stale []string
	hws := map[topicPartition]int64{}
	err, _ := cl.attempt(ctx, controlTarget{leader, hostPort(b)}, func(ctx context.Context, c *Conn) error {
		failed, stale = failed[:0], stale[:0]
		resp, _, err := c.roundTrip(ctx, req, -1)
		if err != nil {
			return err
		}
		for _, t := range resp.(*protocol.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				tp := topicPartition{t.Name, int(p.PartitionIndex)}
				if p.ErrorCode != 0 {
					// A lag nobody samples is a lag nobody bounds: say so,
					// and re-read metadata when it is stale. (A new leader
					// answers OFFSET_NOT_AVAILABLE until its high watermark
					// reaches its epoch's start, KIP-207: nothing to refresh.)
					kerr := Error(p.ErrorCode)
					failed = append(failed, fmt.Sprintf("%s: %v", tp, kerr))
					switch kerr {
					case NotLeaderForPartition, FencedLeaderEpoch, UnknownLeaderEpoch, UnknownTopicOrPartition:
						if len(stale) == 0 || stale[len(stale)-1] != t.Name {
							stale = append(stale, t.Name)
						}
					}
					continue
				}
				if p.Offset >= 0 {
					hws[tp] = p.Offset
				}
			}
		}
		return nil
	})
	if err == nil && len(failed) > 0 {
		if len(stale) > 0 {
			if rerr := s.rt.Refresh(ctx, stale...); rerr != nil {
				failed = append(failed, fmt.Sprintf("refreshing metadata: %v", rerr))
			}
		}
		err = fmt.Errorf("partition errors: %s", strings.Join(failed, "; "))
	}
	return hws, err
}

// feedLeaderEnd hands the router the newest high watermark read at the
// partition's leader, if any arrived since the last one. It reports false
// when the fetcher must stop.
func (f *fetcher) feedLeaderEnd(ctx context.Context) bool {
	e, ok := f.r.share.rt.LeaderEndSince(f.tp, f.leaderEndSeen)
	if !ok {
		return true
	}
	f.leaderEndSeen = e.Seq
	return f.decide(ctx, leaderHWEvent(f.meta.Leader.ID, e.At, e.HW))
}
