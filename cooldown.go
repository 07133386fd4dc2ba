package kafka

import (
	"sync"
	"time"
)

// cooldownCache is the negative cache of rack-aware fetching: a replica that
// failed is not used again, by any partition of the Reader, until its
// cooldown ends — even if the leader keeps naming it (otherwise the reader
// loops leader → follower → failure).
//
// Time comes from the callers, so the cache is as deterministic as the
// selectors using it. Entries are dropped once expired: the map holds at
// most the brokers that failed within the last cooldown.
type cooldownCache struct {
	mu    sync.Mutex
	until map[int]time.Time // broker id → end of cooldown
}

func newCooldownCache() *cooldownCache { return &cooldownCache{until: map[int]time.Time{}} }

// fail starts (or extends) broker's cooldown of d from now. A cooldown is
// never shortened: the end is max(existing end, now+d).
func (c *cooldownCache) fail(broker int, now time.Time, d time.Duration) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.until == nil {
		c.until = map[int]time.Time{}
	}
	// Dropping expired entries here bounds the map by the number of
	// brokers that failed recently, even if nobody asks about them again.
	for id, end := range c.until {
		if !now.Before(end) {
			delete(c.until, id)
		}
	}
	end := now.Add(d)
	if !now.Before(end) {
		return // a cooldown of zero or less is none
	}
	if old, ok := c.until[broker]; ok && old.After(end) {
		return
	}
	c.until[broker] = end
}

// cooling reports whether broker is cooling down at now.
func (c *cooldownCache) cooling(broker int, now time.Time) bool {
	_, ok := c.coolingUntil(broker, now)
	return ok
}

// coolingUntil returns the end of broker's cooldown when it is cooling at
// now. An expired entry is dropped.
func (c *cooldownCache) coolingUntil(broker int, now time.Time) (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	end, ok := c.until[broker]
	if !ok {
		return time.Time{}, false
	}
	if !now.Before(end) {
		delete(c.until, broker)
		return time.Time{}, false
	}
	return end, true
}

// size returns the number of entries held (expired ones included until
// the next fail or lookup drops them).
func (c *cooldownCache) size() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.until)
}
