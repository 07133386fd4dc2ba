package fakebroker

import (
	"errors"

	"github.com/rackfetch/kafka-go/protocol"
)

// produce appends each partition's batch on the leader. Acks are not
// waited for (followers are in sync at once unless a test pinned their
// high watermark); acks=0 gets no answer at all.
func (b *Broker) produce(r *protocol.ProduceRequest, v int16) protocol.Response {
	c := b.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	resp := &protocol.ProduceResponse{}
	leaders := map[int32]bool{}
	for _, rt := range r.Topics {
		out := protocol.ProduceResponseTopic{Name: rt.Name}
		for _, rp := range rt.Partitions {
			res := protocol.ProduceResponsePartition{Index: rp.Index, BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1}
			pt, code := b.leaderOf(c.topics[rt.Name], rp.Index, -1)
			if code == errNone {
				base, err := pt.appendBatch(rp.Records)
				switch {
				case errors.Is(err, protocol.ErrCRCMismatch):
					code = errCorruptMessage
				case err != nil:
					code = errInvalidRecord
				default:
					res.BaseOffset, res.LogStartOffset = base, pt.logStart
				}
				if err != nil && v >= 8 {
					msg := err.Error()
					res.ErrorMessage = &msg
				}
			}
			if code == errNotLeaderOrFollower && pt != nil && v >= 10 {
				res.CurrentLeader = &protocol.LeaderIDAndEpoch{LeaderID: pt.leader, LeaderEpoch: pt.epoch}
				leaders[pt.leader] = true
			}
			res.ErrorCode = code
			out.Partitions = append(out.Partitions, res)
		}
		resp.Topics = append(resp.Topics, out)
	}
	if r.Acks == 0 {
		return nil
	}
	if v >= 10 {
		resp.NodeEndpoints = c.nodeEndpoints(leaders)
	}
	return resp
}
