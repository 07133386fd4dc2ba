package consumer

import (
	"sync"
	"time"
)

// The pace of the high-watermark sampling, per leader.
//
// The lag check needs the leader's end only while the leader has records
// the follower may not: a leader whose high watermarks did not move
// since its last sample has nothing new, so the next sample waits
// QuietSampling; a sample that finds one moved (or fails, or covers a
// partition not sampled before) brings the pace back to Sampling, and so
// does a follower answering with records (Flowing): records flow again, and
// the lag matters again. A partition sampled before and back in the sample
// unchanged does not. What a long QuietSampling gives up: records written
// after a quiet spell to a follower that stopped replicating (so that none
// flow from it) are noticed only when that follower leaves the ISR, which
// Kafka bounds (1.5 × replica.lag.time.max.ms, 45 s by default) and the
// metadata re-read while partitions are on followers sees.
type paces[TP comparable] struct {
	mu    sync.Mutex
	by    map[int]*pace[TP] // by leader
	quiet map[TP]bool       // partitions whose leader is sampled slower than Sampling
}

type pace[TP comparable] struct {
	every time.Duration
	next  time.Time
	hws   map[TP]int64
}

// keep forgets the leaders no partition is read for any more.
func (ps *paces[TP]) keep(byLeader map[int][]TP) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for leader, p := range ps.by {
		if _, ok := byLeader[leader]; !ok {
			for tp := range p.hws {
				delete(ps.quiet, tp)
			}
			delete(ps.by, leader)
		}
	}
}

// due reports whether leader is to be sampled at now for tps, the
// partitions read from its followers: at its pace, or at once when one of
// tps was never sampled (it joined a quiet leader: a group's new
// assignment, a Reader starting), whose lag check has nothing to go on.
func (ps *paces[TP]) due(leader int, tps []TP, now time.Time) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.by[leader]
	return p == nil || !now.Before(p.next) || p.unsampled(tps)
}

// unsampled reports whether one of tps has no high watermark yet; ps.mu
// held.
func (p *pace[TP]) unsampled(tps []TP) bool {
	for _, tp := range tps {
		if _, ok := p.hws[tp]; !ok {
			return true
		}
	}
	return false
}

// nextDue returns when the first of leaders is due (the zero time for one
// with a partition never sampled); false when there is none.
func (ps *paces[TP]) nextDue(byLeader map[int][]TP) (time.Time, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var first time.Time
	any := false
	for leader, tps := range byLeader {
		p := ps.by[leader]
		if p == nil || p.unsampled(tps) {
			return time.Time{}, true
		}
		if !any || p.next.Before(first) {
			first, any = p.next, true
		}
	}
	return first, any
}

// sampled sets leader's pace after a sample at now.
func (ps *paces[TP]) sampled(leader int, hws map[TP]int64, caughtUp map[TP]bool, err error, now time.Time, base, quiet time.Duration) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.by == nil {
		ps.by, ps.quiet = map[int]*pace[TP]{}, map[TP]bool{}
	}
	p := ps.by[leader]
	if p == nil {
		p = &pace[TP]{every: base}
		ps.by[leader] = p
	}
	// A partition's last high watermark is kept while its leader is read
	// for: partitions come and go from the sample as their reads move
	// between the follower and the leader (a lease renewed at the leader),
	// and one coming back unchanged has nothing new.
	if p.hws == nil {
		p.hws = map[TP]int64{}
	}
	// A partition new to the sample counts as moved, unless its readers
	// have already read up to its high watermark: nothing is in flight to
	// them, and a second sample would only say so again.
	moved := err != nil
	for tp, hw := range hws {
		if last, ok := p.hws[tp]; ok && last != hw || !ok && !caughtUp[tp] {
			moved = true
		}
		p.hws[tp] = hw
	}
	switch {
	case moved || quiet <= base:
		p.every = base
	case len(hws) > 0:
		p.every = quiet
	}
	for tp := range p.hws {
		ps.quiet[tp] = p.every > base
	}
	p.next = now.Add(p.every)
}

// Quiet reports whether tp's leader is sampled slower than Sampling: its
// high watermark has not moved for a while.
func (rt *Runtime[TP]) Quiet(tp TP) bool {
	ps := &rt.paces
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.quiet[tp]
}

// Flowing says a follower answered tp's fetch with records: if tp's leader
// is sampled at the quiet pace, it is sampled at once and at Sampling's
// pace again.
func (rt *Runtime[TP]) Flowing(tp TP) {
	if rt.paces.flowing(tp) {
		rt.wakeSampler()
	}
}

// flowing brings tp's leader back to the base pace; it reports whether the
// pace changed.
func (ps *paces[TP]) flowing(tp TP) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.quiet[tp] {
		return false
	}
	for _, p := range ps.by {
		if _, ok := p.hws[tp]; !ok {
			continue
		}
		p.every, p.next = 0, time.Time{}
		for other := range p.hws {
			ps.quiet[other] = false
		}
	}
	return true
}
