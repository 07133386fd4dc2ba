package fakebroker

import (
	"slices"

	"github.com/rackfetch/kafka-go/protocol"
)

// fetch serves records from the log. Consumer fetches v11+ may be served by
// any replica (KIP-392); older ones and replica fetches only by the leader.
// The fake never waits for MinBytes: it answers at once.
func (b *Broker) fetch(r *protocol.FetchRequest, v int16) *protocol.FetchResponse {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	budget := &fetchBudget{left: int64(r.MaxBytes)}
	resp := &protocol.FetchResponse{}
	leaders := map[int32]bool{}
	for _, rt := range r.Topics {
		var t *topic
		if v >= 13 {
			t = c.topicByID(rt.TopicID)
		} else {
			t = c.topics[rt.Topic]
		}
		out := protocol.FetchResponseTopic{Topic: rt.Topic, TopicID: rt.TopicID}
		for _, rp := range rt.Partitions {
			res := b.fetchPartition(t, rp, r, v, budget)
			if res.CurrentLeader != nil && res.CurrentLeader.LeaderID >= 0 {
				leaders[res.CurrentLeader.LeaderID] = true
			}
			out.Partitions = append(out.Partitions, res)
		}
		resp.Topics = append(resp.Topics, out)
	}
	if v >= 16 {
		resp.NodeEndpoints = c.nodeEndpoints(leaders)
	}
	return resp
}

func (b *Broker) fetchPartition(t *topic, rp protocol.FetchRequestPartition, r *protocol.FetchRequest, v int16, budget *fetchBudget) protocol.FetchResponsePartition {
	res := protocol.FetchResponsePartition{
		PartitionIndex:       rp.Partition,
		HighWatermark:        -1,
		LastStableOffset:     -1,
		LogStartOffset:       -1,
		PreferredReadReplica: -1,
	}
	pt, code := b.replicaOf(t, rp.Partition, v >= 13)
	if code == errNone && v >= 9 {
		code = pt.checkEpoch(rp.CurrentLeaderEpoch)
	}
	consumer := r.ReplicaID < 0
	if code == errNone && pt.leader != b.id && (v < 11 || !consumer) {
		code = errNotLeaderOrFollower
	}
	if code != errNone {
		res.ErrorCode = code
		if pt != nil && v >= 16 && (code == errNotLeaderOrFollower || code == errFencedLeaderEpoch) {
			res.CurrentLeader = &protocol.LeaderIDAndEpoch{LeaderID: pt.leader, LeaderEpoch: pt.epoch}
		}
		return res
	}
	hw := pt.hw(b.id)
	res.HighWatermark, res.LastStableOffset, res.LogStartOffset = hw, hw, pt.logStart

	if consumer && v >= 11 && pt.leader == b.id {
		if id := b.preferredReadReplica(pt, r.RackID, rp.FetchOffset); id >= 0 {
			// Kafka skips the read: the client moves to the replica.
			res.PreferredReadReplica = id
			return res
		}
	}
	if v >= 12 && rp.LastFetchedEpoch >= 0 {
		// KIP-320/595: tell a fetcher whose log diverged where to truncate.
		epoch, end := pt.endOffsetFor(rp.LastFetchedEpoch)
		if epoch < rp.LastFetchedEpoch || end < rp.FetchOffset {
			res.DivergingEpoch = &protocol.FetchEpochEndOffset{Epoch: epoch, EndOffset: end}
			return res
		}
	}
	if rp.FetchOffset < pt.logStart || rp.FetchOffset > pt.leo(b.id) {
		res.ErrorCode = errOffsetOutOfRange
		return res
	}
	res.Records = pt.read(rp.FetchOffset, hw, int64(rp.PartitionMaxBytes), budget)
	return res
}

// replicaOf returns the partition if broker b hosts it, else an error code.
func (b *Broker) replicaOf(t *topic, p int32, byID bool) (*partition, int16) {
	if t == nil {
		if byID {
			return nil, errUnknownTopicID
		}
		return nil, errUnknownTopicOrPartition
	}
	if p < 0 || int(p) >= len(t.partitions) {
		return nil, errUnknownTopicOrPartition
	}
	pt := t.partitions[p]
	if !slices.Contains(pt.replicas, b.id) || slices.Contains(pt.offline, b.id) {
		return pt, errNotLeaderOrFollower
	}
	return pt, errNone
}

// leaderOf is replicaOf for requests only the leader serves, with the
// current leader epoch check.
func (b *Broker) leaderOf(t *topic, p int32, currentEpoch int32) (*partition, int16) {
	pt, code := b.replicaOf(t, p, false)
	if code != errNone {
		return pt, code
	}
	if code := pt.checkEpoch(currentEpoch); code != errNone {
		return pt, code
	}
	if pt.leader != b.id {
		return pt, errNotLeaderOrFollower
	}
	return pt, errNone
}

// preferredReadReplica mirrors Kafka's RackAwareReplicaSelector as the
// leader applies it: among in-sync, live replicas whose log holds offset,
// those in the client's rack; the leader if it is one of them (or none
// is), else the most caught-up (ties: lowest id). -1 means the leader.
func (b *Broker) preferredReadReplica(pt *partition, rack string, offset int64) int32 {
	c := b.cluster
	if !c.selector || rack == "" || b.rack == rack {
		return -1
	}
	best, bestLEO := int32(-1), int64(-1)
	for _, id := range pt.isr {
		br := c.Broker(id)
		if id == b.id || br == nil || br.rack != rack || !br.seenUp() || slices.Contains(pt.offline, id) {
			continue
		}
		leo := pt.leo(id)
		if pt.logStart > offset || leo < offset {
			continue
		}
		if leo > bestLEO || (leo == bestLEO && id < best) {
			best, bestLEO = id, leo
		}
	}
	return best
}

