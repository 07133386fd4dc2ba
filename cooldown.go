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
// SKELETON: API fixed, implementation pending (issue 5).
type cooldownCache struct {
	mu    sync.Mutex
	until map[int]time.Time // broker id → end of cooldown
}

func newCooldownCache() *cooldownCache { return &cooldownCache{until: map[int]time.Time{}} }

// fail starts (or extends) broker's cooldown of d from now.
func (c *cooldownCache) fail(broker int, now time.Time, d time.Duration) { panic("not implemented yet") }

// cooling reports whether broker is cooling down at now.
func (c *cooldownCache) cooling(broker int, now time.Time) bool { panic("not implemented yet") }
