package routing

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	cdT0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	cdP0 = topicPartition{"t", 0}
	cdP1 = topicPartition{"t", 1}
)

func cdAt(d time.Duration) time.Time { return cdT0.Add(d) }

func TestCooldownFirstFailureIsShort(t *testing.T) {
	c := NewCooldowns()
	assert.False(t, c.cooling(1, cdP0, cdT0))
	require.Equal(t, cooldownMin, c.fail(1, wholeBroker, cdT0, 5*time.Minute))
	assert.True(t, c.cooling(1, cdP0, cdAt(cooldownMin-time.Nanosecond)))
	assert.False(t, c.cooling(1, cdP0, cdAt(cooldownMin)), "cooling past cooldownMin")
	assert.False(t, c.cooling(2, cdP0, cdT0), "another broker cooling")
}

func TestCooldownCapBelowMin(t *testing.T) {
	c := NewCooldowns()
	require.Equal(t, time.Second, c.fail(1, wholeBroker, cdT0, time.Second))
	assert.False(t, c.cooling(1, cdP0, cdAt(time.Second)))
	assert.Zero(t, c.fail(2, wholeBroker, cdT0, 0), "a zero cap is no cooldown")
	assert.False(t, c.cooling(2, cdP0, cdT0))
}

// The same replica failing again soon after its cooldown ended (the probe
// failed) doubles the cooldown, up to the cap; reports while it still
// cools (other partitions seeing the same failure) change nothing.
func TestCooldownGrowsOnRepeatedFailure(t *testing.T) {
	c := NewCooldowns()
	limit := 30 * time.Second
	at := time.Duration(0)
	for _, want := range []time.Duration{2, 4, 8, 16, 30, 30} {
		got := c.fail(1, wholeBroker, cdAt(at), limit)
		require.Equal(t, want*time.Second, got, "failure at +%v", at)
		// A second partition reports the same failure a moment later.
		require.Equal(t, got-time.Millisecond, c.fail(1, wholeBroker, cdAt(at+time.Millisecond), limit))
		at += got // the probe at the end of the cooldown fails again
	}
}

// A failure long after the previous one (more than the cap) starts small
// again: a replica that failed once an hour ago is not punished now.
func TestCooldownGrowthForgotten(t *testing.T) {
	c := NewCooldowns()
	limit := time.Minute
	c.fail(1, wholeBroker, cdT0, limit)                                                  // until +2 s
	require.Equal(t, 4*time.Second, c.fail(1, wholeBroker, cdAt(10*time.Second), limit)) // until +14 s
	require.Equal(t, cooldownMin, c.fail(1, wholeBroker, cdAt(14*time.Second+limit), limit))
}

// A pair cooldown keeps the broker's other partitions on it; a broker
// cooldown covers every partition.
func TestCooldownScopes(t *testing.T) {
	c := NewCooldowns()
	c.fail(1, cdP0, cdT0, time.Minute)
	assert.True(t, c.cooling(1, cdP0, cdT0))
	assert.False(t, c.cooling(1, cdP1, cdT0), "a partition error cooled the broker's other partitions")
	c.fail(2, wholeBroker, cdT0, time.Minute)
	assert.True(t, c.cooling(2, cdP0, cdT0))
	assert.True(t, c.cooling(2, cdP1, cdT0))
	// The later end of the two wins.
	c.fail(3, cdP0, cdT0, time.Minute)
	c.fail(3, cdP0, cdAt(2*time.Second), time.Minute) // 4 s from +2 s
	c.fail(3, wholeBroker, cdAt(time.Second), time.Minute)
	end, ok := c.coolingUntil(3, cdP0, cdAt(2*time.Second))
	require.True(t, ok)
	assert.Equal(t, cdAt(6*time.Second), end)
}

