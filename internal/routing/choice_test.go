package routing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Client-side selection (choice.go) on rsDefault: leader 1 (rack
// a), ISR {1,2,3}, the client in rack b, so RackAffinity
// picks broker 2.

// rsPick is a ReplicaSelector that returns id and records what it saw.
type rsPick struct {
	id   int
	seen *[]Partition
}

func (p rsPick) Choose(rack string, part Partition) (int, bool) {
	if p.seen != nil {
		*p.seen = append(*p.seen, part)
	}
	return p.id, p.id >= 0
}

func TestReplicaSelectorClientChoiceTransitions(t *testing.T) {
	rack := RackAffinity{}
	cb := Config{Rack: "b", Choice: rack}
	ca := Config{Rack: "a", Choice: rack}
	ttl1s := Config{Rack: "b", Choice: rack, PreferenceTTL: time.Second}
	pick4 := Config{Rack: "b", Choice: rsPick{id: 4}}
	noRackPick3 := Config{Choice: rsPick{id: 3}}
	cool2 := func(c *Cooldowns) { c.fail(2, wholeBroker, rsT0, 5*time.Minute) }
	cool3 := func(c *Cooldowns) { c.fail(3, wholeBroker, rsT0, 5*time.Minute) }
	isr13 := rsPart(1, 5, 1, 3)
	led2 := rsPart(2, 5, 1, 2, 3)
	offline2 := rsOffline(rsDefault, 2)
	noHost2 := rsNoHost(rsDefault, 2)
	start := []Event{evMeta(0, rsDefault)} // the fetcher's first event: reads move to 2
	full := func(s *Selector) {
		for i := 0; i < routeDefaultMaxSwitches; i++ {
			s.switches = append(s.switches, rsT0.Add(time.Duration(i)*time.Millisecond))
		}
	}

	cases := []rsCase{
		// Where the client's choice applies.
		{name: "metadata at start moves reads to the in-rack replica", cfg: &cb, ev: evMeta(0, rsDefault),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice}},
		{name: "the leader's -1 moves reads to the in-rack replica", cfg: &cb, ev: evFetch(0, 1, -1),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice}},
		{name: "no selector: the leader's -1 keeps reads on the leader", ev: evFetch(0, 1, -1), want: Decision{Broker: 1}},
		{name: "no selector: metadata keeps reads on the leader", ev: evMeta(0, rsDefault), want: Decision{Broker: 1}},
		{name: "a custom selector works without a rack", cfg: &noRackPick3, ev: evMeta(0, rsDefault),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonClientChoice}},

		// The broker's choice wins.
		{name: "the leader's named replica wins over the client's", cfg: &cb, ev: evNamed(0, 1, 3),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonPreferred}},
		{name: "a named replica refused (cooling) keeps reads on the leader", cfg: &cb, prep: cool3,
			setup: []Event{evNamed(0, 1, 3)}, ev: evFetch(100*time.Millisecond, 1, -1),
			want: Decision{Broker: 1, OmitRack: true}},
		{name: "the leader naming itself keeps reads there", cfg: &cb, ev: evNamed(0, 1, 1), want: Decision{Broker: 1}},

		// ISR only.
		{name: "pick out of the ISR: leader", cfg: &cb, init: &isr13, ev: evMeta(0, isr13), want: Decision{Broker: 1}},
		{name: "pick offline: leader", cfg: &cb, init: &offline2, ev: evMeta(0, offline2), want: Decision{Broker: 1}},
		{name: "pick without a host: leader", cfg: &cb, init: &noHost2, ev: evMeta(0, noHost2), want: Decision{Broker: 1}},
		{name: "a custom pick out of the ISR is not read", cfg: &pick4, ev: evFetch(0, 1, -1), want: Decision{Broker: 1}},
		{name: "the leader in the client's rack: stay", cfg: &ca, ev: evFetch(0, 1, -1), want: Decision{Broker: 1}},

		// Cooldowns and the flap budget.
		{name: "pick cooling down: leader", cfg: &cb, prep: cool2, ev: evFetch(0, 1, -1), want: Decision{Broker: 1}},
		{name: "flap budget used up: leader", cfg: &cb, mid: full, ev: evFetch(time.Second, 1, -1),
			want: Decision{Broker: 1, Reason: ReasonFlapDamped}},
		{name: "dial failure of the pick: leader, broker cools down", cfg: &cb, setup: start, ev: evDial(time.Second, 2),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed},
			check: func(t *testing.T, s *Selector) {
				assert.True(t, s.cooldown.cooling(2, rsOtherTP, rsT0.Add(time.Second)), "broker 2 cools down for every partition")
			}},
		{name: "after a failure the leader's -1 does not return to the cooling pick", cfg: &cb,
			setup: []Event{evMeta(0, rsDefault), evDial(time.Second, 2)}, ev: evFetch(1500*time.Millisecond, 1, -1),
			want: Decision{Broker: 1}},
		{name: "the pick back in the ISR after leaving it: reads return at the metadata", cfg: &cb,
			setup: []Event{evMeta(0, rsDefault), evDial(time.Second, 2), evMeta(1500*time.Millisecond, isr13)},
			ev:    evMeta(1800*time.Millisecond, rsDefault),
			want:  Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice}},
		{name: "partition error of the pick (OffsetOutOfRange): leader, no reset", cfg: &cb, setup: start,
			ev:   evErr(time.Second, 2, OffsetOutOfRange),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}},

		// The TTL re-asks the leader; its -1 renews the pick off the budget.
		{name: "TTL: back to the leader", cfg: &ttl1s, setup: start, ev: evTick(time.Second),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "TTL: the leader's -1 renews the pick", cfg: &ttl1s, setup: []Event{evMeta(0, rsDefault), evTick(time.Second)},
			ev: evFetch(1100*time.Millisecond, 1, -1), want: Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice},
			check: func(t *testing.T, s *Selector) {
				assert.Len(t, s.switches, 1, "a renewal uses no room in the flap budget")
				assert.Equal(t, rsT0.Add(1100*time.Millisecond), s.pinnedAt, "the TTL restarts")
			}},
		{name: "TTL, the leader's connection breaks: metadata renews the pick off the budget", cfg: &ttl1s,
			setup: []Event{evMeta(0, rsDefault), evTick(time.Second), evErr(1050*time.Millisecond, 1, connLost)},
			ev:    evMeta(1100*time.Millisecond, rsDefault), want: Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice},
			check: func(t *testing.T, s *Selector) {
				assert.Len(t, s.switches, 1, "a renewal through metadata uses no room in the flap budget either")
			}},
		{name: "TTL: the leader naming another replica wins", cfg: &ttl1s, setup: []Event{evMeta(0, rsDefault), evTick(time.Second)},
			ev: evNamed(1100*time.Millisecond, 1, 3), want: Decision{Broker: 3, Changed: true, Reason: ReasonPreferred}},
		{name: "a follower's -1 keeps the pick", cfg: &cb, setup: start, ev: evFetch(time.Second, 2, -1), want: Decision{Broker: 2}},

		// Epochs and leader changes.
		{name: "stale-client error of the pick: refresh, stay", cfg: &cb, setup: start, ev: evErr(time.Second, 2, FencedLeaderEpoch),
			want: Decision{Broker: 2, Reason: ReasonStaleClient, RefreshMetadata: true, Backoff: 50 * time.Millisecond}},
		{name: "leader change while on the pick: stay, validate", cfg: &cb, setup: start, ev: evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "the in-rack leader loses leadership: stay on it as a follower, validate", cfg: &cb, init: &led2,
			ev: evMeta(time.Second, rsPart(1, 6, 1, 2, 3)), want: Decision{Broker: 2, Reason: ReasonClientChoice, ValidateOffset: true}},
		{name: "the in-rack leader loses leadership: no lease is counted", cfg: &cb, init: &led2,
			ev: evMeta(time.Second, rsPart(1, 6, 1, 2, 3)), want: Decision{Broker: 2, Reason: ReasonClientChoice, ValidateOffset: true},
			check: func(t *testing.T, s *Selector) {
				assert.Empty(t, s.switches, "reads never left broker 2")
			}},
		{name: "the in-rack leader dies and loses leadership: leader, the old one cools down", cfg: &cb, init: &led2,
			setup: []Event{evErr(500*time.Millisecond, 2, connLost)}, ev: evMeta(time.Second, rsPart(1, 6, 1, 2, 3)),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true},
			check: func(t *testing.T, s *Selector) {
				assert.True(t, s.cooldown.cooling(2, rsOtherTP, rsT0.Add(time.Second)), "its connection broke: it cools down")
				assert.Empty(t, s.switches, "no lease")
			}},
		{name: "the in-rack leader answered after its failure: it stays as a follower", cfg: &cb, init: &led2,
			setup: []Event{evErr(500*time.Millisecond, 2, connLost), evFetch(700*time.Millisecond, 2, -1)},
			ev:    evMeta(time.Second, rsPart(1, 6, 1, 2, 3)), want: Decision{Broker: 2, Reason: ReasonClientChoice, ValidateOffset: true}},
		{name: "the pick leaves the ISR: leader", cfg: &cb, setup: start, ev: evMeta(time.Second, isr13),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerGone}},
		{name: "metadata with an older epoch changes nothing", cfg: &cb, setup: start, ev: evMeta(time.Second, rsPart(3, 4, 1, 3)),
			want: Decision{Broker: 2}},
		{name: "metadata without a leader: no pick", cfg: &cb, ev: evMeta(0, rsPart(-1, 6, 2, 3)),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runRouteCase(t, tc) })
	}
}

