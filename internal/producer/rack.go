package producer

import (
	"sync"

	"github.com/rackfetch/kafka-go/internal/metadata"
)

// RackView is what the rack-local partition set reads of the metadata.
type RackView interface {
	// Changes moves whenever a merge may have changed what the view holds.
	Changes() uint64
	TopicPartitions(topic string) ([]metadata.Partition, bool)
	Racks() map[int]string
}

// RackPartitions caches, per topic, the partitions whose leader is in a
// rack (KIP-1123's rack-aware partitioning), recomputed only when the
// metadata changed: a Writer asks once per topic per WriteMessages call.
type RackPartitions struct {
	mu sync.Mutex
	by map[string]*rackSet
}

type rackSet struct {
	changes uint64
	rack    string
	count   int
	ids     []int // never modified once built: callers keep it
}

// Of returns the partitions below count of topic whose leader is in rack,
// in id order; nil when there is none (a leader moved away, or metadata
// does not know the topic yet).
func (rp *RackPartitions) Of(view RackView, topic, rack string, count int) []int {
	changes := view.Changes()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if s := rp.by[topic]; s != nil && s.changes == changes && s.rack == rack && s.count == count {
		return s.ids
	}
	s := &rackSet{changes: changes, rack: rack, count: count, ids: LocalPartitions(view, topic, rack, count)}
	if rp.by == nil {
		rp.by = map[string]*rackSet{}
	}
	rp.by[topic] = s
	return s.ids
}

// LocalPartitions returns the partitions below count of topic whose leader
// is in rack, in id order.
func LocalPartitions(view RackView, topic, rack string, count int) []int {
	parts, ok := view.TopicPartitions(topic)
	if !ok {
		return nil
	}
	racks := view.Racks()
	var ids []int
	for _, p := range parts {
		if p.ID < count && p.Leader.ID >= 0 && p.ErrorCode == 0 && racks[p.Leader.ID] == rack {
			ids = append(ids, p.ID)
		}
	}
	return ids
}