// Evidence of health ends a cooldown early: the replica seen out of a
// partition's ISR after it failed, then back in that ISR.
func TestCooldownEndsWhenBackInISR(t *testing.T) {
	c := NewCooldowns()
	limit := 5 * time.Minute
	at := time.Duration(0)
	for i := 0; i < 8; i++ { // each probe fails: grow it to minutes
		at += c.fail(2, wholeBroker, cdAt(at), limit)
	}
	now := cdAt(at - time.Second)
	require.True(t, c.cooling(2, cdP0, now))

	// Still in the ISR (the leader has not dropped it yet): no evidence.
	assert.False(t, c.observeISR(2, cdP0, true, now))
	assert.True(t, c.cooling(2, cdP0, now))
	// Out of P0's ISR, then P1 (never seen out) says in: not evidence.
	assert.False(t, c.observeISR(2, cdP0, false, now))
	assert.False(t, c.observeISR(2, cdP1, true, now))
	assert.True(t, c.cooling(2, cdP0, now))
	// Back in P0's ISR: healthy.
	assert.True(t, c.observeISR(2, cdP0, true, now.Add(time.Second/2)))
	assert.False(t, c.cooling(2, cdP1, now.Add(time.Second/2)))
	// The next failure soon after still grows (flapping stays damped).
	assert.Equal(t, limit, c.fail(2, wholeBroker, now.Add(2*time.Second), limit))
}

func TestCooldownPairEndsWhenBackInISR(t *testing.T) {
	c := NewCooldowns()
	c.fail(2, cdP0, cdT0, time.Minute)
	c.observeISR(2, cdP1, false, cdT0) // another partition: no entry touched
	assert.False(t, c.observeISR(2, cdP1, true, cdT0))
	assert.True(t, c.cooling(2, cdP0, cdT0))
	c.observeISR(2, cdP0, false, cdT0)
	assert.True(t, c.observeISR(2, cdP0, true, cdT0))
	assert.False(t, c.cooling(2, cdP0, cdT0))
}

// Entries are forgotten once their cooldown ended and their failure is
// older than the cap: the map is bounded by the replicas that failed
// recently.
func TestCooldownBounded(t *testing.T) {
	c := NewCooldowns()
	for i := 0; i < 1000; i++ {
		c.fail(i, wholeBroker, cdAt(time.Duration(i)*time.Second), 10*time.Second)
	}
	assert.LessOrEqual(t, c.size(), 13)
	assert.True(t, c.Active(cdAt(999*time.Second)))
	assert.False(t, c.Active(cdAt(2000*time.Second)))
}

func TestCooldownNilAndZero(t *testing.T) {
	var nilCache *Cooldowns
	nilCache.fail(1, wholeBroker, cdT0, time.Minute)
	assert.False(t, nilCache.cooling(1, cdP0, cdT0))
	assert.False(t, nilCache.observeISR(1, cdP0, true, cdT0))
	assert.False(t, nilCache.Active(cdT0))
	assert.Zero(t, nilCache.size())
	var zero Cooldowns
	zero.fail(1, wholeBroker, cdT0, time.Minute)
	assert.True(t, zero.cooling(1, cdP0, cdT0))
}

func TestCooldownConcurrent(t *testing.T) {
	c := NewCooldowns()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				now := cdAt(time.Duration(i) * time.Millisecond)
				tp := topicPartition{"t", i % 3}
				c.fail((g+i)%5, tp, now, 50*time.Millisecond)
				c.observeISR(i%5, tp, i%2 == 0, now)
				c.cooling(i%5, tp, now)
			}
		}(g)
	}
	wg.Wait()
}

// With RequireProbe a broker-level cooldown outlasts its time until a
// probe reaches the broker: the leader keeps naming a killed follower for
// up to replica.lag.time.max.ms, and the time alone would send reads back.
func TestCooldownWaitsForProbe(t *testing.T) {
	c := NewCooldowns()
	c.RequireProbe()
	limit := time.Minute
	require.Equal(t, cooldownMin, c.fail(2, wholeBroker, cdT0, limit))
	_, due := c.ProbeDue(cdAt(time.Second))
	assert.False(t, due, "no probe while the cooldown runs")

	at := cooldownMin
	assert.True(t, c.cooling(2, cdP0, cdAt(at)), "the time is up, no probe yet: still away")
	b, due := c.ProbeDue(cdAt(at))
	require.True(t, due)
	require.Equal(t, 2, b)
	_, due = c.ProbeDue(cdAt(at))
	assert.False(t, due, "a probe in flight is not handed out twice")

	c.Probed(2, false, cdAt(at+100*time.Millisecond))
	assert.True(t, c.cooling(2, cdP1, cdAt(at+time.Second)), "a failed probe keeps every partition away")
	_, due = c.ProbeDue(cdAt(at + 100*time.Millisecond + probeGapMin - time.Nanosecond))
	assert.False(t, due, "the next probe waits probeGapMin")
	_, due = c.ProbeDue(cdAt(at + 100*time.Millisecond + probeGapMin))
	require.True(t, due)

	c.prune(cdAt(at + 2*limit))
	require.Equal(t, 1, c.size(), "an entry waiting for its probe is kept however old")

	end := at + 2*limit
	c.Probed(2, true, cdAt(end))
	assert.Zero(t, c.unproven.Load())
	assert.False(t, c.cooling(2, cdP0, cdAt(end)), "the broker answered: its cooldown is over")
	_, due = c.ProbeDue(cdAt(end))
	assert.False(t, due)

	// Failing again soon after: the growth works as without probes.
	require.Equal(t, 2*cooldownMin, c.fail(2, wholeBroker, cdAt(end+time.Second), limit))
}