// The selector sees only the replicas the Reader may read now.
func TestReplicaSelectorClientChoiceSeesUsableISR(t *testing.T) {
	var seen []Partition
	c := NewCooldowns()
	c.fail(3, wholeBroker, rsT0, 5*time.Minute)
	s := New(Config{Rack: "b", Choice: rsPick{id: -1, seen: &seen}}, c, rsOffline(rsDefault, 2), rsT0)
	d := s.step(evFetch(0, 1, -1))
	assert.Equal(t, 1, d.Broker)
	require.NotEmpty(t, seen) // a second call asks what it would pick with every replica in sync
	var ids []int
	for _, b := range seen[0].Isr {
		ids = append(ids, b.ID)
	}
	assert.Equal(t, []int{1}, ids, "offline 2 and cooling 3 left out")
	assert.Len(t, s.part.Isr, 3, "the selector's own metadata is not changed")
}

func TestRackAffinity(t *testing.T) {
	sel := RackAffinity{}
	two := func(id int) Replica { b := rsBroker(id); b.Rack = "b"; return b }
	// Brokers 2, 3 and 4 in rack b, leader 1 in rack a.
	p := Partition{Leader: rsBroker(1), Replicas: []Replica{rsBroker(1), two(2), two(3), two(4)}, Isr: []Replica{rsBroker(1), two(4), two(2)}}
	for id, want := range map[int]int{0: 2, 1: 4, 2: 2, 3: 4} {
		p.ID = id
		got, ok := sel.Choose("b", p)
		assert.True(t, ok)
		assert.Equal(t, want, got, "partition %d: deterministic over the rack's in-sync replicas", id)
	}
	got, ok := sel.Choose("a", p)
	assert.True(t, ok)
	assert.Equal(t, 1, got, "the leader in the client's rack")
	_, ok = sel.Choose("c", p)
	assert.False(t, ok, "no replica in rack c")
	_, ok = sel.Choose("", p)
	assert.False(t, ok, "no client rack")
	// The ISR lists the broker by ID only: its rack comes from Replicas.
	q := rsDefault
	q.Isr = []Replica{{ID: 1}, {ID: 2}}
	got, ok = sel.Choose("b", q)
	assert.True(t, ok)
	assert.Equal(t, 2, got)
}

