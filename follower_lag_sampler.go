package kafka

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// The leaders' high watermarks for the lag check (internal/routing/lag.go). While
// partitions read from followers, nothing in the followers' answers says
// how far the leader is: every MaxFollowerLag/8 the runtime sends each of
// their leaders one ListOffsets (latest, read uncommitted: the high
// watermark) for all of them, over the control connection, once per
// share of Readers (consumerRuntime), not per Reader. A fetcher hands
// the newest answer for its partition to its router between fetches.

// leaderEnds holds the latest leader high watermark read per partition.
type leaderEnds struct {
	mu   sync.Mutex
	m    map[topicPartition]leaderEnd
	seq  uint64
	sent atomic.Int64 // ListOffsets requests sent, for measurements
}

type leaderEnd struct {
	at  time.Time // when the answer arrived
	hw  int64
	seq uint64
}

func (le *leaderEnds) put(tp topicPartition, at time.Time, hw int64) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.m == nil {
		le.m = map[topicPartition]leaderEnd{}
	}
	le.seq++
	le.m[tp] = leaderEnd{at, hw, le.seq}
}

// since returns tp's latest sample if it is newer than seen.
func (le *leaderEnds) since(tp topicPartition, seen uint64) (leaderEnd, bool) {
	le.mu.Lock()
	defer le.mu.Unlock()
	e, ok := le.m[tp]
	return e, ok && e.seq > seen
}

// followerLagSampling is how often leaders are asked while partitions
// read from followers; followerLagPoll bounds a follower's long poll.
func (config *ReaderConfig) followerLagSampling() time.Duration { return config.MaxFollowerLag / 8 }
func (config *ReaderConfig) followerLagPoll() time.Duration     { return config.MaxFollowerLag / 4 }

// leaderEndsLoop samples the leaders' high watermarks of the partitions
// the share's Readers read from followers, one request per leader, until
// the runtime stops.
func (rt *consumerRuntime) leaderEndsLoop() {
	tick := time.NewTicker(rt.sampling)
	defer tick.Stop()
	logged := map[int]string{} // the error last logged, by leader
	for {
		select {
		case <-rt.ctx.Done():
			return
		case <-tick.C:
		}
		reads := rt.followerReads()
		for leader, tps := range reads.byLeader {
			err := rt.sampleLeaderEnds(rt.ctx, leader, tps, reads.readers)
			if err == nil || rt.ctx.Err() != nil {
				delete(logged, leader)
				continue
			}
			// Once per leader and error in a row: a new leader may answer
			// the same for seconds, at every sample.
			if msg := err.Error(); logged[leader] != msg {
				logged[leader] = msg
				rt.logf("kafka reader: reading the high watermarks of %d partitions at leader %d: %v", len(tps), leader, err)
			}
		}
	}
}

// shareFollowerReads are the partitions the share's Readers read from a
// follower now: by leader, each once, and the Readers reading each.
type shareFollowerReads struct {
	byLeader map[int][]topicPartition
	readers  map[topicPartition][]*Reader
}

func (rt *consumerRuntime) followerReads() shareFollowerReads {
	out := shareFollowerReads{byLeader: map[int][]topicPartition{}, readers: map[topicPartition][]*Reader{}}
	for _, r := range rt.members() {
		for leader, tps := range r.stats.followerReads() {
			for _, tp := range tps {
				if len(out.readers[tp]) == 0 {
					out.byLeader[leader] = append(out.byLeader[leader], tp)
				}
				out.readers[tp] = append(out.readers[tp], r)
			}
		}
	}
	return out
}

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

// sampleLeaderEnds asks leader for the high watermarks of tps in one
// ListOffsets request; a partition it does not lead (any more) is skipped.
// The Readers reading a partition count its lag (readers).
func (rt *consumerRuntime) sampleLeaderEnds(ctx context.Context, leader int, tps []topicPartition, readers map[topicPartition][]*Reader) error {
	cl := rt.share.cluster
	b, ok := cl.broker(leader)
	if !ok {
		return fmt.Errorf("broker %d is not in the cluster metadata", leader)
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
		return nil
	}
	var failed, stale []string
	err, _ := cl.attempt(ctx, controlTarget{leader, hostPort(b)}, func(ctx context.Context, c *Conn) error {
		failed, stale = failed[:0], stale[:0]
		rt.leaderEnds.sent.Add(1)
		resp, _, err := c.roundTrip(ctx, req, -1)
		if err != nil {
			return err
		}
		at := time.Now()
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
					rt.leaderEnds.put(tp, at, p.Offset)
					for _, r := range readers[tp] {
						r.stats.totals.leaderHighWatermark(tp, p.Offset) // the lag RoutingStats reports
					}
				}
			}
		}
		return nil
	})
	if err == nil && len(failed) > 0 {
		if len(stale) > 0 {
			if rerr := rt.refresh(ctx, stale...); rerr != nil {
				failed = append(failed, fmt.Sprintf("refreshing metadata: %v", rerr))
			}
		}
		err = fmt.Errorf("partition errors: %s", strings.Join(failed, "; "))
	}
	return err
}

// feedLeaderEnd hands the router the newest high watermark read at the
// partition's leader, if any arrived since the last one. It reports false
// when the fetcher must stop.
func (f *fetcher) feedLeaderEnd(ctx context.Context) bool {
	e, ok := f.r.leaderEnds.since(f.tp, f.leaderEndSeen)
	if !ok {
		return true
	}
	f.leaderEndSeen = e.seq
	return f.decide(ctx, leaderHWEvent(f.meta.Leader.ID, e.at, e.hw))
}
