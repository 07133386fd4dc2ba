package consumer

import (
	"context"
	"slices"
	"time"
)

// Refresh reads the metadata of topics and counts the refresh, so that
// every fetcher of the set notices it (Version) — unless Config.Changes
// says it changed nothing.
func (rt *Runtime[TP]) Refresh(ctx context.Context, topics ...string) error {
	err := rt.cfg.Refresh(ctx, topics)
	if err == nil {
		rt.refreshed.Store(time.Now().UnixNano())
		if rt.cfg.Changes == nil {
			rt.version.Add(1)
		} else if c := rt.cfg.Changes(); rt.changes.Swap(c) != c || rt.version.Load() == 0 {
			rt.version.Add(1)
		}
	}
	return err
}

// Version counts the refreshes made through Refresh that changed the
// metadata (all of them without Config.Changes).
func (rt *Runtime[TP]) Version() uint64 { return rt.version.Load() }

// Refreshed is when the latest refresh made through Refresh ended.
func (rt *Runtime[TP]) Refreshed() time.Time { return time.Unix(0, rt.refreshed.Load()) }

// metadataLoop re-reads the metadata of the topics the set reads while a
// partition is on a follower or a replica cools down, until Close. It
// sleeps until the next refresh is due; Nudge wakes it when that may have
// changed, and while nothing is due it looks again every CoolingInterval
// (a change nobody nudged for waits no longer than that).
func (rt *Runtime[TP]) metadataLoop() {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-rt.ctx.Done():
			return
		case <-rt.wake:
		case <-timer.C:
		}
		next := rt.refreshIfDue(time.Now())
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// refreshIfDue refreshes the set's topics if the interval it needs now has
// passed since the latest refresh, and returns when to look again.
func (rt *Runtime[TP]) refreshIfDue(now time.Time) time.Duration {
	every := rt.metadataInterval(now)
	if every == 0 {
		return rt.cfg.CoolingInterval()
	}
	if wait := rt.Refreshed().Add(every).Sub(now); wait > 0 {
		return wait
	}
	topics := rt.topics()
	if len(topics) == 0 {
		return every
	}
	if err := rt.Refresh(rt.ctx, topics...); err != nil && rt.ctx.Err() == nil {
		rt.cfg.Errorf("kafka reader: refreshing metadata of %v: %v", topics, err)
	}
	return every
}

// metadataInterval is how often the set must re-read metadata now: 0 when
// no partition is on a follower and nothing cools down.
func (rt *Runtime[TP]) metadataInterval(now time.Time) time.Duration {
	if rt.cooldowns.Active(now) {
		return rt.cfg.CoolingInterval()
	}
	for _, m := range rt.cfg.Members() {
		if m.OnFollower() {
			return rt.cfg.PinnedInterval()
		}
	}
	return 0
}

// topics returns the topics the set reads, each once.
func (rt *Runtime[TP]) topics() []string {
	var out []string
	for _, m := range rt.cfg.Members() {
		for _, t := range m.Topics() {
			// Few topics for many Members: a scan beats a set.
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}
