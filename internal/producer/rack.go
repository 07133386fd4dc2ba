package producer

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/metadata"
)

// RackView is what the rack-local partition set reads of the metadata.
type RackView interface {
	// Changes moves whenever a merge may have changed what the view holds.
	Changes() uint64
	TopicPartitions(topic string) ([]metadata.Partition, bool)
	Racks() map[int]string
}

// RackChoice is what a writer in a rack may use of a topic (KIP-1123's
// rack-aware partitioning).
type RackChoice struct {
	// Local lists the partitions for the rack's freely placed messages, in
	// id order: those led in the rack, topped up by the skew guard with
	// partitions led elsewhere; nil when the rack leads none (every
	// partition is then used). Never modified once built: callers keep it.
	Local []int
	// Led is how many partitions the rack leads.
	Led int
	// Displaced: a partition whose preferred leader (its first replica)
	// is in the rack is led elsewhere, after a failure or a restart. The
	// leadership comes back with a preferred leader election, which only
	// a metadata read shows.
	Displaced bool
	// DisplacedSince is when RackPartitions first saw the rack displaced,
	// without a break since (zero when not displaced, or from ChooseRack).
	DisplacedSince time.Time
}

// DefaultRackMinShare is the skew guard's default: a rack's writes go to
// at least half its fair share of a topic's partitions (partitions divided
// by the racks that hold replicas), so that none takes more than twice
// the share of them it takes when leadership is balanced.
const DefaultRackMinShare = 0.5

// RackPartitions caches, per topic, the RackChoice of a rack, recomputed
// only when the metadata changed: a Writer asks once per topic per
// WriteMessages call.
type RackPartitions struct {
	mu sync.Mutex
	by map[string]*rackSet
}

type rackSet struct {
	changes  uint64
	rack     string
	count    int
	minShare float64
	choice   RackChoice
}

// Of returns the choice of a writer in rack among the partitions below
// count of topic; minShare is the skew guard (see ChooseRack).
func (rp *RackPartitions) Of(view RackView, topic, rack string, count int, minShare float64) RackChoice {
	changes := view.Changes()
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if s := rp.by[topic]; s != nil && s.changes == changes && s.rack == rack && s.count == count && s.minShare == minShare {
		return s.choice
	}
	s := &rackSet{changes: changes, rack: rack, count: count, minShare: minShare,
		choice: ChooseRack(view, topic, rack, count, minShare)}
	if s.choice.Displaced {
		s.choice.DisplacedSince = time.Now()
		if old := rp.by[topic]; old != nil && old.rack == rack && old.choice.Displaced {
			s.choice.DisplacedSince = old.choice.DisplacedSince
		}
	}
	if rp.by == nil {
		rp.by = map[string]*rackSet{}
	}
	rp.by[topic] = s
	return s.choice
}

// ChooseRack computes the choice of a writer in rack among the partitions
// below count of topic. When the rack leads fewer than minShare of its fair
// share of them (but at least one), partitions led elsewhere are added up
// to that many: first those whose preferred leader is in the rack (they
// return to it at the next preferred leader election), then the lowest
// ids. minShare 0 or less is KIP-1123's plain rule: the rack's partitions,
// however few.
func ChooseRack(view RackView, topic, rack string, count int, minShare float64) RackChoice {
	parts, ok := view.TopicPartitions(topic)
	if !ok {
		return RackChoice{}
	}
	racks := view.Racks()
	var c RackChoice
	var displaced, others []int
	holding := map[string]bool{} // racks holding replicas of the topic
	for _, p := range parts {
		if p.ID >= count {
			continue
		}
		for _, r := range p.Replicas {
			if rk := racks[r.ID]; rk != "" {
				holding[rk] = true
			}
		}
		switch {
		case p.Leader.ID >= 0 && p.ErrorCode == 0 && racks[p.Leader.ID] == rack:
			c.Local = append(c.Local, p.ID)
		case len(p.Replicas) > 0 && racks[p.Replicas[0].ID] == rack:
			c.Displaced = true
			displaced = append(displaced, p.ID)
		default:
			others = append(others, p.ID)
		}
	}
	slices.Sort(c.Local) // the metadata need not list partitions in order
	c.Led = len(c.Local)
	if minShare <= 0 || c.Led == 0 || len(holding) == 0 {
		return c
	}
	want := int(math.Ceil(minShare * float64(count) / float64(len(holding))))
	if c.Led >= want {
		return c
	}
	slices.Sort(displaced)
	slices.Sort(others)
	add := append(displaced, others...)
	c.Local = append(c.Local, add[:min(want-c.Led, len(add))]...)
	slices.Sort(c.Local)
	return c
}
