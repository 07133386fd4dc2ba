package kafka

// An idle partition's fetch waits at its broker across long polls that bring
// it nothing (fetchengine.Want.Keep): in an incremental fetch session the
// broker leaves a partition without news out of its answer, and waking the
// fetcher for each such answer, only for it to ask again, was the whole idle
// cost of hundreds of partitions. keep says when the fetcher would decide
// nothing on such an answer.

// keep reports whether f's fetch may go on waiting across an answer that had
// no news for its partition: its router is quiet (routing.Selector.Quiet),
// no metadata read since changed the partition or its topic, no sample of
// the leader's end shows records the replica read has not brought, and the
// rack check does not wait for the leader's answers. The engine calls it
// with its lock held while f waits in Fetch, so f's fields are f's alone.
func (f *fetcher) keep() bool {
	r := f.r
	now := f.now()
	if until, ok := f.router.quiet(now); !ok || !now.Before(until) {
		return false
	}
	if v := r.share.rt.Version(); v != f.metaSeen && v != f.keptMeta {
		p, ok := r.cluster.partition(f.tp.topic, f.tp.partition)
		if _, gen := r.cluster.topicID(f.tp.topic); !ok || (f.topicGen >= 1 && gen != f.topicGen) || !sameRouting(p, f.meta) {
			return false
		}
		f.keptMeta = v
	}
	if e, ok := r.share.rt.LeaderEndSince(f.tp, f.leaderEndSeen); ok && e.HW > f.offset {
		return false
	}
	return !f.awaitsNaming()
}

// awaitsNaming reports whether f reads from a leader outside the client's
// rack while a replica in it is in sync: the leader should name it, and the
// rack check counts the answers in which it does not.
func (f *fetcher) awaitsNaming() bool {
	rack := f.r.config.Rack
	if rack == "" || f.router.current() != f.meta.Leader.ID || f.meta.Leader.Rack == rack {
		return false
	}
	for _, b := range f.meta.Isr {
		if b.Rack == rack {
			return true
		}
	}
	return false
}

// sameRouting reports whether a and b say the same of what routing reads:
// the leader, its epoch and the replicas in each role.
func sameRouting(a, b Partition) bool {
	return a.Leader.ID == b.Leader.ID && a.LeaderEpoch == b.LeaderEpoch && sameIDs(a.Replicas, b.Replicas) &&
		sameIDs(a.Isr, b.Isr) && sameIDs(a.OfflineReplicas, b.OfflineReplicas)
}

func sameIDs(a, b []Broker) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}