// A lost probe (never reported) is handed out again after probeLost; a
// report about a broker nobody waits for changes nothing.
func TestCooldownLostProbe(t *testing.T) {
	c := NewCooldowns()
	c.RequireProbe()
	c.fail(3, wholeBroker, cdT0, time.Minute)
	_, due := c.ProbeDue(cdAt(cooldownMin))
	require.True(t, due)
	_, due = c.ProbeDue(cdAt(cooldownMin + probeLost - time.Nanosecond))
	assert.False(t, due)
	_, due = c.ProbeDue(cdAt(cooldownMin + probeLost))
	assert.True(t, due)
	c.Probed(4, true, cdAt(cooldownMin))
	assert.True(t, c.cooling(3, cdP0, cdAt(cooldownMin+probeLost)))
}

// Only broker-level cooldowns wait for a probe: a partition's replica
// error says nothing a connection could disprove. The ISR's word ends a
// pair's cooldown, and makes a broker's probe due.
func TestCooldownProbeScopeAndISR(t *testing.T) {
	c := NewCooldowns()
	c.RequireProbe()
	c.fail(1, cdP0, cdT0, time.Minute)
	assert.False(t, c.cooling(1, cdP0, cdAt(cooldownMin)), "a partition's cooldown ends with its time")
	_, due := c.ProbeDue(cdAt(cooldownMin))
	assert.False(t, due)

	c.fail(2, wholeBroker, cdT0, time.Minute)
	assert.False(t, c.observeISR(2, cdP0, false, cdAt(time.Second/2)))
	// Back in the ISR after it was seen out, before the cooldown's time:
	// not proof that the broker answers (stale metadata of a ZooKeeper
	// broker, a leader before 3.4 naming it), but the probe is due at once.
	assert.False(t, c.observeISR(2, cdP0, true, cdAt(time.Second)), "the ISR alone ends no broker-level cooldown")
	assert.True(t, c.cooling(2, cdP1, cdAt(10*time.Second)), "still waiting for a probe")
	b, due := c.ProbeDue(cdAt(time.Second))
	require.True(t, due, "the probe is due as soon as the ISR takes the broker back")
	assert.Equal(t, 2, b)
	c.Probed(2, true, cdAt(time.Second+time.Millisecond))
	assert.False(t, c.cooling(2, cdP1, cdAt(time.Second+time.Millisecond)))
	assert.Zero(t, c.unproven.Load())

	// A pair's cooldown still ends with the ISR's word.
	c.fail(3, cdP1, cdT0, time.Minute)
	c.observeISR(3, cdP1, false, cdAt(time.Second))
	assert.True(t, c.observeISR(3, cdP1, true, cdAt(time.Second)), "back in the ISR after it was seen out")
	assert.False(t, c.cooling(3, cdP1, cdAt(time.Second)))
}

// Without RequireProbe nothing changes: the time ends a cooldown and no
// probe is ever asked for.
func TestCooldownWithoutProbe(t *testing.T) {
	c := NewCooldowns()
	c.fail(2, wholeBroker, cdT0, time.Minute)
	assert.False(t, c.cooling(2, cdP0, cdAt(cooldownMin)))
	_, due := c.ProbeDue(cdAt(cooldownMin))
	assert.False(t, due)
}
