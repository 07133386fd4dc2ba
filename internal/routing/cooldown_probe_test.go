package routing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A broker that never answers its probe again, in isolation: after an hour
// of refused probes it is still kept away, but the cooldowns no longer ask
// for metadata every second.
func TestCooldownRefusedProbesStopFastMetadata(t *testing.T) {
	c := NewCooldowns()
	c.RequireProbe()
	c.fail(2, wholeBroker, cdT0, time.Minute)
	now := cdAt(cooldownMin)
	probes := 0
	for probes < 3600 {
		if b, due := c.ProbeDue(now); due {
			require.Equal(t, 2, b)
			c.Probed(2, false, now)
			probes++
		}
		now = now.Add(time.Second)
	}
	assert.True(t, c.cooling(2, cdP0, now), "a broker refusing probes is still kept away")
	assert.False(t, c.Active(now), "long-refused probes keep metadata at its normal pace")
}

// probeStep is one step of a broker-level cooldown's life with probes.
type probeStep struct {
	name   string
	at     time.Duration
	do     func(c *Cooldowns, now time.Time)
	due    bool // ProbeDue at `at` (after do) hands out broker 2
	cool   bool // broker 2 keeps reads away at `at`
	active bool // Active at `at`
	size   int  // entries held
}

func probed(reached bool) func(c *Cooldowns, now time.Time) {
	return func(c *Cooldowns, now time.Time) { c.Probed(2, reached, now) }
}

func runProbeSteps(t *testing.T, steps []probeStep) {
	t.Helper()
	c := NewCooldowns()
	c.RequireProbe()
	c.fail(2, wholeBroker, cdT0, time.Minute)
	for _, st := range steps {
		now := cdAt(st.at)
		if st.do != nil {
			st.do(c, now)
		}
		b, due := c.ProbeDue(now)
		require.Equal(t, st.due, due, "%s: probe due", st.name)
		if due {
			require.Equal(t, 2, b, st.name)
		}
		assert.Equal(t, st.cool, c.cooling(2, cdP0, now), "%s: cooling", st.name)
		assert.Equal(t, st.active, c.Active(now), "%s: active", st.name)
		assert.Equal(t, st.size, c.size(), "%s: entries", st.name)
	}
}

