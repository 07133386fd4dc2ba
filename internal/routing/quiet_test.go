package routing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A route is quiet only when nothing but a fetch answer or metadata can
// move it, and only until its next time-driven rule.
func TestSelectorQuiet(t *testing.T) {
	at := func(d time.Duration) time.Time { return rsT0.Add(d) }
	cases := []struct {
		name      string
		cfg       Config
		prep      func(c *Cooldowns)
		events    []Event
		now       time.Duration
		wantQuiet bool
		wantUntil time.Time // checked when quiet
		heldUntil bool      // wantUntil is the end of the hold
		prepFirst bool      // prep runs before the events, not after
	}{
		{name: "at the leader, nothing named", events: []Event{evEmpty(0, 1, 100, 100)}, now: time.Second,
			wantQuiet: true, wantUntil: at(time.Second + quietMax)},
		{name: "on a follower: until the preference's TTL", cfg: Config{Rack: "b", PreferenceTTL: time.Minute},
			events: rsEvents(pin2, []Event{longPolled(evEmpty(time.Second, 2, 100, 100))}), now: 2 * time.Second,
			wantQuiet: true, wantUntil: at(time.Minute)},
		{name: "TTL passed", cfg: Config{Rack: "b", PreferenceTTL: time.Minute}, events: pin2, now: time.Minute},
		{name: "a refused replica held: not while the leader is asked to name again",
			prepFirst: true, prep: func(c *Cooldowns) { c.fail(2, rsTP, rsT0, time.Minute) },
			events: []Event{evNamed(time.Second, 1, 2)}, now: 2 * time.Second},
		{name: "a refused replica held: until the hold ends",
			prepFirst: true, prep: func(c *Cooldowns) { c.fail(2, rsTP, rsT0, time.Minute) },
			events: []Event{evNamed(500*time.Millisecond, 1, 2), longPolled(evEmpty(time.Second, 1, 100, 100))}, now: 1500 * time.Millisecond,
			wantQuiet: true, heldUntil: true},
		{name: "the follower answers empty at once: it backs off", events: rsEvents(pin2, []Event{evEmpty(time.Second, 2, 100, 100)}),
			now: 2 * time.Second},
		{name: "after a failure", events: rsEvents(pin2, []Event{evErr(time.Second, 2, connLost)}), now: 2 * time.Second},
		{name: "no leader known", events: []Event{evMeta(0, rsPart(-1, 6, 2, 3))}, now: time.Second},
		{name: "client-side selection", cfg: Config{Rack: "b", Choice: RackAffinity{}}, events: []Event{evEmpty(0, 1, 100, 100)},
			now: time.Second},
		{name: "the follower read cools down", events: pin2, now: time.Second,
			prep: func(c *Cooldowns) { c.fail(2, wholeBroker, rsT0, time.Minute) }},
		{name: "the leader cools down as a broker", events: []Event{evEmpty(0, 1, 100, 100)}, now: time.Second,
			prep: func(c *Cooldowns) { c.fail(1, wholeBroker, rsT0, time.Minute) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			if cfg.Rack == "" {
				cfg.Rack = "b"
			}
			c := NewCooldowns()
			s := New(cfg, c, rsDefault, rsT0)
			if tc.prep != nil && tc.prepFirst {
				tc.prep(c)
			}
			for _, ev := range tc.events {
				s.Next(ev)
			}
			if tc.prep != nil && !tc.prepFirst {
				tc.prep(c)
			}
			if tc.heldUntil {
				require.GreaterOrEqual(t, s.held, 0, "no replica held")
				tc.wantUntil = s.heldUntil
			}
			until, quiet := s.Quiet(at(tc.now))
			require.Equal(t, tc.wantQuiet, quiet, "route at broker %d", s.Current())
			if quiet {
				assert.Equal(t, tc.wantUntil, until)
			}
		})
	}
}

func longPolled(ev Event) Event {
	ev.LongPolled = true
	return ev
}
