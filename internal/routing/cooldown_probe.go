package routing

import "time"

// Probes: with RequireProbe, a broker-level cooldown whose time is up lasts
// until a probe reaches the broker (cooldown.go says why). A broker that
// keeps refusing its probe is probed less and less often, and stops
// counting as a reason to re-read metadata every second (Active): it is
// either gone, and metadata soon stops listing it (Listed forgets it
// then), or unreachable from here for longer than the ISR can tell.

const (
	// probeGapMin is the wait after the first failed probe of a broker;
	// it doubles with each failed probe in a row, up to probeGapMax.
	probeGapMin = time.Second
	probeGapMax = 30 * time.Second
	// probeLost is when a probe handed out and never reported is handed
	// out again.
	probeLost = 30 * time.Second
)

// probeWait is the wait after the n-th failed probe in a row (n ≥ 1).
func probeWait(n int) time.Duration { return routeBackoffStep(probeGapMin, probeGapMax, n) }

// longRefused reports whether e's broker has refused its probes long
// enough for the wait between them to reach probeGapMax: about half a
// minute of refusals after its cooldown ran out. By then a broker that is
// down has left the metadata of a KRaft cluster (fenced after
// broker.session.timeout.ms, 9 s) or a ZooKeeper one (its session expires
// after zookeeper.session.timeout.ms, 18 s); one still listed and still
// refusing is watched by its probe alone.
func (e *cooldownEntry) longRefused(now time.Time) bool {
	return e.unproven && !now.Before(e.until) && e.refused > 0 && probeWait(e.refused) >= probeGapMax
}

// RequireProbe makes every later broker-level cooldown last until the
// broker answers a probe, however long that takes (the ISR taking it back
// only makes the probe due). The caller probes: ProbeDue names a broker to
// probe, Probed reports the outcome.
func (c *Cooldowns) RequireProbe() {
	c.mu.Lock()
	c.probe = true
	c.mu.Unlock()
}

// ProbeDue returns a broker whose cooldown has run out but waits for a
// probe, and which nobody probes now; the caller must report the outcome
// with Probed. After a failed probe the broker is handed out again
// probeWait later, a wait that doubles with each failure in a row.
func (c *Cooldowns) ProbeDue(now time.Time) (int, bool) {
	if c == nil || c.unproven.Load() == 0 {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if k.tp == wholeBroker && e.unproven && !now.Before(e.until) && !now.Before(e.nextProbe) {
			// Not handed out again until Probed (or a lost probe's time).
			e.nextProbe, e.probing = now.Add(probeLost), true
			return k.broker, true
		}
	}
	return 0, false
}

// Probed reports a probe of broker at now: reached, its cooldown is over;
// not, the next probe waits probeWait of the failures in a row.
func (c *Cooldowns) Probed(broker int, reached bool, now time.Time) {
	c.probed(broker, func(e *cooldownEntry) {
		e.slow = false
		if reached {
			// The cooldown ends now: a failure soon after makes the next grow.
			e.unproven, e.until, e.proven = false, now, true
			c.unproven.Add(-1)
			return
		}
		e.refused++
		e.nextProbe = now.Add(probeWait(e.refused))
	})
}

// probeSlowGap is the wait between the probes of a broker that answers,
// but too slowly for the reads it would serve: the path is watched closely
// so that reads go back soon after it recovers, and the broker is not
// taken for unreachable (its probes do not grow apart).
const probeSlowGap = 2 * time.Second

// ProbedSlow reports a probe of broker at now that reached it over a path
// too slow for the reads it would serve: the cooldown goes on, the next
// probe follows probeSlowGap later, and the broker does not keep metadata
// re-read every second (Active): no ISR change tells of a path.
func (c *Cooldowns) ProbedSlow(broker int, now time.Time) {
	c.probed(broker, func(e *cooldownEntry) {
		e.slow, e.refused = true, 0
		e.nextProbe = now.Add(probeSlowGap)
	})
}

// probed applies a probe's outcome to broker's cooldown, if one waits for
// a probe.
func (c *Cooldowns) probed(broker int, outcome func(e *cooldownEntry)) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[cooldownKey{broker, wholeBroker}]
	if e == nil || !e.unproven {
		return
	}
	e.probing = false
	outcome(e)
	c.version.Add(1)
}

// probeNow makes e's probe due at now (unless one is out already): the
// ISR took its broker back.
func (e *cooldownEntry) probeNow(now time.Time) {
	if now.Before(e.until) {
		e.until = now
	}
	if !e.probing {
		e.nextProbe = now
	}
}
