package kafka

import "sort"

// MergeRoutingStats sums the routing counters of several Readers, for
// instance one Reader per partition of a topic, as metrics collectors
// report them under one set of labels. A partition present in several is
// described by the one reading it now (Broker >= 0), else by the first;
// Rack is the first non-empty one.
func MergeRoutingStats(stats ...RoutingStats) RoutingStats {
	out := RoutingStats{RackBytes: map[string]int64{}, Reroutes: map[RerouteReason]int64{}}
	brokers := map[int]int{}               // id → index in out.Brokers
	partitions := map[topicPartition]int{} // → index in out.Partitions
	for _, s := range stats {
		if out.Rack == "" {
			out.Rack = s.Rack
		}
		out.Bytes += s.Bytes
		out.SameRackBytes += s.SameRackBytes
		out.CrossRackBytes += s.CrossRackBytes
		for rack, n := range s.RackBytes {
			out.RackBytes[rack] += n
		}
		for reason, n := range s.Reroutes {
			out.Reroutes[reason] += n
		}
		for _, ri := range s.RackInactive {
			if !hasRackCause(out.RackInactive, ri.Cause) {
				out.RackInactive = append(out.RackInactive, ri)
			}
		}
		for _, b := range s.Brokers {
			i, ok := brokers[b.ID]
			if !ok {
				brokers[b.ID] = len(out.Brokers)
				out.Brokers = append(out.Brokers, b)
				continue
			}
			out.Brokers[i].Bytes += b.Bytes
			if b.Rack != "" {
				out.Brokers[i].Rack = b.Rack
			}
		}
		for _, p := range s.Partitions {
			tp := topicPartition{p.Topic, p.Partition}
			i, ok := partitions[tp]
			if !ok {
				partitions[tp] = len(out.Partitions)
				p.Reroutes = copyReroutes(p.Reroutes)
				out.Partitions = append(out.Partitions, p)
				continue
			}
			merged := &out.Partitions[i]
			if merged.Broker < 0 && p.Broker >= 0 {
				merged.Broker, merged.BrokerRack, merged.Leader = p.Broker, p.BrokerRack, p.Leader
				merged.Offset, merged.HighWatermark, merged.Lag = p.Offset, p.HighWatermark, p.Lag
			}
			merged.Bytes += p.Bytes
			merged.SameRackBytes += p.SameRackBytes
			merged.CrossRackBytes += p.CrossRackBytes
			for reason, n := range p.Reroutes {
				merged.Reroutes[reason] += n
			}
		}
	}
	sort.Slice(out.Brokers, func(i, j int) bool { return out.Brokers[i].ID < out.Brokers[j].ID })
	sortPartitionRoutingStats(out.Partitions)
	return out
}

func hasRackCause(found []RackInactive, c RackInactiveCause) bool {
	for _, ri := range found {
		if ri.Cause == c {
			return true
		}
	}
	return false
}

func copyReroutes(m map[RerouteReason]int64) map[RerouteReason]int64 {
	out := make(map[RerouteReason]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortPartitionRoutingStats(ps []PartitionRoutingStats) {
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Topic != ps[j].Topic {
			return ps[i].Topic < ps[j].Topic
		}
		return ps[i].Partition < ps[j].Partition
	})
}
