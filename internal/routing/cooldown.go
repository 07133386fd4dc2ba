package routing

import (
	"sync"
	"sync/atomic"
	"time"
)

// Cooldowns is the negative cache of rack-aware fetching: a replica that
// failed is not read again, by the partitions it failed for, until its
// cooldown ends — even if a leader keeps naming it (otherwise the reader
// loops leader → follower → failure).
//
// What is cooled down is what failed. A broker-level failure (the dial, the
// connection, a stall, a storage error) keys the whole broker: every
// partition stays away from it. A partition-level error keys the (broker,
// partition) pair: the broker's other partitions keep reading from it.
//
// A cooldown is short at first and grows only when the same replica fails
// again soon after: it starts at cooldownMin and doubles for each failure
// within the cap (ReplicaCooldown) of the end of the previous cooldown, up
// to the cap. The
// end of a cooldown is the probe: the leader's next naming sends reads
// there again, and a failure then earns the next, longer cooldown.
//
// A cooldown also ends early on evidence of health: fresh metadata (or
// the leader's naming: since Kafka 3.4 it names in-sync replicas only)
// showing the replica in the ISR of a partition for which metadata had
// shown it out of the ISR since it failed. A replica the broker dropped
// from the ISR and took back has caught up: it is healthy again, however
// long its cooldown was.
//
// With RequireProbe, a broker-level cooldown ends only once the broker has
// answered a probe (ProbeDue, Probed); the ISR taking it back only makes
// the probe due at once. A killed follower stays in the leader's ISR, and
// is named by it, for up to replica.lag.time.max.ms (30 s by default)
// after it died, so the end of a 2 s cooldown alone would send every
// partition back to a dead broker, fail again, grow the cooldown and use
// up the flap budget the partition needs once the broker is really back.
// A failed probe is tried again 1 s later, then 2 s, doubling up to 30 s
// (cooldown_probe.go).
//
// Nothing is kept about a broker the metadata no longer lists (Listed):
// after a scale-in, or a broker replaced under a new ID, its cooldowns and
// probes would otherwise live as long as the Reader.
//
// Time comes from the callers, so the cache is as deterministic as the
// selectors using it.
type Cooldowns struct {
	mu      sync.Mutex
	probe   bool // broker-level cooldowns wait for a probe (RequireProbe)
	entries map[cooldownKey]*cooldownEntry
	// unproven counts the entries waiting for a probe: ProbeDue, asked
	// after every fetch, takes no lock while there is none.
	unproven atomic.Int32
	// waits: partitions whose client-selected replica is not readable yet,
	// until when (choice.go); they keep metadata fresh too.
	waits map[topicPartition]time.Time
	// version counts the cooldowns started and the probes' outcomes:
	// what can make a quiet route busy again (Version).
	version atomic.Uint64
}

// Version changes whenever a cooldown starts or a probe's outcome is
// recorded: a route found quiet under one version is looked at again
// under the next (consumer.Runtime.KeepEpoch).
func (c *Cooldowns) Version() uint64 {
	if c == nil {
		return 0
	}
	return c.version.Load()
}

// cooldownKey names what failed: a whole broker (tp zero) or the replica
// of one partition on it.
type cooldownKey struct {
	broker int
	tp     topicPartition
}

type cooldownEntry struct {
	until time.Time     // end of the cooldown (not after now: ended)
	dur   time.Duration // length of the latest cooldown, for the growth
	cap   time.Duration
	// seenOut holds the partitions whose metadata showed the replica out
	// of the ISR since the latest failure.
	seenOut map[topicPartition]bool
	// unproven: the cooldown lasts past until, as long as no probe has
	// reached the broker (RequireProbe); nextProbe is when one may start,
	// probing whether one is out, refused how many failed in a row
	// (cooldown_probe.go).
	unproven  bool
	nextProbe time.Time
	probing   bool
	refused   int
	// slow: the latest probe reached the broker over a path too slow to
	// read through (ProbedSlow); the ISR has nothing to say about a path.
	slow bool
	// proven: a probe ended the cooldown (until is when).
	proven bool
}

// provenGrace: a broker whose cooldown a probe ended is judged by its next
// probe, not by its past, once it has served that long: its next cooldown
// starts at cooldownMin again. One that fails sooner fails in a way the
// probe cannot see (a slow disk behind a quick path, say), and its
// cooldowns keep doubling, which damps its reads going back and forth.
const provenGrace = 5 * time.Second

// waiting reports whether the entry still keeps reads away at now.
func (e *cooldownEntry) waiting(now time.Time) bool {
	return now.Before(e.until) || e.unproven
}

// cooldownMin is the first cooldown of a replica that has not failed
// recently: long enough for the ISR to say whether it is gone (the leader
// stops naming a dead replica once it leaves the ISR), short enough that a
// one-off failure costs seconds of cross-rack reads, not minutes.
const cooldownMin = 2 * time.Second

// wholeBroker is the key's partition for broker-level failures.
var wholeBroker = topicPartition{}

func NewCooldowns() *Cooldowns {
	return &Cooldowns{entries: map[cooldownKey]*cooldownEntry{}}
}

