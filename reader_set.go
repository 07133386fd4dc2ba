package kafka

import "sync"

// ReaderSet is a set of Readers whose routing is reported together, as the
// metrics integrations (metrics/kafkaprom, metrics/kafkaotel) do: Readers
// sharing a client ID and group ID are summed into one entry. The zero
// value is an empty set; its methods are safe for concurrent use.
type ReaderSet struct {
	mu      sync.Mutex
	readers []*Reader
}

// NewReaderSet returns a set holding readers.
func NewReaderSet(readers ...*Reader) *ReaderSet {
	return &ReaderSet{readers: append([]*Reader(nil), readers...)}
}

// Add adds r to the set.
func (s *ReaderSet) Add(r *Reader) {
	s.mu.Lock()
	s.readers = append(s.readers, r)
	s.mu.Unlock()
}

// Remove removes r from the set (a Reader closed and replaced).
func (s *ReaderSet) Remove(r *Reader) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.readers {
		if x == r {
			s.readers = append(s.readers[:i], s.readers[i+1:]...)
			return
		}
	}
}

// GroupRoutingStats is the routing of the Readers of a set that share a
// client ID (their Dialer's) and a group ID, summed by MergeRoutingStats.
type GroupRoutingStats struct {
	ClientID string
	GroupID  string
	RoutingStats
}

// RoutingStats reads the RoutingStats of every Reader in the set and sums
// those sharing a client and group ID, in the order the first of each was
// added. Every known RerouteReason has an entry (0 until counted), so a
// counter exists before the first move it counts.
func (s *ReaderSet) RoutingStats() []GroupRoutingStats {
	s.mu.Lock()
	readers := append([]*Reader(nil), s.readers...)
	s.mu.Unlock()
	type key struct{ clientID, groupID string }
	var keys []key
	byKey := map[key][]RoutingStats{}
	for _, r := range readers {
		k := key{groupID: r.config.GroupID}
		if r.config.Dialer != nil {
			k.clientID = r.config.Dialer.ClientID
		}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r.RoutingStats())
	}
	out := make([]GroupRoutingStats, 0, len(keys))
	for _, k := range keys {
		st := MergeRoutingStats(byKey[k]...)
		for _, reason := range RerouteReasons() {
			if _, ok := st.Reroutes[reason]; !ok {
				st.Reroutes[reason] = 0
			}
		}
		out = append(out, GroupRoutingStats{ClientID: k.clientID, GroupID: k.groupID, RoutingStats: st})
	}
	return out
}

// LagByTopic sums Lag by topic over the partitions read now (Broker >= 0)
// whose lag is known: a topic's lag without one series per partition.
func (s RoutingStats) LagByTopic() map[string]int64 {
	out := map[string]int64{}
	for _, p := range s.Partitions {
		if p.Broker >= 0 && p.Lag >= 0 {
			out[p.Topic] += p.Lag
		}
	}
	return out
}
