package routing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The flap budget counts leases, not moves: a return to the follower the
// last lease was on, with no other follower read from in between, is a
// renewal on every path. The budget here is one lease a minute, used by
// the first lease at +0; every other move below is free.
func TestReplicaSelectorLeaseRenewalPaths(t *testing.T) {
	max1 := Config{Rack: "b", PreferenceTTL: time.Second, MaxSwitchesPerMinute: 1}
	choice1 := Config{Rack: "b", PreferenceTTL: time.Second, MaxSwitchesPerMinute: 1, Choice: RackAffinity{}}
	lead3 := rsPart(3, 6, 1, 2, 3) // broker 3 (rack c) leads at epoch 6
	// The TTL takes reads from 2, the leader's connection breaks, metadata names
	// a new leader (3: not in the reader's rack, so reads go there).
	ttlThenNewLeader := []Event{evNamed(0, 1, 2), evTick(time.Second), evErr(1100*time.Millisecond, 1, connLost),
		evMeta(1200*time.Millisecond, lead3)}
	cases := []rsCase{
		{name: "TTL, the leader's connection breaks, a new leader names the same follower: a renewal",
			cfg: &max1, setup: ttlThenNewLeader, ev: evNamed(1300*time.Millisecond, 3, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred},
			check: func(t *testing.T, s *Selector) {
				s.pruneSwitches(s.now)
				assert.Len(t, s.switches, 1, "one lease, on broker 2")
			}},
		{name: "TTL, the leader's connection breaks, the client picks the same follower at the new leader's metadata: a renewal",
			cfg: &choice1, setup: []Event{evMeta(0, rsDefault), evTick(time.Second), evErr(1100*time.Millisecond, 1, connLost)},
			ev:   evMeta(1200*time.Millisecond, lead3),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice, ValidateOffset: true}},
		{name: "another follower named but refused (nothing read from it), then the same follower: a renewal",
			cfg: &max1, setup: []Event{evNamed(0, 1, 2), evTick(time.Second), evNamed(1100*time.Millisecond, 1, 3)},
			ev:   evNamed(1200*time.Millisecond, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "the leader's -1 first, then it names the same follower: a renewal",
			cfg: &max1, setup: []Event{evNamed(0, 1, 2), evTick(time.Second), evFetch(1100*time.Millisecond, 1, -1)},
			ev:   evNamed(1200*time.Millisecond, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "the follower failed, its cooldown ended: a renewal",
			cfg:   &Config{Rack: "b", Cooldown: time.Second, MaxSwitchesPerMinute: 1},
			setup: []Event{evNamed(0, 1, 2), evDial(500*time.Millisecond, 2)}, ev: evNamed(2*time.Second, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "the follower left the ISR and came back: a renewal",
			cfg: &max1, setup: []Event{evNamed(0, 1, 2), evMeta(500*time.Millisecond, rsPart(1, 5, 1, 3)),
				evMeta(800*time.Millisecond, rsDefault)},
			ev: evNamed(900*time.Millisecond, 1, 2), want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "another follower read in between: a new lease",
			cfg:   &Config{Rack: "b", PreferenceTTL: time.Second, MaxSwitchesPerMinute: 2},
			setup: []Event{evNamed(0, 1, 2), evTick(time.Second), evNamed(1100*time.Millisecond, 1, 3), evTick(2200 * time.Millisecond)},
			ev:    evNamed(2300*time.Millisecond, 1, 2),
			want:  Decision{Broker: 1, Reason: ReasonFlapDamped, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "the old leader kept as a follower is the last lease's replica",
			cfg: &Config{Rack: "b", PreferenceTTL: time.Second, MaxSwitchesPerMinute: 1}, init: &led2of5,
			setup: []Event{evMeta(500*time.Millisecond, rsPart(1, 6, 1, 2, 3)), evTick(1600 * time.Millisecond)},
			ev:    evNamed(1700*time.Millisecond, 1, 2),
			want:  Decision{Broker: 2, Changed: true, Reason: ReasonPreferred},
			check: func(t *testing.T, s *Selector) { assert.Empty(t, s.switches, "reads never moved to a new follower") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runRouteCase(t, tc) })
	}
}

// led2of5: broker 2, in the reader's rack, leads at epoch 5.
var led2of5 = rsPart(2, 5, 1, 2, 3)