// fail starts the cooldown of broker (for partition tp, or the whole broker
// when tp is wholeBroker) at now, and returns its length: cooldownMin, or
// twice the previous one when the replica fails within limit of the end
// of its previous cooldown, never more than limit. A report while the replica is
// still cooling (other partitions seeing the same failure) changes nothing.
func (c *Cooldowns) fail(broker int, tp topicPartition, now time.Time, limit time.Duration) time.Duration {
	if c == nil || limit <= 0 {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[cooldownKey]*cooldownEntry{}
	}
	c.prune(now)
	key := cooldownKey{broker, tp}
	e := c.entries[key]
	if e != nil && e.waiting(now) {
		return max(e.until.Sub(now), 0)
	}
	d := min(cooldownMin, limit)
	if e != nil && now.Sub(e.until) < limit && !(e.proven && now.Sub(e.until) >= provenGrace) {
		d = min(2*e.dur, limit)
	}
	until := now.Add(d)
	ne := &cooldownEntry{until: until, dur: d, cap: limit, unproven: c.probe && tp == wholeBroker, nextProbe: until}
	if ne.unproven {
		c.unproven.Add(1) // e, if any, was not waiting: not unproven
	}
	c.entries[key] = ne
	c.version.Add(1)
	return d
}

// prune forgets entries whose cooldown ended too long ago to make the next
// one grow: the map holds at most the replicas that failed recently.
func (c *Cooldowns) prune(now time.Time) {
	for k, e := range c.entries {
		if !e.unproven && now.Sub(e.until) >= e.cap {
			delete(c.entries, k)
		}
	}
}

// coolingUntil reports whether broker is cooling down at now for partition
// tp (a cooldown of the whole broker or of that pair), and until when.
func (c *Cooldowns) coolingUntil(broker int, tp topicPartition, now time.Time) (time.Time, bool) {
	if c == nil {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var end time.Time
	for _, k := range [2]cooldownKey{{broker, wholeBroker}, {broker, tp}} {
		e := c.entries[k]
		if e == nil || !e.waiting(now) {
			continue
		}
		until := e.until
		if !now.Before(until) {
			// Waiting for a probe: the leader is asked again (and the
			// broker refused again) once per cooldownMin meanwhile.
			until = now.Add(cooldownMin)
		}
		if until.After(end) {
			end = until
		}
	}
	return end, !end.IsZero()
}

// brokerCooling reports whether broker is cooling down at now as a whole
// (a dial, a stall, a lost connection: not one partition's error).
func (c *Cooldowns) brokerCooling(broker int, now time.Time) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[cooldownKey{broker, wholeBroker}]
	return e != nil && e.waiting(now)
}

// cooling reports whether broker is cooling down at now for partition tp.
func (c *Cooldowns) cooling(broker int, tp topicPartition, now time.Time) bool {
	_, ok := c.coolingUntil(broker, tp, now)
	return ok
}

// observeISR folds what fresh metadata (or a leader's naming: inISR) says
// about broker's membership in tp's ISR into the cooldowns of broker and of
// the (broker, tp) pair. It reports whether a cooldown ended.
func (c *Cooldowns) observeISR(broker int, tp topicPartition, inISR bool, now time.Time) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ended := false
	for _, k := range [2]cooldownKey{{broker, wholeBroker}, {broker, tp}} {
		e := c.entries[k]
		if e == nil || !e.waiting(now) {
			continue
		}
		switch {
		case !inISR:
			if e.seenOut == nil {
				e.seenOut = map[topicPartition]bool{}
			}
			e.seenOut[tp] = true
		case e.seenOut[tp] && e.unproven:
			// Not proof for a broker that failed as a whole: a ZooKeeper
			// broker's metadata cache may list a dead broker after another
			// dropped it, and leaders before Kafka 3.4 name replicas out of
			// the ISR (KAFKA-14372). Its time is up; a probe decides now.
			e.seenOut = nil
			e.probeNow(now)
		case e.seenOut[tp]:
			e.until, e.seenOut = now, nil // back in the ISR: healthy
			ended = true
		}
	}
	return ended
}

// Active reports whether the cooldowns want metadata re-read often at now
// (the Reader re-reads it every second meanwhile): a replica cools down,
// and the ISR may end its cooldown (or make its probe due), or a partition
// waits for its client-selected replica (choice.go). A broker that has
// refused its probes for long (longRefused) does not count: it is still
// kept away, and its probe, not the ISR, tells when it is back.
func (c *Cooldowns) Active(now time.Time) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.entries {
		if e.waiting(now) && !e.longRefused(now) && !e.slow {
			return true
		}
	}
	return c.waitingLocked(now)
}

// Listed tells the cooldowns which brokers the latest metadata lists; the
// Reader calls it on every metadata update. A broker it does not list
// (scaled in, replaced under a new ID, or down long enough for the
// controller to drop it) leaves every cooldown and probe: while it is not
// listed no partition's metadata gives it a host, so nothing reads from it
// anyway, and a broker listed again has registered with the controller
// anew. A list without brokers says nothing and changes nothing.
func (c *Cooldowns) Listed(brokers []int) {
	if c == nil || len(brokers) == 0 {
		return
	}
	listed := make(map[int]bool, len(brokers))
	for _, b := range brokers {
		listed[b] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if listed[k.broker] {
			continue
		}
		if e.unproven {
			c.unproven.Add(-1)
		}
		delete(c.entries, k)
	}
}

// size returns the number of entries held, ended ones included until they
// are pruned.
func (c *Cooldowns) size() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