// While the pick is out of the ISR no leader will say when it is back: the
// Reader keeps metadata fresh (Cooldowns.active) until it is read.
func TestReplicaSelectorClientChoiceWaitsForReplica(t *testing.T) {
	c := NewCooldowns()
	isr13 := rsPart(1, 5, 1, 3)
	s := New(Config{Rack: "b", Choice: RackAffinity{}}, c, isr13, rsT0)
	d := s.step(evMeta(0, isr13))
	assert.Equal(t, 1, d.Broker)
	assert.True(t, c.Active(rsT0), "waiting for broker 2 keeps metadata fresh")
	assert.False(t, c.Active(rsT0.Add(choiceWaitTTL)), "a wait lapses when nobody renews it")

	d = s.step(evMeta(time.Second, rsDefault))
	assert.Equal(t, Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice}, d)
	assert.False(t, c.Active(rsT0.Add(time.Second)), "read again: no more waiting")

	// A client whose rack holds the leader waits for nothing.
	c2 := NewCooldowns()
	s2 := New(Config{Rack: "a", Choice: RackAffinity{}}, c2, isr13, rsT0)
	s2.step(evFetch(0, 1, -1))
	assert.False(t, c2.Active(rsT0))
	// Nor one whose rack has no replica.
	s3 := New(Config{Rack: "z", Choice: RackAffinity{}}, c2, isr13, rsT0)
	s3.step(evFetch(0, 1, -1))
	assert.False(t, c2.Active(rsT0))
}

// A broker that is down is listed by ID only: the rack metadata told
// before says the pick is waited for.
func TestReplicaSelectorClientChoiceWaitsForDownBroker(t *testing.T) {
	c := NewCooldowns()
	s := New(Config{Rack: "b", Choice: RackAffinity{}}, c, rsDefault, rsT0)
	require.Equal(t, 2, s.step(evMeta(0, rsDefault)).Broker)
	down := rsNoHost(rsPart(1, 5, 1, 3), 2)
	assert.Equal(t, 1, s.step(evMeta(time.Second, down)).Broker, "broker 2 left the ISR")
	s.step(evFetch(time.Minute, 1, -1)) // long after any cooldown
	assert.True(t, c.Active(rsT0.Add(time.Minute)), "waiting for broker 2 keeps metadata fresh")
	d := s.step(evMeta(time.Minute+time.Second, rsDefault))
	assert.Equal(t, Decision{Broker: 2, Changed: true, Reason: ReasonClientChoice}, d, "back in the ISR: read again")
}
