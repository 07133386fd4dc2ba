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
// QuietSampling; a sample that finds one moved (or fails) brings the pace
// back to Sampling, and so does a follower answering with records or
// lacking the offset asked (Flowing): the lag matters again. A partition
// sampled before and back in the sample unchanged does not. A partition
// new to the sample (or seeded by the leader's answer, Seed) whose readers
// are behind its high watermark keeps the base pace only until a follower
// brings them there (Reached): what the leader had at the sample has then
// reached the follower, which is all a second sample would have shown.
// What a long QuietSampling gives up: records written after a quiet spell
// to a follower that stopped replicating (so that none flow from it) are
// noticed only when that follower leaves the ISR, which Kafka bounds
// (1.5 × replica.lag.time.max.ms, 45 s by default) and the metadata
// re-read while partitions are on followers sees.
type paces[TP comparable] struct {
	mu      sync.Mutex
	by      map[int]*pace[TP] // by leader
	quiet   map[TP]bool       // partitions whose leader is sampled slower than Sampling
	behind  int               // partitions in the behind sets of all leaders
	base    time.Duration     // Sampling and QuietSampling, as the last sample was given them
	quietly time.Duration
}

type pace[TP comparable] struct {
	every time.Duration
	next  time.Time
	at    time.Time // the last sample
	hws   map[TP]int64
	// behind holds the partitions new to the last sample whose readers had
	// not read up to its high watermark, with that mark; the leader turns
	// quiet when the last of them gets there, unless the sample moved.
	behind map[TP]int64
	moved  bool
	failed bool // the last sample failed: the next waits for the pace
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
			ps.behind -= len(p.behind)
			delete(ps.by, leader)
		}
	}
}

// due reports whether leader is to be sampled at now for tps, the
// partitions read from its followers: at its pace, or at once when one of
// tps was never sampled (it joined a quiet leader: a group's new
// assignment, a Reader starting), whose lag check has nothing to go on,
// unless the leader's last sample failed.
func (ps *paces[TP]) due(leader int, tps []TP, now time.Time) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.by[leader]
	return p == nil || !now.Before(p.next) || p.unsampled(tps)
}

// unsampled reports whether one of tps has no high watermark yet; ps.mu
// held.
func (p *pace[TP]) unsampled(tps []TP) bool {
	if p.failed {
		return false
	}
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
	// A partition new to the sample is behind until its readers have read
	// up to its high watermark; one already there has nothing in flight
	// to them, and a second sample would only say so again.
	ps.behind -= len(p.behind)
	clear(p.behind)
	moved := err != nil
	for tp, hw := range hws {
		if last, ok := p.hws[tp]; ok && last != hw {
			moved = true
		} else if !ok && !caughtUp[tp] {
			if p.behind == nil {
				p.behind = map[TP]int64{}
			}
			p.behind[tp] = hw
		}
		p.hws[tp] = hw
	}
	ps.behind += len(p.behind)
	p.moved, p.failed, p.at, ps.base, ps.quietly = moved, err != nil, now, base, quiet
	switch {
	case moved || quiet <= base || len(p.behind) > 0:
		p.every = base
	case len(hws) > 0:
		p.every = quiet
	}
	ps.setQuiet(p)
	p.next = now.Add(p.every)
}

// Seed takes the high watermark leader answered a fetch of tp with, while
// naming a follower to read it from, as tp's first sample. The leader
// names a replica whose log reaches the fetch offset, and from Kafka 3.4
// only an in-sync one, which holds everything below that mark. A partition
// whose readers are there (caughtUp) then needs no sample of its own to let
// its leader turn quiet; one behind keeps the base pace until Reached or
// the next sample. A partition sampled before keeps its sample.
func (rt *Runtime[TP]) Seed(leader int, tp TP, hw int64, caughtUp bool) {
	if rt.cfg.Sampling > 0 {
		rt.paces.seed(leader, tp, hw, caughtUp, time.Now(), rt.cfg.Sampling, rt.cfg.QuietSampling)
	}
}

func (ps *paces[TP]) seed(leader int, tp TP, hw int64, caughtUp bool, now time.Time, base, quiet time.Duration) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.by == nil {
		ps.by, ps.quiet = map[int]*pace[TP]{}, map[TP]bool{}
	}
	ps.base, ps.quietly = base, quiet
	p := ps.by[leader]
	if p == nil {
		p = &pace[TP]{every: max(base, quiet), at: now, next: now.Add(max(base, quiet)), hws: map[TP]int64{}}
		ps.by[leader] = p
	}
	if _, ok := p.hws[tp]; ok {
		return
	}
	p.hws[tp] = hw
	if !caughtUp {
		if p.behind == nil {
			p.behind = map[TP]int64{}
		}
		p.behind[tp] = hw
		ps.behind++
		if p.every > base {
			p.every = base
			if next := now.Add(base); next.Before(p.next) {
				p.next = next
			}
		}
	}
	ps.setQuiet(p)
}

// setQuiet records, for each partition of p, whether p is at the quiet
// pace; ps.mu held.
func (ps *paces[TP]) setQuiet(p *pace[TP]) {
	for tp := range p.hws {
		ps.quiet[tp] = p.every > ps.base
	}
}

// Reached says a follower brought tp's readers to offset. The leader of a
// partition that was behind at its last sample turns quiet once the last of
// them is there and nothing else moved.
func (rt *Runtime[TP]) Reached(tp TP, offset int64) { rt.paces.reached(tp, offset) }

func (ps *paces[TP]) reached(tp TP, offset int64) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.behind == 0 {
		return // the common case: nothing waits for its readers
	}
	for _, p := range ps.by {
		hw, ok := p.behind[tp]
		if !ok || offset < hw {
			continue
		}
		delete(p.behind, tp)
		ps.behind--
		if len(p.behind) == 0 && !p.moved && ps.quietly > p.every {
			p.every, p.next = ps.quietly, p.at.Add(ps.quietly)
			ps.setQuiet(p)
		}
	}
}

// Quiet reports whether tp's leader is sampled slower than Sampling: its
// high watermark has not moved for a while.
func (rt *Runtime[TP]) Quiet(tp TP) bool {
	ps := &rt.paces
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.quiet[tp]
}

// Flowing says a follower answered tp's fetch with records, or lacks the
// offset asked (OffsetOutOfRange): the lag check matters again. If tp's
// leader is sampled at the quiet pace, it is sampled at once and at
// Sampling's pace again.
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
