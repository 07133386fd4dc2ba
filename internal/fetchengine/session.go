package fetchengine

import (
	"math"

	"github.com/rackfetch/kafka-go/protocol"
)

// A loop keeps one incremental fetch session (KIP-227) with its broker
// where the broker supports them (Fetch v7+): after a full fetch that
// creates it, a request lists only the partitions that are new or whose
// offset, leader epoch or max bytes changed, and forgets those not asked
// for; the broker answers only for partitions with news. A partition the
// response leaves out had none: its caller gets an empty answer with the
// watermarks last seen, exactly as a full fetch would have said.
//
// Any failure (a lost connection, a timeout, a session error) starts over
// with a full fetch: after one, the broker's epoch is unknown.

// Session error codes: the broker lost or rejects the session.
const (
	errFetchSessionIDNotFound   = 70
	errInvalidFetchSessionEpoch = 71
	errFetchSessionTopicID      = 106
)

func isSessionError(code int16) bool {
	return code == errFetchSessionIDNotFound || code == errInvalidFetchSessionEpoch || code == errFetchSessionTopicID
}

type session struct {
	id    int32 // 0: none
	epoch int32 // of the next incremental request
	parts map[key]*cached

	// build's working space, kept between requests (an idle poll would
	// otherwise make two maps of every partition).
	in        map[key]bool
	forgotten map[key][16]byte
}

// cached is what the broker's session holds of a partition, and the
// watermarks it last reported.
type cached struct {
	topicID     [16]byte
	offset      int64
	leaderEpoch int32
	maxBytes    int32

	hw, lso, logStart int64
}

func (s *session) reset() {
	s.id, s.epoch = 0, 0
	clear(s.parts)
}

// incremental reports whether the next request continues the session.
func (s *session) incremental() bool { return s.id != 0 }

// build fills req's session fields and partitions for batch: all of them
// in a full fetch (creating a session when use is set), else only the
// changed ones, with the session's others forgotten. It returns the
// partitions listed.
func (s *session) build(req *protocol.FetchRequest, batch []*waiter, use bool) []*waiter {
	if !use {
		s.reset()
		req.SessionID, req.SessionEpoch = 0, -1
		return batch
	}
	if s.parts == nil {
		s.parts = map[key]*cached{}
	}
	if !s.incremental() {
		req.SessionID, req.SessionEpoch = 0, 0 // create one
		return batch
	}
	req.SessionID, req.SessionEpoch = s.id, s.epoch
	if s.in == nil {
		s.in, s.forgotten = map[key]bool{}, map[key][16]byte{}
	}
	in, forgotten := s.in, s.forgotten
	clear(in)
	clear(forgotten)
	var listed []*waiter
	for _, w := range batch {
		k := key{w.want.Topic, w.want.Partition}
		in[k] = true
		c := s.parts[k]
		if c == nil || c.offset != w.want.Offset || c.leaderEpoch != w.want.LeaderEpoch || c.maxBytes != w.maxBytes || c.topicID != w.want.TopicID {
			listed = append(listed, w)
		}
	}
	for k, c := range s.parts {
		if !in[k] {
			forgotten[k] = c.topicID
		}
	}
	topics := map[string]int{}
	for k, id := range forgotten {
		t, ok := topics[k.topic]
		if !ok {
			t = len(req.ForgottenTopics)
			topics[k.topic] = t
			req.ForgottenTopics = append(req.ForgottenTopics, protocol.FetchForgottenTopic{Topic: k.topic, TopicID: id})
		}
		req.ForgottenTopics[t].Partitions = append(req.ForgottenTopics[t].Partitions, k.partition)
	}
	return listed
}

// update records a successful answer to req.
func (s *session) update(req *protocol.FetchRequest, resp *protocol.FetchResponse, listed []*waiter) {
	switch {
	case req.SessionEpoch < 0:
		return
	case req.SessionEpoch == 0:
		clear(s.parts)
		if resp.SessionID == 0 {
			s.id = 0 // the broker keeps none (its cache is full): full fetches
			return
		}
		s.id, s.epoch = resp.SessionID, 1
	default:
		if s.epoch == math.MaxInt32 {
			s.epoch = 1
		} else {
			s.epoch++
		}
		for _, t := range req.ForgottenTopics {
			for _, p := range t.Partitions {
				delete(s.parts, key{t.Topic, p})
			}
		}
	}
	for _, w := range listed {
		s.parts[key{w.want.Topic, w.want.Partition}] = &cached{
			topicID: w.want.TopicID, offset: w.want.Offset, leaderEpoch: w.want.LeaderEpoch, maxBytes: w.maxBytes,
			hw: -1, lso: -1, logStart: -1,
		}
	}
}

// saw records the watermarks of a partition of a response.
func (s *session) saw(k key, p *protocol.FetchResponsePartition) {
	if c := s.parts[k]; c != nil {
		c.hw, c.lso, c.logStart = p.HighWatermark, p.LastStableOffset, p.LogStartOffset
	}
}

// has reports whether the session holds partition k.
func (s *session) has(k key) bool { return s.parts[k] != nil }

// unchanged returns the answer for a partition an incremental response
// left out: no records, the watermarks last seen.
func (s *session) unchanged(k key) *protocol.FetchResponsePartition {
	c := s.parts[k]
	if c == nil {
		return nil
	}
	return &protocol.FetchResponsePartition{PartitionIndex: k.partition, HighWatermark: c.hw, LastStableOffset: c.lso, LogStartOffset: c.logStart, PreferredReadReplica: -1}
}
