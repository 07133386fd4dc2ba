package consumer

import (
	"sync"
	"time"
)

// The Members' own periodic work — a partition Reader's lag every
// ReadLagInterval — runs on one goroutine per set, and Members with the
// same interval are served in the same wakeup: hundreds of partition
// Readers cost one timer, not a goroutine and a ticker each.

type periodic struct {
	mu      sync.Mutex
	groups  map[time.Duration]*periodicGroup // by interval
	ids     uint64
	running bool
	wake    chan struct{} // a group with an earlier first run came
}

// periodicGroup is the work of one interval: it runs at due, then every
// interval.
type periodicGroup struct {
	due  time.Time
	jobs map[uint64]func()
}

// Every runs fn every interval (> 0) until stop is called or the runtime
// closes. fn runs on the goroutine the whole set shares, so it must not
// block: work with I/O starts a goroutine of its own. The first run comes
// within one interval: with the others of the same interval.
func (rt *Runtime[TP]) Every(interval time.Duration, fn func()) (stop func()) {
	p := &rt.periodic
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.groups == nil {
		p.groups = map[time.Duration]*periodicGroup{}
		p.wake = make(chan struct{}, 1)
	}
	g := p.groups[interval]
	if g == nil {
		g = &periodicGroup{due: time.Now().Add(interval), jobs: map[uint64]func(){}}
		p.groups[interval] = g
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	p.ids++
	id := p.ids
	g.jobs[id] = fn
	if !p.running && rt.goIfOpen(rt.periodicLoop) {
		p.running = true
	}
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(g.jobs, id)
		if len(g.jobs) == 0 && p.groups[interval] == g {
			delete(p.groups, interval)
		}
	}
}

// periodicLoop runs the work that is due, then sleeps until the next is;
// it ends when no work is left (Every starts it again) or at Close.
func (rt *Runtime[TP]) periodicLoop() {
	p := &rt.periodic
	var run []func()
	for {
		p.mu.Lock()
		if len(p.groups) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		now := time.Now()
		run = run[:0]
		var first time.Time
		for interval, g := range p.groups {
			if !now.Before(g.due) {
				for _, fn := range g.jobs {
					run = append(run, fn)
				}
				if g.due = g.due.Add(interval); g.due.Before(now) {
					g.due = now.Add(interval) // the loop was late: no burst to catch up
				}
			}
			if first.IsZero() || g.due.Before(first) {
				first = g.due
			}
		}
		p.mu.Unlock()
		for _, fn := range run {
			fn()
		}
		clear(run) // a stopped Member's work is not kept alive here
		timer := time.NewTimer(time.Until(first))
		select {
		case <-rt.ctx.Done():
			timer.Stop()
			return
		case <-p.wake:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// goIfOpen runs fn in a goroutine Close joins, unless the runtime is
// closed; it reports whether it did.
func (rt *Runtime[TP]) goIfOpen(fn func()) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return false
	}
	rt.goLocked(fn)
	return true
}
