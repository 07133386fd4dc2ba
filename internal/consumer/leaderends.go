package consumer

import (
	"sync"
	"sync/atomic"
	"time"
)

// The leaders' high watermarks for the lag check (internal/routing/lag.go):
// nothing in a follower's answers says how far the leader is, so every
// Sampling the runtime asks each leader of the partitions the set reads
// from followers, in one request for all of them. A fetcher hands the
// newest answer for its partition to its router between fetches.

// LeaderEnd is one high watermark read at a partition's leader.
type LeaderEnd struct {
	At  time.Time // when the answer arrived
	HW  int64
	Seq uint64 // orders the answers: LeaderEndSince takes the last one seen
}

// leaderEnds holds the latest leader high watermark read per partition.
type leaderEnds[TP comparable] struct {
	mu   sync.Mutex
	m    map[TP]LeaderEnd
	seq  uint64
	sent atomic.Int64 // requests sent or tried, for measurements
}

func (le *leaderEnds[TP]) put(tp TP, at time.Time, hw int64) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.m == nil {
		le.m = map[TP]LeaderEnd{}
	}
	le.seq++
	le.m[tp] = LeaderEnd{at, hw, le.seq}
}

// LeaderEndSince returns tp's latest high watermark if it is newer than
// the one numbered seen.
func (rt *Runtime[TP]) LeaderEndSince(tp TP, seen uint64) (LeaderEnd, bool) {
	le := &rt.ends
	le.mu.Lock()
	defer le.mu.Unlock()
	e, ok := le.m[tp]
	return e, ok && e.Seq > seen
}

// KeepEpoch changes whenever the share's metadata, a leader's high
// watermark sample or a cooldown changed: what a kept fetch's decision
// rests on besides the time (fetchengine.Config.KeepEpoch). Each count
// only grows, so their sum changes when any does.
func (rt *Runtime[TP]) KeepEpoch() uint64 {
	rt.ends.mu.Lock()
	seq := rt.ends.seq
	rt.ends.mu.Unlock()
	return rt.Version() + seq + rt.cooldowns.Version()
}

// LeaderEndRequests returns the requests the sampler sent.
func (rt *Runtime[TP]) LeaderEndRequests() int64 { return rt.ends.sent.Load() }

// leaderEndsLoop samples the leaders' high watermarks until Close, each
// leader at its pace. It sleeps until the first leader is due, or until
// the routes or a pace change (sampler wake), and samples at most once per
// Sampling: an idle set of hundreds of Readers costs it a wakeup per
// quiet sample, not one per Sampling. Partitions that moved are looked at
// sooner, newcomerSettle after the sampler noticed the move (a fetch
// answer moves its partitions one by one): a partition new to a follower
// is sampled while its readers catch up, so that its leader can turn quiet
// when they have (Reached), rather than a Sampling later.
func (rt *Runtime[TP]) leaderEndsLoop() {
	logged := map[int]string{} // the error last logged, by leader
	// The follower reads are asked of every Member only when a route
	// changed (RoutesChanged); between changes the loop keeps them.
	var (
		reads   followerReads[TP]
		seen    uint64
		built   bool
		last    time.Time // the last look that found a leader due
		noticed time.Time // when a move not yet looked at was noticed
	)
	for {
		var due <-chan time.Time
		var timer *time.Timer
		if at, ok := rt.lookAt(reads, built, seen, last, &noticed); ok {
			timer = time.NewTimer(time.Until(at))
			due = timer.C
		}
		select {
		case <-rt.ctx.Done():
		case <-rt.samplerWake:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
		if rt.ctx.Err() != nil {
			return
		}
		now := time.Now()
		if at, ok := rt.lookAt(reads, built, seen, last, &noticed); !ok || now.Before(at) {
			continue // woken early: wait again for what is due now
		}
		noticed = time.Time{}
		if v := rt.routes.Load(); !built || v != seen {
			seen, built = v, true
			reads = rt.followerReads()
			rt.paces.keep(reads.byLeader)
		}
		for leader, tps := range reads.byLeader {
			if !rt.paces.due(leader, tps, now) {
				continue
			}
			last = now
			hws, caughtUp, err := rt.sampleLeader(leader, tps, reads.members)
			rt.paces.sampled(leader, hws, caughtUp, err, now, rt.cfg.Sampling, rt.cfg.QuietSampling)
			if err == nil || rt.ctx.Err() != nil {
				delete(logged, leader)
				continue
			}
			// Once per leader and error in a row: a new leader may answer
			// the same for seconds, at every sample.
			if msg := err.Error(); logged[leader] != msg {
				logged[leader] = msg
				rt.cfg.Logf("kafka reader: reading the high watermarks of %d partitions at leader %d: %v", len(tps), leader, err)
			}
		}
	}
}

// newcomerSettle is how long the sampler lets a move settle before it
// looks: the partitions of one fetch answer move within it.
const newcomerSettle = 100 * time.Millisecond

// lookAt returns when the sampler looks next: newcomerSettle after it
// noticed that the follower reads changed; else when the first leader is
// due (at once for a partition never sampled), a Sampling after the last
// sample at the earliest. False when no partition reads from a follower.
// noticed is set on the first call that sees a change.
func (rt *Runtime[TP]) lookAt(reads followerReads[TP], built bool, seen uint64, last time.Time, noticed *time.Time) (time.Time, bool) {
	if built && rt.routes.Load() == seen {
		at, ok := rt.paces.nextDue(reads.byLeader)
		return latest(at, last.Add(rt.cfg.Sampling)), ok
	}
	if noticed.IsZero() {
		*noticed = time.Now()
	}
	settle := min(newcomerSettle, rt.cfg.Sampling)
	return latest(noticed.Add(settle), last.Add(settle)), true
}

func latest(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// wakeSampler tells the sampler that what is due changed.
func (rt *Runtime[TP]) wakeSampler() {
	select {
	case rt.samplerWake <- struct{}{}:
	default:
	}
}

// followerReads are the partitions the set reads from a follower now: by
// leader, each once, and the Members reading each.
type followerReads[TP comparable] struct {
	byLeader map[int][]TP
	members  map[TP][]Member[TP]
}

func (rt *Runtime[TP]) followerReads() followerReads[TP] {
	out := followerReads[TP]{byLeader: map[int][]TP{}, members: map[TP][]Member[TP]{}}
	for _, m := range rt.cfg.Members() {
		for leader, tps := range m.FollowerReads() {
			for _, tp := range tps {
				if len(out.members[tp]) == 0 {
					out.byLeader[leader] = append(out.byLeader[leader], tp)
				}
				out.members[tp] = append(out.members[tp], m)
			}
		}
	}
	return out
}

// sampleLeader asks leader for the high watermarks of tps and hands them
// to the Members reading them; caughtUp holds the partitions every Member
// reading them has read up to the answer.
func (rt *Runtime[TP]) sampleLeader(leader int, tps []TP, members map[TP][]Member[TP]) (hws map[TP]int64, caughtUp map[TP]bool, err error) {
	hws, err = rt.cfg.ListEnds(rt.ctx, leader, tps)
	if hws != nil || err != nil {
		rt.ends.sent.Add(1) // nil, nil: nothing to ask (the metadata changed)
	}
	at := time.Now()
	for tp, hw := range hws {
		rt.ends.put(tp, at, hw)
		all := len(members[tp]) > 0
		for _, m := range members[tp] {
			if !m.LeaderHighWatermark(tp, hw) {
				all = false
			}
		}
		if all {
			if caughtUp == nil {
				caughtUp = map[TP]bool{}
			}
			caughtUp[tp] = true
		}
	}
	return hws, caughtUp, err
}