// The transitions of a broker-level cooldown waiting for its probe: the
// wait after each refused probe doubles from 1 s up to 30 s; once it is at
// 30 s the broker no longer counts for the every-second metadata; the ISR
// taking it back makes the probe due at once; a reached probe ends it.
func TestCooldownProbeTransitions(t *testing.T) {
	s := time.Second
	// The probes refused at +2 s, +3 s, +5 s, +9 s, +17 s and +33 s: the
	// next one waits 30 s (probeGapMax).
	refusals := []probeStep{
		{name: "cooling: no probe yet", at: s, cool: true, active: true, size: 1},
		{name: "time up: probe due", at: 2 * s, due: true, cool: true, active: true, size: 1},
		{name: "probe out: not handed out twice", at: 2*s + 500*time.Millisecond, cool: true, active: true, size: 1},
		{name: "refused 1: next 1 s later", at: 2 * s, do: probed(false), cool: true, active: true, size: 1},
		{name: "refused 1: at 1 s", at: 3 * s, due: true, cool: true, active: true, size: 1},
		{name: "refused 2: not before 2 s", at: 4*s + 999*time.Millisecond, do: func(c *Cooldowns, now time.Time) { c.Probed(2, false, cdAt(3*s)) }, cool: true, active: true, size: 1},
		{name: "refused 2: at 2 s", at: 5 * s, due: true, cool: true, active: true, size: 1},
		{name: "refused 3: at 4 s", at: 9 * s, do: func(c *Cooldowns, now time.Time) { c.Probed(2, false, cdAt(5*s)) }, due: true, cool: true, active: true, size: 1},
		{name: "refused 4: at 8 s", at: 17 * s, do: func(c *Cooldowns, now time.Time) { c.Probed(2, false, cdAt(9*s)) }, due: true, cool: true, active: true, size: 1},
		{name: "refused 5: at 16 s, still fast metadata", at: 33 * s, do: func(c *Cooldowns, now time.Time) { c.Probed(2, false, cdAt(17*s)) }, due: true, cool: true, active: true, size: 1},
		{name: "refused 6: the wait is at its cap, metadata at its normal pace", at: 33 * s, do: probed(false), cool: true, active: false, size: 1},
		{name: "refused 6: not before 30 s", at: 63*s - time.Nanosecond, cool: true, active: false, size: 1},
		{name: "refused 6: at 30 s", at: 63 * s, due: true, cool: true, active: false, size: 1},
		{name: "refused 7: 30 s again", at: 93 * s, do: func(c *Cooldowns, now time.Time) { c.Probed(2, false, cdAt(63*s)) }, due: true, cool: true, active: false, size: 1},
	}
	t.Run("refused probes", func(t *testing.T) { runProbeSteps(t, refusals) })

	// From the long-refused state at +93 s (a probe out), then refused.
	long := append(refusals[:len(refusals):len(refusals)],
		probeStep{name: "refused 8", at: 94 * s, do: func(c *Cooldowns, now time.Time) { c.Probed(2, false, cdAt(93*s)) }, cool: true, size: 1})
	t.Run("the ISR takes it back: probe due at once", func(t *testing.T) {
		runProbeSteps(t, append(long[:len(long):len(long)],
			probeStep{name: "seen out", at: 95 * s, do: func(c *Cooldowns, now time.Time) { c.observeISR(2, cdP0, false, now) }, cool: true, size: 1},
			probeStep{name: "back in", at: 96 * s, do: func(c *Cooldowns, now time.Time) { c.observeISR(2, cdP0, true, now) }, due: true, cool: true, size: 1},
			probeStep{name: "reached: over", at: 96 * s, do: probed(true), size: 1},
		))
	})
	t.Run("the ISR takes it back while a probe is out: no second probe", func(t *testing.T) {
		runProbeSteps(t, append(refusals[:len(refusals):len(refusals)],
			probeStep{name: "seen out", at: 94 * s, do: func(c *Cooldowns, now time.Time) { c.observeISR(2, cdP0, false, now) }, cool: true, size: 1},
			probeStep{name: "back in", at: 95 * s, do: func(c *Cooldowns, now time.Time) { c.observeISR(2, cdP0, true, now) }, cool: true, size: 1},
		))
	})
	t.Run("a lost probe is handed out again after probeLost", func(t *testing.T) {
		runProbeSteps(t, append(refusals[:len(refusals):len(refusals)],
			probeStep{name: "lost", at: 93*s + probeLost, due: true, cool: true, size: 1},
		))
	})
	t.Run("reached after refusals: over, and a failure soon after grows", func(t *testing.T) {
		runProbeSteps(t, append(long[:len(long):len(long)],
			probeStep{name: "reached", at: 100 * s, do: probed(true), size: 1},
			probeStep{name: "fails again", at: 101 * s, do: func(c *Cooldowns, now time.Time) {
				require.Equal(t, 2*cooldownMin, c.fail(2, wholeBroker, now, time.Minute))
			}, cool: true, active: true, size: 1},
			probeStep{name: "its probe starts with 1 s again", at: 105 * s, do: probed(false), cool: true, active: true, size: 1},
		))
	})
	t.Run("reached, and a failure after provenGrace starts at cooldownMin again", func(t *testing.T) {
		runProbeSteps(t, append(long[:len(long):len(long)],
			probeStep{name: "reached", at: 100 * s, do: probed(true), size: 1},
			probeStep{name: "fails after the grace", at: 100*s + provenGrace, do: func(c *Cooldowns, now time.Time) {
				require.Equal(t, cooldownMin, c.fail(2, wholeBroker, now, time.Minute))
			}, cool: true, active: true, size: 1},
		))
	})
	t.Run("a slow path: probed every 2 s, however long, until a probe finds it fast", func(t *testing.T) {
		slow := func(at time.Duration) func(c *Cooldowns, now time.Time) {
			return func(c *Cooldowns, now time.Time) { c.ProbedSlow(2, cdAt(at)) }
		}
		runProbeSteps(t, append(long[:len(long):len(long)],
			probeStep{name: "long refused, then due", at: 124 * s, due: true, cool: true, size: 1},
			probeStep{name: "slow 1: not before 2 s, no fast metadata", at: 126*s - time.Nanosecond, do: slow(124 * s), cool: true, size: 1},
			probeStep{name: "slow 1: at 2 s", at: 126 * s, due: true, cool: true, size: 1},
			probeStep{name: "slow 2: at 2 s again", at: 128 * s, do: slow(126 * s), due: true, cool: true, size: 1},
			probeStep{name: "fast: over", at: 128 * s, do: probed(true), size: 1},
		))
	})
	t.Run("no longer listed: forgotten, in any state", func(t *testing.T) {
		forget := func(c *Cooldowns, now time.Time) { c.Listed([]int{1, 3}) }
		for i := range long {
			steps := append(long[:i+1:i+1], probeStep{name: "unlisted after " + long[i].name, at: long[i].at, do: forget})
			runProbeSteps(t, steps)
		}
	})
}

// Listed forgets every cooldown and probe of a broker the metadata no
// longer lists, the pairs of its partitions too, and keeps the others.
func TestCooldownListedForgetsUnlisted(t *testing.T) {
	c := NewCooldowns()
	c.RequireProbe()
	c.fail(2, wholeBroker, cdT0, time.Minute)
	c.fail(2, cdP0, cdT0, time.Minute)
	c.fail(3, wholeBroker, cdT0, time.Minute)
	c.fail(4, cdP1, cdT0, time.Minute)
	_, due := c.ProbeDue(cdAt(cooldownMin)) // one probe out, of 2 or 3
	require.True(t, due)

	c.Listed(nil)
	assert.Equal(t, 4, c.size(), "metadata listing no broker says nothing")

	c.Listed([]int{1, 3, 5})
	assert.Equal(t, 1, c.size(), "only broker 3's cooldown is left")
	assert.False(t, c.cooling(2, cdP0, cdAt(time.Second)))
	assert.False(t, c.cooling(4, cdP1, cdAt(time.Second)))
	assert.True(t, c.cooling(3, cdP0, cdAt(time.Minute)), "a listed broker waits for its probe still")
	assert.Equal(t, int32(1), c.unproven.Load())
	c.Probed(2, false, cdAt(cooldownMin)) // a probe out when 2 was forgotten
	assert.Equal(t, 1, c.size(), "a late report about a forgotten broker adds nothing")

	c.Listed([]int{1})
	assert.Zero(t, c.size())
	assert.Zero(t, c.unproven.Load())
	_, due = c.ProbeDue(cdAt(time.Hour))
	assert.False(t, due)
	assert.False(t, c.Active(cdAt(time.Second)))

	var nilCache *Cooldowns
	nilCache.Listed([]int{1})
}
