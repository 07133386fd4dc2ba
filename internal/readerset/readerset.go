// Package readerset is the set of Readers a metrics integration reports
// (metrics/prometheus, metrics/otel: nested modules, which may import the
// library's internal packages), summed per client and group ID.
package readerset

import (
	"sync"

	kafka "github.com/rackfetch/kafka-go"
)

// Set is a set of Readers, safe for concurrent use.
type Set struct {
	mu      sync.Mutex
	readers []*kafka.Reader
}

// New returns a set of readers.
func New(readers ...*kafka.Reader) *Set {
	return &Set{readers: append([]*kafka.Reader(nil), readers...)}
}

// Add adds r.
func (s *Set) Add(r *kafka.Reader) {
	s.mu.Lock()
	s.readers = append(s.readers, r)
	s.mu.Unlock()
}

// Remove removes r.
func (s *Set) Remove(r *kafka.Reader) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.readers {
		if x == r {
			s.readers = append(s.readers[:i], s.readers[i+1:]...)
			return
		}
	}
}

// Group is the routing of the Readers sharing a client and group ID,
// summed (kafka.MergeRoutingStats). Every known reroute reason has an
// entry (0 until counted), so counters exist before their first move.
type Group struct {
	ClientID, GroupID string
	Stats             kafka.RoutingStats
}

// Groups reads every Reader's RoutingStats, in the order the groups were
// first added.
func (s *Set) Groups() []Group {
	s.mu.Lock()
	readers := append([]*kafka.Reader(nil), s.readers...)
	s.mu.Unlock()
	type key struct{ clientID, groupID string }
	var keys []key
	byKey := map[key][]kafka.RoutingStats{}
	for _, r := range readers {
		cfg := r.Config()
		k := key{groupID: cfg.GroupID}
		if cfg.Dialer != nil {
			k.clientID = cfg.Dialer.ClientID
		}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r.RoutingStats())
	}
	out := make([]Group, 0, len(keys))
	for _, k := range keys {
		st := kafka.MergeRoutingStats(byKey[k]...)
		for _, reason := range kafka.RerouteReasons() {
			if _, ok := st.Reroutes[reason]; !ok {
				st.Reroutes[reason] = 0
			}
		}
		out = append(out, Group{ClientID: k.clientID, GroupID: k.groupID, Stats: st})
	}
	return out
}