// fetchBudget is what is left of a fetch's MaxBytes.
type fetchBudget struct {
	left    int64
	gotData bool // the response already holds records
}

// read returns the batches holding offsets from off up to (excluding) hw,
// within the partition's max bytes and the response budget; the first
// batch of a response is returned whatever its size (KIP-74).
func (pt *partition) read(off, hw, partMax int64, bud *fetchBudget) []byte {
	limit := min(partMax, bud.left)
	var out []byte
	for _, sb := range pt.log {
		if sb.last < off {
			continue
		}
		if sb.base >= hw {
			break
		}
		if int64(len(out)+len(sb.data)) > limit && (len(out) > 0 || bud.gotData) {
			break
		}
		out = append(out, sb.data...)
	}
	if len(out) > 0 {
		bud.gotData = true
		bud.left -= int64(len(out))
	}
	return out
}

func (c *Cluster) nodeEndpoints(ids map[int32]bool) []protocol.NodeEndpoint {
	var eps []protocol.NodeEndpoint
	for _, br := range c.brokers {
		if !ids[br.id] {
			continue
		}
		if ep, ok := c.nodeEndpoint(br.id); ok {
			eps = append(eps, ep)
		}
	}
	return eps
}

// listOffsets answers on the leader only: -1 latest (the high watermark),
// -2 earliest, -3 the record with the largest timestamp, -4 earliest
// local, or the first offset with a timestamp at or after the one asked.
func (b *Broker) listOffsets(r *protocol.ListOffsetsRequest, v int16) *protocol.ListOffsetsResponse {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &protocol.ListOffsetsResponse{}
	for _, rt := range r.Topics {
		out := protocol.ListOffsetsResponseTopic{Name: rt.Name}
		for _, rp := range rt.Partitions {
			res := protocol.ListOffsetsResponsePartition{PartitionIndex: rp.PartitionIndex, Timestamp: -1, Offset: -1, LeaderEpoch: -1}
			epoch := int32(-1)
			if v >= 4 {
				epoch = rp.CurrentLeaderEpoch
			}
			pt, code := b.leaderOf(c.topics[rt.Name], rp.PartitionIndex, epoch)
			if code == errNone {
				res.Timestamp, res.Offset, res.LeaderEpoch, code = pt.lookup(rp.Timestamp)
			}
			res.ErrorCode = code
			out.Partitions = append(out.Partitions, res)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return resp
}

// lookup resolves a ListOffsets timestamp on the leader.
func (pt *partition) lookup(ts int64) (timestamp, offset int64, epoch int32, code int16) {
	hw := pt.hw(pt.leader)
	switch {
	case ts == -1:
		return -1, hw, pt.epoch, errNone
	case ts == -2 || ts == -4:
		return -1, pt.logStart, pt.epochAt(pt.logStart), errNone
	case ts == -3:
		best, bestTS := int64(-1), int64(-1)
		pt.eachRecord(func(off, t int64) {
			if off < hw && t > bestTS {
				best, bestTS = off, t
			}
		})
		if best < 0 {
			return -1, -1, -1, errNone
		}
		return bestTS, best, pt.epochAt(best), errNone
	case ts < 0:
		return -1, -1, -1, errInvalidRequest
	}
	found, foundTS := int64(-1), int64(-1)
	pt.eachRecord(func(off, t int64) {
		if found < 0 && off < hw && t >= ts {
			found, foundTS = off, t
		}
	})
	if found < 0 {
		return -1, -1, -1, errNone
	}
	return foundTS, found, pt.epochAt(found), errNone
}

// eachRecord calls fn for every record at or after the log start.
func (pt *partition) eachRecord(fn func(offset, timestamp int64)) {
	for _, sb := range pt.log {
		for _, st := range sb.stamps {
			if st.offset >= pt.logStart {
				fn(st.offset, st.timestamp)
			}
		}
	}
}

// epochAt is the leader epoch in which offset was written.
func (pt *partition) epochAt(offset int64) int32 {
	e := int32(-1)
	for _, es := range pt.epochs {
		if es.start <= offset {
			e = es.epoch
		}
	}
	return e
}

// offsetForLeaderEpoch answers on the leader only.
func (b *Broker) offsetForLeaderEpoch(r *protocol.OffsetForLeaderEpochRequest) *protocol.OffsetForLeaderEpochResponse {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &protocol.OffsetForLeaderEpochResponse{}
	for _, rt := range r.Topics {
		out := protocol.OffsetForLeaderEpochResponseTopic{Topic: rt.Topic}
		for _, rp := range rt.Partitions {
			res := protocol.OffsetForLeaderEpochResponsePartition{Partition: rp.Partition, LeaderEpoch: -1, EndOffset: -1}
			pt, code := b.leaderOf(c.topics[rt.Topic], rp.Partition, rp.CurrentLeaderEpoch)
			if code == errNone {
				res.LeaderEpoch, res.EndOffset = pt.endOffsetFor(rp.LeaderEpoch)
			}
			res.ErrorCode = code
			out.Partitions = append(out.Partitions, res)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return resp
}
