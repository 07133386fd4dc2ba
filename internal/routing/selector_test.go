package routing

import (
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The routing tests use one partition replicated on brokers 1..4 (racks
// a..d), leader 1 at epoch 5, ISR {1,2,3}; the client is in rack b, so the
// leader names broker 2. Time is rsT0 plus an offset.

var rsT0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func rsBroker(id int) Replica {
	if id < 0 {
		return Replica{ID: id}
	}
	return Replica{ID: id, Host: fmt.Sprintf("broker-%d", id), Port: 9092, Rack: string(rune('a' + id - 1))}
}

// rsPart returns the partition led by leader at epoch, replicas 1..4, ISR isr.
func rsPart(leader, epoch int, isr ...int) Partition {
	p := Partition{Topic: "t", Leader: rsBroker(leader), LeaderEpoch: epoch}
	for id := 1; id <= 4; id++ {
		p.Replicas = append(p.Replicas, rsBroker(id))
	}
	for _, id := range isr {
		p.Isr = append(p.Isr, rsBroker(id))
	}
	return p
}

var rsDefault = rsPart(1, 5, 1, 2, 3)

// rsTP names rsDefault's partition (its replicas' cooldown key); rsOtherTP
// another partition sharing the cooldown cache.
var (
	rsTP      = topicPartition{"t", 0}
	rsOtherTP = topicPartition{"t", 1}
)

// rsOffline marks broker id offline in p.
func rsOffline(p Partition, id int) Partition {
	p.OfflineReplicas = []Replica{{ID: id}}
	return p
}

// rsNoHost makes broker id known by its id only (not among the brokers of
// the metadata answer), as makePartitions does for a broker that is gone.
func rsNoHost(p Partition, id int) Partition {
	strip := func(bs []Replica) []Replica {
		out := append([]Replica(nil), bs...)
		for i := range out {
			if out[i].ID == id {
				out[i] = Replica{ID: id}
			}
		}
		return out
	}
	p.Replicas, p.Isr = strip(p.Replicas), strip(p.Isr)
	return p
}

// evFetch: broker answered with records; preferred as given.
func evFetch(at time.Duration, broker, preferred int) Event {
	return Event{Kind: EventFetched, Broker: broker, Now: rsT0.Add(at), Preferred: preferred, FetchOffset: 10, HighWatermark: 100}
}

// evNamed: the leader names x and, as brokers ≥ 3.3 do, returns no records.
func evNamed(at time.Duration, leader, x int) Event {
	return Event{Kind: EventFetched, Broker: leader, Now: rsT0.Add(at), Preferred: x, Empty: true, FetchOffset: 100, HighWatermark: 100}
}

// evEmpty: broker answered with nothing at offset, its high watermark hw.
func evEmpty(at time.Duration, broker int, offset, hw int64) Event {
	return Event{Kind: EventFetched, Broker: broker, Now: rsT0.Add(at), Preferred: -1, Empty: true, FetchOffset: offset, HighWatermark: hw}
}

func evErr(at time.Duration, broker int, f Failure) Event {
	return Event{Kind: EventFetchError, Broker: broker, Now: rsT0.Add(at), Preferred: -1, Failure: f}
}

func evDial(at time.Duration, broker int) Event {
	return Event{Kind: EventDialFailed, Broker: broker, Now: rsT0.Add(at), Preferred: -1,
		Failure: connLost}
}

func evMeta(at time.Duration, p Partition) Event {
	return Event{Kind: EventMetadata, Now: rsT0.Add(at), Preferred: -1, Partition: p}
}

func evTick(at time.Duration) Event {
	return Event{Kind: EventTick, Now: rsT0.Add(at), Preferred: -1}
}

// pin2 routes the default partition to broker 2 at rsT0.
var pin2 = []Event{evNamed(0, 1, 2)}

func rsEvents(groups ...[]Event) []Event {
	var out []Event
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func rsRepeat(n int, f func(i int) Event) []Event {
	out := make([]Event, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

type rsCase struct {
	name  string
	cfg   *Config    // nil: Rack "b", every other field zero (defaults)
	init  *Partition // nil: rsDefault
	prep  func(c *Cooldowns)
	setup []Event
	mid   func(s *Selector) // after setup, before ev
	ev    Event
	want  Decision
	check func(t *testing.T, s *Selector)
}

func runRouteCase(t *testing.T, tc rsCase) {
	t.Helper()
	cfg := Config{Rack: "b"}
	if tc.cfg != nil {
		cfg = *tc.cfg
	}
	p := rsDefault
	if tc.init != nil {
		p = *tc.init
	}
	c := NewCooldowns()
	if tc.prep != nil {
		tc.prep(c)
	}
	s := New(cfg, c, p, rsT0)
	for i, ev := range tc.setup {
		d := s.step(ev)
		if d.Broker != s.Current() {
			t.Fatalf("setup event %d: decision %d but current %d", i, d.Broker, s.Current())
		}
	}
	if tc.mid != nil {
		tc.mid(s)
	}
	got := s.step(tc.ev)
	if got != tc.want {
		t.Errorf("decision\n got  %+v\n want %+v", got, tc.want)
	}
	if s.Current() != got.Broker {
		t.Errorf("current() = %d, decision said %d", s.Current(), got.Broker)
	}
	if tc.check != nil {
		tc.check(t, s)
	}
}

func TestReplicaSelectorTransitions(t *testing.T) {
	noRack := Config{}
	ttl1s := Config{Rack: "b", PreferenceTTL: time.Second}
	ttl1sMax3 := Config{Rack: "b", PreferenceTTL: time.Second, MaxSwitchesPerMinute: 3}
	ttl30s := Config{Rack: "b", PreferenceTTL: 30 * time.Second}
	smallBackoff := Config{Rack: "b", FollowerBackoffMin: 10 * time.Millisecond, FollowerBackoffMax: 30 * time.Millisecond}
	noHost3 := rsNoHost(rsDefault, 3)
	offline3 := rsOffline(rsDefault, 3)
	unknownEpoch := rsPart(1, -1, 1, 2, 3)
	// leader2: the leader is in the reader's rack.
	leader2 := rsPart(2, 5, 1, 2, 3)
	cool2 := func(c *Cooldowns) { c.fail(2, wholeBroker, rsT0, 5*time.Minute) } // cooldownMin: 2 s
	// lease: the leader names x, then says -1 (reads come back).
	lease := func(at time.Duration, x int) []Event {
		return []Event{evNamed(at, 1, x), evFetch(at+300*time.Millisecond, 1, -1)}
	}
	// Four leases in four seconds, 3 and 2 in turn: the default budget is
	// used up (a return to 2 right after 2 would be a renewal).
	flapped := rsEvents(lease(0, 3), lease(time.Second, 2), lease(2*time.Second, 3), lease(3*time.Second, 2))
	// One lease, the TTL, then two leader changes (always followed, like
	// every move back to the leader): none of them uses the budget.
	ttl1sMax2 := Config{Rack: "b", PreferenceTTL: time.Second, MaxSwitchesPerMinute: 2}
	forced := []Event{evNamed(0, 1, 2), evTick(time.Second), evMeta(2*time.Second, rsPart(3, 6, 1, 2, 3)),
		evMeta(3*time.Second, rsPart(1, 7, 1, 2, 3))}
	ttl1sMax1 := Config{Rack: "b", PreferenceTTL: time.Second, MaxSwitchesPerMinute: 1}
	// Three leases (2, 3, 2), ending on the follower (pinned at 1.2s).
	flapped3 := []Event{evNamed(0, 1, 2), evFetch(300*time.Millisecond, 1, -1), evNamed(600*time.Millisecond, 1, 3),
		evFetch(900*time.Millisecond, 1, -1), evNamed(1200*time.Millisecond, 1, 2)}
	empties := func(n int) []Event {
		return rsRepeat(n, func(i int) Event { return evEmpty(time.Duration(i+1)*time.Second, 2, 100, 100) })
	}
	// alone: the leader is the only in-sync replica, no stand-in for it.
	alone := rsPart(1, 5, 1)
	leaderDials := func(n int) []Event {
		return rsRepeat(n, func(i int) Event { return evDial(time.Duration(i)*time.Second, 1) })
	}

	cases := []rsCase{
		// 1. Start on the leader; no rack, no follower.
		{name: "starts on the leader", ev: evTick(0), want: Decision{Broker: 1}},
		{name: "empty rack ignores a named replica", cfg: &noRack, ev: evNamed(0, 1, 2), want: Decision{Broker: 1}},
		{name: "empty rack follows a leader change", cfg: &noRack, ev: evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		// Without a rack the selector is the Reader's leader-only router.
		{name: "empty rack: leader epoch bump validates the position", cfg: &noRack, ev: evMeta(time.Second, rsPart(1, 6, 1, 2, 3)),
			want: Decision{Broker: 1, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "empty rack: leader disconnect refreshes and backs off", cfg: &noRack, ev: evErr(0, 1, connLost),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},
		{name: "empty rack: leader dial failure refreshes and backs off", cfg: &noRack, ev: evDial(0, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},
		{name: "empty rack: not leader refreshes", cfg: &noRack, ev: evErr(0, 1, NotLeaderForPartition),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},
		{name: "empty rack: metadata without a leader waits", cfg: &noRack, ev: evMeta(0, rsPart(-1, 6, 2, 3)),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},
		{name: "empty rack: a named replica never omits the rack or backs off", cfg: &noRack,
			setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4)}, ev: evNamed(2*time.Second, 1, 2),
			want: Decision{Broker: 1}},

		// 2. The leader names a replica.
		{name: "leader names an in-sync replica", ev: evNamed(0, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "leader names a replica out of the ISR", ev: evNamed(0, 1, 4),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, RefreshMetadata: true, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "leader names a broker unknown to metadata", ev: evNamed(0, 1, 9),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, RefreshMetadata: true, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "leader names an in-sync replica without a host", init: &noHost3, ev: evNamed(0, 1, 3),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, RefreshMetadata: true, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "leader names an offline replica", init: &offline3, ev: evNamed(0, 1, 3),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, RefreshMetadata: true, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "leader names an unknown replica with records", ev: evFetch(0, 1, 4),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, RefreshMetadata: true, OmitRack: true}},
		{name: "leader names a cooling replica", prep: cool2, ev: evNamed(0, 1, 2),
			want: Decision{Broker: 1, Reason: ReasonCoolingDown, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "leader names itself", ev: evNamed(0, 1, 1), want: Decision{Broker: 1}},
		{name: "unknown replica: one refresh per hold", setup: []Event{evNamed(0, 1, 4)}, ev: evNamed(500*time.Millisecond, 1, 4),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, Backoff: 100 * time.Millisecond, OmitRack: true}},
		{name: "unknown replica: refresh again after the first hold (1s)", setup: []Event{evNamed(0, 1, 4)}, ev: evNamed(time.Second, 1, 4),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, RefreshMetadata: true, Backoff: 100 * time.Millisecond, OmitRack: true}},
		{name: "unknown replica: the first hold lapses after 1s", setup: []Event{evNamed(0, 1, 4)}, ev: evTick(time.Second),
			want: Decision{Broker: 1}},
		{name: "unknown replica: the first five holds stay at 1s", setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4)},
			ev: evTick(2*time.Second - time.Nanosecond), want: Decision{Broker: 1, OmitRack: true}},
		{name: "unknown replica: the second hold lapses after 1s", setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4)},
			ev: evTick(2 * time.Second), want: Decision{Broker: 1}},
		{name: "unknown replica: the fifth hold is 1s",
			setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4), evNamed(2*time.Second, 1, 4), evNamed(3*time.Second, 1, 4), evNamed(4*time.Second, 1, 4)},
			ev:    evTick(5 * time.Second), want: Decision{Broker: 1}},
		{name: "unknown replica: the sixth hold doubles to 2s",
			setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4), evNamed(2*time.Second, 1, 4), evNamed(3*time.Second, 1, 4), evNamed(4*time.Second, 1, 4), evNamed(5*time.Second, 1, 4)},
			ev:    evTick(7*time.Second - time.Nanosecond), want: Decision{Broker: 1, OmitRack: true}},
		{name: "unknown replica: the doubled hold lapses",
			setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4), evNamed(2*time.Second, 1, 4), evNamed(3*time.Second, 1, 4), evNamed(4*time.Second, 1, 4), evNamed(5*time.Second, 1, 4)},
			ev:    evTick(7 * time.Second), want: Decision{Broker: 1}},
		{name: "unknown replica: the hold is bounded at 10s",
			setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4), evNamed(2*time.Second, 1, 4), evNamed(3*time.Second, 1, 4), evNamed(4*time.Second, 1, 4),
				evNamed(5*time.Second, 1, 4), evNamed(7*time.Second, 1, 4), evNamed(11*time.Second, 1, 4), evNamed(19*time.Second, 1, 4)},
			ev: evTick(29*time.Second - time.Nanosecond), want: Decision{Broker: 1, OmitRack: true}},
		{name: "unknown replica: the bounded hold lapses",
			setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4), evNamed(2*time.Second, 1, 4), evNamed(3*time.Second, 1, 4), evNamed(4*time.Second, 1, 4),
				evNamed(5*time.Second, 1, 4), evNamed(7*time.Second, 1, 4), evNamed(11*time.Second, 1, 4), evNamed(19*time.Second, 1, 4)},
			ev: evTick(29 * time.Second), want: Decision{Broker: 1}},
		{name: "unknown replica: holds start at 1s again once it was known",
			setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4), evMeta(1500*time.Millisecond, rsPart(1, 5, 1, 2, 3, 4)),
				evNamed(2*time.Second, 1, 4), evMeta(3*time.Second, rsDefault), evNamed(4*time.Second, 1, 4)},
			ev: evTick(5 * time.Second), want: Decision{Broker: 1}},
		{name: "unknown replica: another replica starts at 1s", setup: []Event{evNamed(0, 1, 4), evNamed(time.Second, 1, 4), evNamed(3*time.Second, 1, 5)},
			ev: evTick(4 * time.Second), want: Decision{Broker: 1}},
		{name: "unknown replica: metadata still without it keeps the hold",
			setup: []Event{evNamed(0, 1, 4), evMeta(300*time.Millisecond, rsDefault)}, ev: evTick(800 * time.Millisecond),
			want: Decision{Broker: 1, OmitRack: true}},
		{name: "unknown replica: metadata showing it ends the hold",
			setup: []Event{evNamed(0, 1, 4), evMeta(300*time.Millisecond, rsPart(1, 5, 1, 2, 3, 4))}, ev: evTick(800 * time.Millisecond),
			want: Decision{Broker: 1}},
		{name: "unknown replica: once in metadata the naming is followed",
			setup: []Event{evNamed(0, 1, 4), evMeta(time.Second, rsPart(1, 5, 1, 2, 3, 4))}, ev: evNamed(2*time.Second, 1, 4),
			want: Decision{Broker: 4, Changed: true, Reason: ReasonPreferred}},
		{name: "cooling replica: the rack is omitted until the cooldown ends", prep: cool2,
			setup: []Event{evNamed(0, 1, 2)}, ev: evTick(cooldownMin - time.Nanosecond),
			want: Decision{Broker: 1, OmitRack: true}},
		{name: "cooling replica: named again once the cooldown ended", prep: cool2,
			setup: []Event{evNamed(0, 1, 2)}, ev: evNamed(cooldownMin, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},

		// 3. Preference TTL and -1.
		{name: "TTL sends reads back to the leader", setup: pin2, ev: evTick(5 * time.Minute),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "before the TTL the pin holds", setup: pin2, ev: evTick(5*time.Minute - time.Nanosecond),
			want: Decision{Broker: 2}},
		{name: "TTL expiry is seen on a follower fetch", setup: pin2, ev: evFetch(5*time.Minute, 2, -1),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "TTL expiry on an empty follower fetch asks the leader at once", setup: pin2, ev: evEmpty(5*time.Minute, 2, 100, 100),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "configured TTL", cfg: &ttl30s, setup: pin2, ev: evTick(30 * time.Second),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "follower -1 keeps the pin", setup: pin2, ev: evFetch(time.Second, 2, -1),
			want: Decision{Broker: 2}},
		{name: "follower -1 does not extend the TTL", setup: rsEvents(pin2, []Event{evFetch(4*time.Minute, 2, -1)}),
			ev: evFetch(5*time.Minute, 2, -1), want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "a follower naming a replica is ignored", setup: pin2, ev: evFetch(time.Second, 2, 3),
			want: Decision{Broker: 2}},
		{name: "leader naming the pinned replica again restarts the TTL",
			setup: rsEvents(pin2, []Event{evNamed(4*time.Minute, 1, 2)}), ev: evTick(5 * time.Minute),
			want: Decision{Broker: 2}},
		{name: "restarted TTL expires",
			setup: rsEvents(pin2, []Event{evNamed(4*time.Minute, 1, 2)}), ev: evTick(9 * time.Minute),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "leader -1 keeps reads on the leader", ev: evFetch(0, 1, -1), want: Decision{Broker: 1}},
		{name: "leader -1 brings reads back from a follower", setup: pin2, ev: evFetch(time.Second, 1, -1),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonLeaderPreferred}},
		{name: "leader naming a refused replica brings reads back", setup: pin2, ev: evNamed(time.Second, 1, 4),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonUnknownReplica, RefreshMetadata: true, Backoff: 50 * time.Millisecond, OmitRack: true}},

		// 4. Follower failures (errors are generated below); the others.
		{name: "follower dial failure", setup: pin2, ev: evDial(time.Second, 2),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed},
			check: func(t *testing.T, s *Selector) {
				if !s.cooldown.cooling(2, rsOtherTP, rsT0.Add(time.Second+cooldownMin-time.Nanosecond)) {
					t.Error("follower not cooling for every partition before the first cooldown ends")
				}
				if s.cooldown.cooling(2, rsTP, rsT0.Add(time.Second+cooldownMin)) {
					t.Error("follower still cooling after the first cooldown")
				}
			}},
		{name: "configured cooldown below the first step caps it", cfg: &Config{Rack: "b", Cooldown: time.Second}, setup: pin2, ev: evDial(time.Second, 2),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(2, rsTP, rsT0.Add(2*time.Second)) {
					t.Error("follower cooling past the configured cooldown")
				}
			}},
		{name: "a follower failing again soon cools down twice as long", setup: rsEvents(pin2, []Event{evDial(time.Second, 2), evNamed(3*time.Second, 1, 2)}),
			ev: evDial(4*time.Second, 2), want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed},
			check: func(t *testing.T, s *Selector) {
				if !s.cooldown.cooling(2, rsTP, rsT0.Add(8*time.Second-time.Nanosecond)) || s.cooldown.cooling(2, rsTP, rsT0.Add(8*time.Second)) {
					t.Error("the second cooldown is not 4 s")
				}
			}},
		{name: "a canceled fetch of the follower changes nothing", setup: pin2, ev: evErr(time.Second, 2, canceled),
			want: Decision{Broker: 2},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(2, rsTP, rsT0.Add(time.Second)) {
					t.Error("a canceled fetch cooled the follower")
				}
			}},
		{name: "a stale failure report of a broker not read changes nothing", setup: pin2, ev: evDial(time.Second, 3),
			want: Decision{Broker: 2},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(3, rsTP, rsT0.Add(time.Second)) {
					t.Error("a broker this partition does not read from was cooled down")
				}
			}},
		{name: "follower cooled down by another partition's broker failure", setup: pin2,
			mid: func(s *Selector) { s.cooldown.fail(2, wholeBroker, rsT0.Add(time.Second), time.Minute) },
			ev:  evTick(time.Second), want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}},
		{name: "another partition's error on the same follower keeps this one there", setup: pin2,
			mid: func(s *Selector) { s.cooldown.fail(2, rsOtherTP, rsT0.Add(time.Second), time.Minute) },
			ev:  evTick(time.Second), want: Decision{Broker: 2}},
		{name: "fenced at the follower, then the new epoch: reads stay on the follower",
			setup: rsEvents(pin2, []Event{evErr(time.Second, 2, FencedLeaderEpoch)}), ev: evMeta(2*time.Second, rsPart(1, 6, 1, 2, 3)),
			want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(2, rsTP, rsT0.Add(2*time.Second)) {
					t.Error("the follower was cooled down for the client's stale epoch")
				}
			}},
		{name: "stale-client error, fresh metadata without the follower in the ISR: leader",
			setup: rsEvents(pin2, []Event{evErr(time.Second, 2, NotLeaderOrFollower)}), ev: evMeta(2*time.Second, rsPart(1, 5, 1, 3)),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerGone}},
		{name: "stale-client errors: the fourth in a row fails the follower for the partition",
			setup: rsEvents(pin2, rsRepeat(3, func(i int) Event { return evErr(time.Duration(i+1)*time.Second, 2, UnknownLeaderEpoch) })),
			ev:    evErr(4*time.Second, 2, UnknownLeaderEpoch),
			want:  Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed, RefreshMetadata: true},
			check: func(t *testing.T, s *Selector) {
				if !s.cooldown.cooling(2, rsTP, rsT0.Add(4*time.Second)) || s.cooldown.cooling(2, rsOtherTP, rsT0.Add(4*time.Second)) {
					t.Error("want the (follower, partition) pair cooling, not the broker")
				}
			}},
		{name: "fenced errors never fail the follower (the client is behind): the tenth refreshes and stays",
			setup: rsEvents(pin2, rsRepeat(9, func(i int) Event { return evErr(time.Duration(i+1)*time.Second, 2, FencedLeaderEpoch) })),
			ev:    evErr(10*time.Second, 2, FencedLeaderEpoch),
			want:  Decision{Broker: 2, Reason: ReasonStaleClient, RefreshMetadata: true, Backoff: time.Second},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(2, rsTP, rsT0.Add(10*time.Second)) {
					t.Error("the follower was cooled down for the client's stale epoch")
				}
			}},
		{name: "fenced errors do not count towards the limit of the other stale-client errors",
			setup: rsEvents(pin2, rsRepeat(5, func(i int) Event { return evErr(time.Duration(i+1)*time.Second, 2, FencedLeaderEpoch) })),
			ev:    evErr(6*time.Second, 2, UnknownLeaderEpoch),
			want:  Decision{Broker: 2, Reason: ReasonStaleClient, RefreshMetadata: true, Backoff: time.Second}},
		{name: "stale-client errors: the backoff grows",
			setup: rsEvents(pin2, rsRepeat(2, func(i int) Event { return evErr(time.Duration(i+1)*time.Second, 2, FencedLeaderEpoch) })),
			ev:    evErr(3*time.Second, 2, FencedLeaderEpoch),
			want:  Decision{Broker: 2, Reason: ReasonStaleClient, RefreshMetadata: true, Backoff: 200 * time.Millisecond}},
		{name: "stale-client errors: a good fetch resets the count",
			setup: rsEvents(pin2, rsRepeat(3, func(i int) Event { return evErr(time.Duration(i+1)*time.Second, 2, FencedLeaderEpoch) }),
				[]Event{evFetch(4*time.Second, 2, -1)}),
			ev:   evErr(5*time.Second, 2, FencedLeaderEpoch),
			want: Decision{Broker: 2, Reason: ReasonStaleClient, RefreshMetadata: true, Backoff: 50 * time.Millisecond}},

		// 4b. Cooldowns end on evidence that the replica is healthy.
		{name: "a dead follower seen out of the ISR and back is read again at once", cfg: &Config{Rack: "b", Cooldown: time.Hour},
			setup: rsEvents(pin2, []Event{evDial(time.Second, 2), evMeta(5*time.Second, rsPart(1, 5, 1, 3)), evMeta(20*time.Second, rsDefault)}),
			ev:    evNamed(20*time.Second, 1, 2), want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "the leader naming a replica seen out of the ISR ends its cooldown", cfg: &Config{Rack: "b", Cooldown: time.Hour},
			prep:  func(c *Cooldowns) { c.fail(2, wholeBroker, rsT0, time.Hour) },
			setup: []Event{evMeta(time.Second, rsPart(1, 5, 1, 3)), evMeta(1500*time.Millisecond, rsPart(1, 5, 1, 2, 3))},
			ev:    evNamed(1600*time.Millisecond, 1, 2), want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "a cooldown ended by the ISR ends the rack omission at once", cfg: &Config{Rack: "b", Cooldown: time.Hour},
			prep:  func(c *Cooldowns) { c.fail(2, wholeBroker, rsT0, time.Hour) },
			setup: []Event{evNamed(500*time.Millisecond, 1, 2), evMeta(time.Second, rsPart(1, 5, 1, 3)), evMeta(1500*time.Millisecond, rsDefault)},
			ev:    evFetch(1600*time.Millisecond, 1, -1), want: Decision{Broker: 1}},
		// With probes, the ISR is not proof that a broker which failed as a
		// whole answers: a ZooKeeper broker's stale cache lists it again, a
		// leader before 3.4 names it out of the ISR. The probe is due at once.
		{name: "probing: a dead follower seen out of the ISR and back waits for its probe", cfg: &Config{Rack: "b", Cooldown: time.Hour},
			prep:  func(c *Cooldowns) { c.RequireProbe(); c.fail(2, wholeBroker, rsT0, time.Hour) },
			setup: []Event{evNamed(500*time.Millisecond, 1, 2), evMeta(time.Second, rsPart(1, 5, 1, 3))},
			ev:    evMeta(1500*time.Millisecond, rsDefault),
			want:  Decision{Broker: 1, OmitRack: true, Probe: true, ProbeBroker: 2}},
		{name: "probing: a leader before 3.4 naming a follower seen out of the ISR", cfg: &Config{Rack: "b", Cooldown: time.Hour},
			prep:  func(c *Cooldowns) { c.RequireProbe(); c.fail(2, wholeBroker, rsT0, time.Hour) },
			setup: []Event{evMeta(time.Second, rsPart(1, 5, 1, 3)), evNamed(1500*time.Millisecond, 1, 2), evMeta(1600*time.Millisecond, rsDefault)},
			ev:    evNamed(1700*time.Millisecond, 1, 2),
			want:  Decision{Broker: 1, Reason: ReasonCoolingDown, Backoff: 100 * time.Millisecond, OmitRack: true}},
		{name: "a replica never seen out of the ISR stays cooling when named", cfg: &Config{Rack: "b", Cooldown: time.Hour},
			prep:  func(c *Cooldowns) { c.fail(2, wholeBroker, rsT0, time.Hour) },
			setup: []Event{evMeta(time.Second, rsDefault)},
			ev:    evNamed(1500*time.Millisecond, 1, 2), want: Decision{Broker: 1, Reason: ReasonCoolingDown, Backoff: 50 * time.Millisecond, OmitRack: true}},

		// 5. Leader failures.
		{name: "leader dial failure without a stand-in", init: &alone, ev: evDial(0, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(1, rsTP, rsT0) {
					t.Error("the leader was put in cooldown")
				}
			}},
		{name: "leader backoff grows", init: &alone, setup: leaderDials(3), ev: evDial(3*time.Second, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 800 * time.Millisecond}},
		{name: "leader backoff is bounded", init: &alone, setup: leaderDials(10), ev: evDial(10*time.Second, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: time.Second}},
		{name: "configured leader backoff", cfg: &Config{Rack: "b", LeaderBackoffMin: time.Second, LeaderBackoffMax: 3 * time.Second},
			init: &alone, setup: leaderDials(2), ev: evDial(2*time.Second, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 3 * time.Second}},
		{name: "a leader fetch resets its backoff", init: &alone, setup: rsEvents(leaderDials(3), []Event{evFetch(3*time.Second, 1, -1)}),
			ev:   evDial(4*time.Second, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},
		{name: "leader timeout without a stand-in backs off without a refresh", init: &alone, ev: evErr(0, 1, RequestTimedOut),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, Backoff: 100 * time.Millisecond}},
		{name: "leader OffsetOutOfRange is the Reader's (reset), not routing's", ev: evErr(0, 1, OffsetOutOfRange),
			want: Decision{Broker: 1}},
		{name: "a canceled fetch of the leader changes nothing", ev: evErr(0, 1, canceled),
			want: Decision{Broker: 1}},
		{name: "a leader failure while pinned leaves the pin", setup: pin2, ev: evErr(time.Second, 1, connLost),
			want: Decision{Broker: 2, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},

		// 6. A follower with nothing above its high watermark.
		{name: "follower empty at its HW backs off", setup: pin2, ev: evEmpty(time.Second, 2, 100, 100),
			want: Decision{Broker: 2, Backoff: 50 * time.Millisecond}},
		{name: "follower empty above its HW backs off", setup: pin2, ev: evEmpty(time.Second, 2, 101, 100),
			want: Decision{Broker: 2, Backoff: 50 * time.Millisecond}},
		{name: "follower empty backoff grows", setup: rsEvents(pin2, empties(2)), ev: evEmpty(3*time.Second, 2, 100, 100),
			want: Decision{Broker: 2, Backoff: 200 * time.Millisecond}},
		{name: "follower empty backoff is bounded", setup: rsEvents(pin2, empties(5)), ev: evEmpty(6*time.Second, 2, 100, 100),
			want: Decision{Broker: 2, Backoff: time.Second}},
		{name: "configured follower backoff", cfg: &smallBackoff, setup: rsEvents(pin2, empties(2)), ev: evEmpty(3*time.Second, 2, 100, 100),
			want: Decision{Broker: 2, Backoff: 30 * time.Millisecond}},
		{name: "a non-empty fetch resets the follower backoff",
			setup: rsEvents(pin2, empties(3), []Event{evFetch(4*time.Second, 2, -1)}), ev: evEmpty(5*time.Second, 2, 100, 100),
			want: Decision{Broker: 2, Backoff: 50 * time.Millisecond}},
		{name: "follower empty below its HW: no backoff", setup: pin2, ev: evEmpty(time.Second, 2, 50, 100),
			want: Decision{Broker: 2}},
		{name: "leader empty: no backoff (it long-polls)", ev: evEmpty(0, 1, 100, 100),
			want: Decision{Broker: 1}},

		// 7. Metadata.
		{name: "new leader while pinned: the in-sync follower keeps serving", setup: pin2, ev: evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader while pinned, the follower out of its ISR", setup: pin2, ev: evMeta(time.Second, rsPart(3, 6, 1, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader while pinned, the follower cooling for the partition", setup: pin2,
			mid:  func(s *Selector) { s.cooldown.fail(2, rsTP, rsT0.Add(time.Second), time.Minute) },
			ev:   evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader while on the old leader: reads follow it", ev: evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader while on the old leader in the reader's rack: it stays, as a follower", init: &leader2,
			ev: evMeta(time.Second, rsPart(3, 6, 1, 2, 3)), want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true},
			check: func(t *testing.T, s *Selector) {
				assert.Equal(t, 3, s.Partition().Leader.ID, "the new leader")
				d := s.step(evTick(time.Second + s.cfg.PreferenceTTL))
				assert.Equal(t, Decision{Broker: 3, Changed: true, Reason: ReasonTTL}, d, "its TTL runs from the leader change")
			}},
		{name: "new leader while on the old leader in the reader's rack, out of the ISR: reads follow", init: &leader2,
			ev: evMeta(time.Second, rsPart(3, 6, 1, 3)), want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader while on the old leader in the reader's rack, cooling: reads follow", init: &leader2,
			mid:  func(s *Selector) { s.cooldown.fail(2, rsTP, rsT0.Add(time.Second), time.Minute) },
			ev:   evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader after the in-rack old leader's dial failed: reads follow, it cools down", init: &leader2,
			setup: []Event{evDial(500*time.Millisecond, 2)}, ev: evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true},
			check: func(t *testing.T, s *Selector) {
				assert.True(t, s.cooldown.cooling(2, rsOtherTP, rsT0.Add(time.Second)), "broker 2 cools down for every partition")
			}},
		{name: "new leader after the old leader's stale-client error: no cooldown", init: &leader2,
			setup: []Event{evErr(500*time.Millisecond, 2, NotLeaderOrFollower)}, ev: evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader epoch on the leader", ev: evMeta(0, rsPart(1, 6, 1, 2, 3)),
			want: Decision{Broker: 1, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader epoch while pinned", setup: pin2, ev: evMeta(time.Second, rsPart(1, 6, 1, 2, 3)),
			want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "the pinned follower becomes the leader", setup: pin2, ev: evMeta(time.Second, rsPart(2, 6, 1, 2, 3)),
			want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "new leader id at an unknown epoch", init: &unknownEpoch, ev: evMeta(0, rsPart(3, -1, 1, 2, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "the pinned follower leaves the ISR", setup: pin2, ev: evMeta(time.Second, rsPart(1, 5, 1, 3)),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerGone}},
		{name: "the pinned follower goes offline", setup: pin2, ev: evMeta(time.Second, rsOffline(rsDefault, 2)),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerGone}},
		{name: "the pinned follower is gone from metadata", setup: pin2, ev: evMeta(time.Second, rsNoHost(rsDefault, 2)),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerGone}},
		{name: "same metadata keeps the pin", setup: pin2, ev: evMeta(time.Second, rsDefault),
			want: Decision{Broker: 2}},
		{name: "a lower epoch is ignored while pinned", setup: pin2, ev: evMeta(time.Second, rsPart(3, 4, 1, 3)),
			want: Decision{Broker: 2}},
		{name: "a lower epoch is ignored on the leader", ev: evMeta(0, rsPart(3, 4, 1, 2, 3)),
			want: Decision{Broker: 1}},
		{name: "a lower epoch's ISR is not used", setup: []Event{evMeta(0, rsPart(1, 4, 1, 2, 3, 4))}, ev: evNamed(time.Second, 1, 4),
			want: Decision{Broker: 1, Reason: ReasonUnknownReplica, RefreshMetadata: true, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "a lower epoch does not undo a leader change",
			setup: []Event{evMeta(0, rsPart(3, 6, 1, 2, 3))}, ev: evMeta(time.Second, rsDefault),
			want: Decision{Broker: 3}},
		{name: "metadata without a leader", ev: evMeta(0, rsPart(-1, 6, 2, 3)),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond}},

		// 8. Flap damping: the budget counts leases (moves to a follower).
		{name: "budget used up: a move to a follower is refused", cfg: &ttl1s, setup: flapped, ev: evNamed(4*time.Second, 1, 3),
			want: Decision{Broker: 1, Reason: ReasonFlapDamped, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "budget used up: the rack is omitted until a slot frees", cfg: &ttl1s,
			setup: rsEvents(flapped, []Event{evNamed(4*time.Second, 1, 3)}), ev: evTick(time.Minute - time.Nanosecond),
			want: Decision{Broker: 1, OmitRack: true}},
		{name: "budget frees 60s after the oldest lease", cfg: &ttl1s,
			setup: rsEvents(flapped, []Event{evNamed(4*time.Second, 1, 3)}), ev: evNamed(time.Minute, 1, 3),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonPreferred}},
		{name: "forced moves do not use the budget", cfg: &ttl1sMax2, setup: forced, ev: evNamed(3*time.Second, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "follower failures do not use the budget", cfg: &Config{Rack: "b", Cooldown: time.Second, MaxSwitchesPerMinute: 3},
			setup: []Event{evNamed(0, 1, 2), evDial(500*time.Millisecond, 2), evNamed(2*time.Second, 1, 2), evDial(2500*time.Millisecond, 2)},
			ev:    evNamed(4*time.Second, 1, 2), want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "a TTL renewal is off the budget", cfg: &ttl1sMax1, setup: []Event{evNamed(0, 1, 2), evTick(time.Second)},
			ev: evNamed(time.Second, 1, 2), want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "TTL renewals go on with a budget of one", cfg: &ttl1sMax1,
			setup: []Event{evNamed(0, 1, 2), evTick(time.Second), evNamed(time.Second, 1, 2), evTick(2 * time.Second)},
			ev:    evNamed(2*time.Second, 1, 2), want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "a renewal is the same replica only", cfg: &ttl1sMax1, setup: []Event{evNamed(0, 1, 2), evTick(time.Second)},
			ev: evNamed(time.Second, 1, 3), want: Decision{Broker: 1, Reason: ReasonFlapDamped, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "a renewal is refused while the follower cools down", cfg: &ttl1sMax1,
			setup: []Event{evNamed(0, 1, 2), evTick(time.Second)},
			mid:   func(s *Selector) { s.cooldown.fail(2, wholeBroker, rsT0.Add(time.Second), time.Minute) },
			ev:    evNamed(time.Second, 1, 2), want: Decision{Broker: 1, Reason: ReasonCoolingDown, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "budget used up: back to the leader on failure", cfg: &ttl1sMax3, setup: flapped3, ev: evDial(1500*time.Millisecond, 2),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}},
		{name: "budget used up: a leader change is followed", cfg: &ttl1sMax3, setup: flapped3, ev: evMeta(1500*time.Millisecond, rsPart(3, 6, 1, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "budget used up: the follower leaving the ISR is followed", cfg: &ttl1sMax3, setup: flapped3, ev: evMeta(1500*time.Millisecond, rsPart(1, 5, 1, 3)),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerGone}},
		{name: "budget used up: TTL still ends the pin", cfg: &ttl1sMax3, setup: flapped3, ev: evTick(2200 * time.Millisecond),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonTTL}},
		{name: "budget used up: a renewal still happens", cfg: &ttl1sMax3, setup: rsEvents(flapped3, []Event{evTick(2200 * time.Millisecond)}),
			ev: evNamed(2300*time.Millisecond, 1, 2), want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
	}

	// 4. Follower errors, by what they are evidence against. The client's
	// stale view (epochs, leadership): refresh and stay. One partition's
	// replica: back to the leader, that pair cools down. The broker: back
	// to the leader, the broker cools down for every partition.
	// The kafka package classifies each error (TestRouteFailure there).
	for i, f := range []Failure{NotLeaderForPartition, FencedLeaderEpoch, UnknownLeaderEpoch} {
		cases = append(cases, rsCase{
			name: fmt.Sprint("follower stale-client error ", i), setup: pin2, ev: evErr(time.Second, 2, f),
			want: Decision{Broker: 2, Reason: ReasonStaleClient, RefreshMetadata: true, Backoff: 50 * time.Millisecond},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(2, rsTP, rsT0.Add(time.Second)) {
					t.Error("the follower was cooled down for the client's stale view")
				}
			},
		})
	}
	followerErrors := []struct {
		name    string
		f       Failure
		broker  bool // a broker-level failure
		refresh bool
	}{
		{"offset out of range", OffsetOutOfRange, false, false}, // never a reset: the leader decides
		{"replica not available", ReplicaNotAvailable, false, true},
		{"unknown topic", UnknownTopicOrPartition, false, true},
		{"topic authorization", TopicAuthorizationFailed, false, false},
		{"corrupt records", corruptRecords, false, false},
		{"storage error", KafkaStorageError, true, true},
		{"request timed out", RequestTimedOut, true, false},
		{"connection lost", connLost, true, false},
	}
	for _, fe := range followerErrors {
		fe := fe
		cases = append(cases, rsCase{
			name: "follower error " + fe.name, setup: pin2, ev: evErr(time.Second, 2, fe.f),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed, RefreshMetadata: fe.refresh},
			check: func(t *testing.T, s *Selector) {
				now := rsT0.Add(time.Second)
				if !s.cooldown.cooling(2, rsTP, now) {
					t.Error("the failed follower is not cooling")
				}
				if got := s.cooldown.cooling(2, rsOtherTP, now); got != fe.broker {
					t.Errorf("cooling for the broker's other partitions: %v, want %v", got, fe.broker)
				}
			},
		})
	}
	// 5. Leader errors that mean leadership moved or the broker went away.
	for i, f := range []Failure{NotLeaderForPartition, LeaderNotAvailable, FencedLeaderEpoch, UnknownLeaderEpoch,
		KafkaStorageError, connLost} {
		cases = append(cases, rsCase{
			name: fmt.Sprint("leader error ", i), ev: evErr(0, 1, f),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * time.Millisecond},
			check: func(t *testing.T, s *Selector) {
				if s.cooldown.cooling(1, rsTP, rsT0) {
					t.Error("the leader was put in cooldown")
				}
			},
		})
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runRouteCase(t, tc) })
	}
}

func TestReplicaSelectorDefaults(t *testing.T) {
	got := Config{Rack: "r"}.withDefaults()
	want := Config{
		Rack:                 "r",
		PreferenceTTL:        5 * time.Minute,
		Cooldown:             5 * time.Minute,
		MaxSwitchesPerMinute: 4,
		FollowerBackoffMin:   50 * time.Millisecond,
		FollowerBackoffMax:   time.Second,
		LeaderBackoffMin:     100 * time.Millisecond,
		LeaderBackoffMax:     time.Second,
		ErrorBackoffMin:      100 * time.Millisecond,
		ErrorBackoffMax:      time.Second,
	}
	if got != want {
		t.Errorf("defaults\n got  %+v\n want %+v", got, want)
	}
	set := Config{PreferenceTTL: time.Second, Cooldown: 2 * time.Second, MaxSwitchesPerMinute: 9,
		FollowerBackoffMin: time.Millisecond, FollowerBackoffMax: 2 * time.Millisecond,
		LeaderBackoffMin: 3 * time.Millisecond, LeaderBackoffMax: 4 * time.Millisecond,
		ErrorBackoffMin: 5 * time.Millisecond, ErrorBackoffMax: 6 * time.Millisecond}
	if got := set.withDefaults(); got != set {
		t.Errorf("set fields were changed: %+v", got)
	}
	if got := (Config{FollowerBackoffMin: 2 * time.Second}).withDefaults(); got.FollowerBackoffMax != 2*time.Second {
		t.Errorf("FollowerBackoffMax %v below FollowerBackoffMin 2s", got.FollowerBackoffMax)
	}
	// A nil cache gets one of its own.
	s := New(Config{Rack: "b"}, nil, rsDefault, rsT0)
	s.step(evNamed(0, 1, 2))
	if d := s.step(evDial(time.Second, 2)); d.Broker != 1 || !s.cooldown.cooling(2, rsTP, rsT0.Add(time.Second)) {
		t.Errorf("with a nil cache: %+v", d)
	}
}

// Time never goes back: an event with an older (or zero) clock reading is
// taken at the latest time seen, so it cannot revive an expired pin.
func TestReplicaSelectorClockNeverRewinds(t *testing.T) {
	s := New(Config{Rack: "b"}, NewCooldowns(), rsDefault, rsT0)
	s.step(evNamed(0, 1, 2))
	if d := s.step(evTick(5 * time.Minute)); d.Broker != 1 || d.Reason != ReasonTTL {
		t.Fatalf("TTL: %+v", d)
	}
	if d := s.step(evNamed(time.Minute, 1, 2)); d.Broker != 2 { // late reading: taken at +5m
		t.Fatalf("late naming: %+v", d)
	}
	if d := s.step(Event{Kind: EventTick}); d.Broker != 2 {
		t.Fatalf("zero clock: %+v", d)
	}
	if d := s.step(evTick(10*time.Minute - time.Nanosecond)); d.Broker != 2 {
		t.Fatalf("the pin set at the late event's clamped time (+5m) ended early: %+v", d)
	}
	if d := s.step(evTick(10 * time.Minute)); d.Broker != 1 {
		t.Fatalf("the pin outlived its TTL: %+v", d)
	}
}

// Live-lock (a), lesson 4: the leader keeps naming a follower that cannot
// be reached. Without the negative cache the reader loops leader →
// follower → dial failure → leader forever; with it, the follower is tried
// once per cooldown, each cooldown twice as long as the one before.
func TestRouteLivelockLeaderReadvertisesDeadFollower(t *testing.T) {
	c := NewCooldowns()
	s := New(Config{Rack: "b", MaxSwitchesPerMinute: 100}, c, rsDefault, rsT0)
	if d := s.step(evNamed(0, 1, 2)); d.Broker != 2 || !d.Changed {
		t.Fatalf("first naming: %+v", d)
	}
	at := time.Second
	tries := 0
	for cool := cooldownMin; cool <= 64*time.Second; cool *= 2 {
		tries++
		if d := s.step(evDial(at, 2)); d != (Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}) {
			t.Fatalf("dial failure %d: %+v", tries, d)
		}
		end := at + cool
		wantBackoff := []time.Duration{50, 100, 200, 400, 800}
		for i, n := 0, at+100*time.Millisecond; n < end; i, n = i+1, n+100*time.Millisecond {
			d := s.step(evNamed(n, 1, 2))
			want := Decision{Broker: 1, Reason: ReasonCoolingDown, Backoff: time.Second, OmitRack: true}
			if i < len(wantBackoff) {
				want.Backoff = wantBackoff[i] * time.Millisecond
			}
			if d != want {
				t.Fatalf("naming %d at +%v while cooling until +%v:\n got  %+v\n want %+v", i+1, n, end, d, want)
			}
		}
		// The fetcher omits the rack meanwhile: the leader names nobody
		// and serves the records; routing stays put.
		if d := s.step(evFetch(end-time.Nanosecond, 1, -1)); d != (Decision{Broker: 1, OmitRack: true}) {
			t.Fatalf("leader serving before +%v: %+v", end, d)
		}
		if d := s.step(evFetch(end, 1, -1)); d != (Decision{Broker: 1}) {
			t.Fatalf("at the end of the cooldown the rack is sent again: %+v", d)
		}
		if d := s.step(evNamed(end, 1, 2)); d != (Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}) {
			t.Fatalf("after the cooldown the follower is tried again: %+v", d)
		}
		at = end + 100*time.Millisecond
	}
	if tries != 6 {
		t.Fatalf("%d tries in the first two minutes, want 6 (2+4+...+64 s)", tries)
	}
}

// Live-lock (b), lesson 5: a follower refuses ListOffsets and
// OffsetForLeaderEpoch. Offsets are resolved at the leader only: position
// checks (ValidateOffset) and resets never reach a follower, whether the
// fetches stay on it (still in the ISR) or go back to the leader.
func TestRouteLivelockFollowerRefusesListOffsets(t *testing.T) {
	steps := []struct {
		name   string
		events []Event // from a selector pinned to broker 2
		leader int     // the leader after the events
		want   Decision
	}{
		{"leader changes while pinned", []Event{evMeta(time.Second, rsPart(3, 6, 1, 2, 3))}, 3,
			Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{"leader epoch bumps while pinned", []Event{evMeta(time.Second, rsPart(1, 6, 1, 2, 3))}, 1,
			Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{"follower offset out of range", []Event{evErr(time.Second, 2, OffsetOutOfRange)}, 1,
			Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}},
		{"follower fenced, then the epoch moves", []Event{evErr(time.Second, 2, FencedLeaderEpoch), evMeta(2*time.Second, rsPart(1, 6, 1, 2, 3))}, 1,
			Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{"follower unknown epoch, then a new leader", []Event{evErr(time.Second, 2, UnknownLeaderEpoch), evMeta(2*time.Second, rsPart(3, 6, 1, 2, 3))}, 3,
			Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{"follower not leader or follower, then the same metadata", []Event{evErr(time.Second, 2, NotLeaderOrFollower), evMeta(2*time.Second, rsDefault)}, 1,
			Decision{Broker: 2}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			s := New(Config{Rack: "b"}, NewCooldowns(), rsDefault, rsT0)
			s.step(evNamed(0, 1, 2))
			var d Decision
			for _, ev := range st.events {
				d = s.step(ev)
				if d.Broker == 2 && !s.inSync(2) {
					t.Fatalf("reads on a follower out of the ISR: %+v", d)
				}
			}
			if d != st.want {
				t.Errorf("\n got  %+v\n want %+v", d, st.want)
			}
			if s.leader != st.leader {
				t.Errorf("leader %d, want %d", s.leader, st.leader)
			}
		})
	}
}

// Live-lock (c), lesson 6: a follower's -1 means "stay with me", the
// leader's -1 "no preference". Confusing them flips reads every fetch.
func TestRouteLivelockMinusOneOscillation(t *testing.T) {
	s := New(Config{Rack: "b"}, NewCooldowns(), rsDefault, rsT0)
	changes := 0
	step := func(ev Event, wantBroker int) Decision {
		t.Helper()
		d := s.step(ev)
		if d.Broker != wantBroker {
			t.Fatalf("at +%v: routed to %d, want %d (%+v)", ev.Now.Sub(rsT0), d.Broker, wantBroker, d)
		}
		if d.Changed {
			changes++
		}
		return d
	}
	if d := step(evNamed(0, 1, 2), 2); d.Reason != ReasonPreferred {
		t.Fatalf("naming: %+v", d)
	}
	at := 200 * time.Millisecond
	n := 0
	for ; at < 5*time.Minute; at += 200 * time.Millisecond {
		step(evFetch(at, 2, -1), 2) // the follower's -1: stay
		n++
	}
	if changes != 1 {
		t.Fatalf("%d changes while the follower answered -1 %d times", changes, n)
	}
	if d := step(evFetch(at, 2, -1), 1); d.Reason != ReasonTTL {
		t.Fatalf("TTL: %+v", d)
	}
	for i := 0; i < 1000; i++ {
		at += 200 * time.Millisecond
		step(evFetch(at, 1, -1), 1) // the leader's -1: no preference, stay
	}
	if changes != 2 {
		t.Fatalf("%d changes, want 2 (to the follower, back at TTL)", changes)
	}
}

// A long random walk of events: whatever the brokers and the network do,
// the invariants of the routing hold.
func TestRouteRandomProperties(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		seed := seed
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { routeRandomWalk(t, seed, 20000) })
	}
}

func routeRandomWalk(t *testing.T, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	pick := func(xs ...time.Duration) time.Duration { return xs[rng.Intn(len(xs))] }
	cfg := Config{
		Rack:                 "b",
		PreferenceTTL:        pick(20*time.Second, 90*time.Second, 5*time.Minute),
		Cooldown:             pick(5*time.Second, 40*time.Second, 3*time.Minute),
		MaxSwitchesPerMinute: 1 + rng.Intn(4),
	}
	if seed%6 == 0 {
		cfg.Rack = "" // follower fetching off
	}
	if seed%4 == 3 {
		cfg.Choice = RackAffinity{} // the client's choice when the leader names none
	}
	eff := cfg.withDefaults()
	maxBackoff := eff.FollowerBackoffMax
	if eff.LeaderBackoffMax > maxBackoff {
		maxBackoff = eff.LeaderBackoffMax
	}

	const nBrokers = 5
	randPart := func(leader, epoch int) Partition {
		p := Partition{Topic: "t", Leader: rsBroker(leader), LeaderEpoch: epoch}
		for id := 1; id <= nBrokers; id++ {
			p.Replicas = append(p.Replicas, rsBroker(id))
			if id == leader || rng.Intn(3) > 0 {
				p.Isr = append(p.Isr, rsBroker(id))
			}
		}
		if rng.Intn(8) == 0 {
			p = rsNoHost(p, 1+rng.Intn(nBrokers))
		}
		if rng.Intn(8) == 0 {
			p = rsOffline(p, 1+rng.Intn(nBrokers))
		}
		return p
	}
	errs := []Failure{NotLeaderForPartition, OffsetOutOfRange, KafkaStorageError, FencedLeaderEpoch, UnknownLeaderEpoch,
		RequestTimedOut, ReplicaNotAvailable, LeaderNotAvailable, connLost, connLost, canceled, connLost}

	// The model: the latest accepted metadata and the cooldowns, kept
	// independently of the selector.
	mPart := rsPart(1, 5, 1, 2, 3)
	// mFail: a follower's latest failure; mSeenOut: accepted metadata
	// showed it out of the ISR since (the only way its cooldown may end
	// before the first step, min(cooldownMin, Cooldown)); mStale: the
	// stale-client errors of the follower read, in a row.
	mFail := map[int]time.Time{}
	mSeenOut := map[int]bool{}
	mStale := 0
	minCool := min(cooldownMin, eff.Cooldown)
	cool := func(b int, now time.Time) {
		mFail[b] = now
		mSeenOut[b] = false
	}
	fit := func(b int) bool {
		inISR, host := false, false
		for _, r := range mPart.Isr {
			if r.ID == b {
				inISR, host = true, host || r.Host != ""
			}
		}
		for _, r := range mPart.Replicas {
			if r.ID == b && r.Host != "" {
				host = true
			}
		}
		for _, r := range mPart.OfflineReplicas {
			if r.ID == b {
				return false
			}
		}
		return inISR && host
	}

	c := NewCooldowns()
	other := New(cfg, c, mPart, rsT0) // another partition sharing the cache
	s := New(cfg, c, mPart, rsT0)
	now := rsT0
	var pinStart time.Time
	// The flap budget's model, from the replicas the decisions send reads
	// to, not from the selector's rule: mRead is the follower reads were
	// last on (-1: none yet). A lease is a move of the reads to a follower
	// other than mRead; a move back to mRead, however reads left it (the
	// TTL, a failure, a leader change, the leader's -1), renews its lease.
	var leases []time.Time // within the last minute
	leasesSeen := 0        // the older ones
	mRead := -1

	var trace []string
	for i := 0; i < steps; i++ {
		switch r := rng.Intn(100); {
		case r < 60:
			now = now.Add(time.Duration(rng.Intn(2000)) * time.Millisecond)
		case r < 92:
			now = now.Add(time.Duration(rng.Intn(30)) * time.Second)
		default:
			now = now.Add(time.Duration(rng.Intn(360)) * time.Second)
		}
		leader := mPart.Leader.ID
		prev := s.Current()
		ev := Event{Now: now, Preferred: -1, FetchOffset: 100, HighWatermark: 100 + int64(rng.Intn(2))}
		named := func() int {
			if rng.Intn(3) == 0 {
				return -1
			}
			return 1 + rng.Intn(nBrokers+1) // nBrokers+1: unknown to metadata
		}
		randErr := func() {
			ev.Kind = EventFetchError
			ev.Failure = errs[rng.Intn(len(errs))]
			if rng.Intn(5) == 0 {
				ev.Kind, ev.Failure = EventDialFailed, connLost
			}
		}
		switch r := rng.Intn(100); {
		case r < 8: // metadata
			ev.Kind = EventMetadata
			switch m := rng.Intn(100); {
			case m < 65:
				ev.Partition = randPart(leader, mPart.LeaderEpoch)
			case m < 82:
				ev.Partition = randPart(1+rng.Intn(3), mPart.LeaderEpoch+1)
			case m < 94:
				ev.Partition = randPart(1+rng.Intn(3), mPart.LeaderEpoch-1-rng.Intn(3))
			default:
				ev.Partition = randPart(1, mPart.LeaderEpoch+1)
				ev.Partition.Leader = Replica{ID: -1}
			}
		case r < 11: // another partition's follower fails
			b := 1 + rng.Intn(nBrokers)
			other.step(evMeta(now.Sub(rsT0), mPart))
			// A broker already cooling down for every partition is not
			// cooled again (the same failure seen by many partitions).
			if !c.cooling(b, topicPartition{"another topic", 0}, now) {
				cool(b, now)
			}
			c.fail(b, wholeBroker, now, eff.Cooldown)
			ev.Kind = EventTick
		case r < 15:
			ev.Kind = EventTick
		case r < 19: // a stale report about any broker
			ev.Broker = 1 + rng.Intn(nBrokers)
			if rng.Intn(2) == 0 {
				ev.Kind, ev.Preferred, ev.Empty = EventFetched, named(), rng.Intn(2) == 0
			} else {
				randErr()
			}
		default: // what the fetcher sees from where it reads
			ev.Broker = prev
			if prev != leader && rng.Intn(20) == 0 {
				ev.Broker = leader // the leader asked while pinned
			}
			if rng.Intn(4) == 0 {
				randErr()
			} else {
				ev.Kind = EventFetched
				ev.Empty = rng.Intn(3) == 0
				if ev.Broker == leader {
					ev.Preferred = named()
				}
			}
		}

		// Fold the event into the model.
		failure := (ev.Kind == EventDialFailed || ev.Kind == EventFetchError) && !ev.Failure.Canceled
		if failure && ev.Broker == prev && prev != leader && ev.Kind == EventFetchError && ev.Failure.Scope == ScopeStaleClient {
			mStale++
			failure = mStale > routeMaxStaleErrors && !ev.Failure.ReplicaAhead // with fresh metadata, still: a failure
		}
		if ev.Kind == EventFetched && ev.Broker == prev {
			mStale = 0
		}
		if failure && ev.Broker == prev && prev != leader {
			cool(ev.Broker, now)
		}
		if ev.Kind == EventMetadata && ev.Partition.Leader.ID >= 0 && ev.Partition.LeaderEpoch >= mPart.LeaderEpoch {
			mPart = ev.Partition
			for b := range mFail {
				if !fit(b) {
					mSeenOut[b] = true
				}
			}
		}
		newLeader := mPart.Leader.ID
		leaderAnswer := ev.Kind == EventFetched && ev.Broker == leader
		lastRead := mRead

		d := s.step(ev)
		if os.Getenv("RS_TRACE") != "" {
			trace = append(trace, fmt.Sprintf("+%v ev %d b%d pref %d failure %+v part L%d e%d isr %v -> %+v", now.Sub(rsT0), ev.Kind, ev.Broker, ev.Preferred, ev.Failure, ev.Partition.Leader.ID, ev.Partition.LeaderEpoch, ev.Partition.Isr, d))
			if len(trace) > 30 {
				trace = trace[1:]
			}
		}
		if d.Changed {
			mStale = 0
		}
		fail := func(format string, args ...interface{}) {
			t.Helper()
			if os.Getenv("RS_TRACE") != "" {
				for _, l := range trace {
					t.Log(l)
				}
			}
			t.Fatalf("step %d (+%v) event %+v after %d:\n decision %+v\n %s", i, now.Sub(rsT0), ev, prev, d, fmt.Sprintf(format, args...))
		}
		if d.Broker != s.Current() {
			fail("current() = %d", s.Current())
		}
		if s.leader != newLeader {
			fail("selector's leader %d, model's %d", s.leader, newLeader)
		}
		if d.Changed != (d.Broker != prev) {
			fail("Changed does not match the move")
		}
		if d.Changed && d.Reason == "" {
			fail("a change without a reason")
		}
		if d.Backoff < 0 || d.Backoff > maxBackoff {
			fail("backoff out of [0, %v]", maxBackoff)
		}
		if d.OmitRack && d.Broker != newLeader {
			fail("OmitRack on a follower fetch")
		}
		// (Away from an unreachable leader, the next stand-in may take over.)
		if failure && ev.Broker == prev && prev != leader && d.Broker != newLeader && (d.Broker == prev || !s.away) {
			fail("a failed follower is still read")
		}
		if leaderAnswer && ev.Preferred >= 0 && ev.Preferred == lastRead && d.Reason == ReasonFlapDamped {
			fail("the leader named %d, the follower last read: a renewal, refused for the flap budget", lastRead)
		}
		if d.Broker != newLeader {
			b := d.Broker
			switch {
			case cfg.Rack == "":
				fail("follower read without a rack")
			case !fit(b):
				fail("routed to %d, not an in-sync replica with a host in %+v", b, mPart)
			case now.Before(mFail[b].Add(minCool)) && !mSeenOut[b]:
				fail("routed to %d, failed at +%v, before its first cooldown ended", b, mFail[b].Sub(rsT0))
			case c.cooling(b, rsTP, now):
				fail("routed to %d while the cache has it cooling", b)
			}
			// A pin starts with a move, a naming by the leader, or a
			// leader change that leaves the reads on the old leader.
			// With the client's choice, a decision for it pins too.
			if d.Changed || (ev.Kind == EventFetched && ev.Broker == newLeader && ev.Preferred == b) || (prev == leader && b == prev) ||
				(cfg.Choice != nil && d.Reason == ReasonClientChoice) {
				pinStart = now
			}
			// A stand-in of an unreachable leader has no TTL: only the
			// leader's probe ends it (leaderpath.go).
			if now.Sub(pinStart) >= cfg.PreferenceTTL && !s.away {
				fail("pinned since +%v, beyond the TTL %v", pinStart.Sub(rsT0), cfg.PreferenceTTL)
			}
			// Moves to a stand-in are no leases: nothing else serves.
			if d.Changed && d.Broker != lastRead && !s.away {
				leases = append(leases, now)
			}
			mRead = d.Broker
		}
		for len(leases) > 0 && !leases[0].After(now.Add(-time.Minute)) {
			leases = leases[1:] // out of the window
			leasesSeen++
		}
		n := len(leases)
		if n > cfg.MaxSwitchesPerMinute {
			fail("%d leases within a minute, budget %d", n, cfg.MaxSwitchesPerMinute)
		}
		// The budget counts leases, no more: a renewal counted as a lease
		// would refuse the next lease too early.
		if s.pruneSwitches(now); len(s.switches) != n {
			fail("the selector counts %d leases within a minute, the model %d", len(s.switches), n)
		}
	}
	if cfg.Rack != "" && leasesSeen+len(leases) == 0 {
		t.Fatalf("the walk never reached a follower: it tests nothing")
	}
}

// A killed follower the leader keeps naming (it stays in the ISR for
// replica.lag.time.max.ms), with probes required: at the end of the
// cooldown the router asks for a probe instead of sending reads back, keeps
// refusing while probes fail — no lease is spent on a dead broker, no
// cooldown grows — and leases it once a probe reaches it.
func TestRouteDeadFollowerWaitsForProbe(t *testing.T) {
	c := NewCooldowns()
	c.RequireProbe()
	s := New(Config{Rack: "b"}, c, rsDefault, rsT0)
	if d := s.step(evNamed(0, 1, 2)); d.Broker != 2 || !d.Changed {
		t.Fatalf("first naming: %+v", d)
	}
	if d := s.step(evErr(time.Second, 2, connLost)); d.Broker != 1 || d.Reason != ReasonFollowerFailed || d.Probe {
		t.Fatalf("the follower's connection lost: %+v", d)
	}
	var probes []time.Duration
	at := time.Second + 100*time.Millisecond
	for ; at < 40*time.Second; at += 100 * time.Millisecond {
		d := s.step(evNamed(at, 1, 2))
		if d.Broker != 1 || d.Reason != ReasonCoolingDown || !d.OmitRack {
			t.Fatalf("naming at +%v: %+v", at, d)
		}
		if d.Probe {
			if d.ProbeBroker != 2 || at < time.Second+cooldownMin {
				t.Fatalf("probe at +%v: %+v", at, d)
			}
			probes = append(probes, at)
			c.Probed(2, false, rsT0.Add(at)) // connection refused
		}
	}
	// The first probe once the 2 s are up, then 1 s, 2 s, 4 s... apart.
	if len(probes) == 0 || probes[0] != time.Second+cooldownMin {
		t.Fatalf("probes at %v, the first at +%v", probes, time.Second+cooldownMin)
	}
	for i := 1; i < len(probes); i++ {
		if gap := probes[i] - probes[i-1]; gap != probeWait(i) {
			t.Fatalf("probes at %v: gap %d is %v, want %v", probes, i, gap, probeWait(i))
		}
	}
	if len(probes) != 6 {
		t.Fatalf("probes at %v: want 6 within 40 s", probes)
	}
	d := s.step(evNamed(at, 1, 2))
	for ; !d.Probe && at < 2*time.Minute; d = s.step(evNamed(at, 1, 2)) {
		at += 100 * time.Millisecond
	}
	if !d.Probe {
		t.Fatalf("no probe due at +%v: %+v", at, d)
	}
	c.Probed(2, true, rsT0.Add(at))
	// The hold ends on the next event; then the leader's naming is a lease.
	if d := s.step(evFetch(at+10*time.Millisecond, 1, -1)); d.Broker != 1 || d.OmitRack {
		t.Fatalf("after the probe reached broker 2: %+v", d)
	}
	if d := s.step(evNamed(at+20*time.Millisecond, 1, 2)); d != (Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}) {
		t.Fatalf("broker 2 answers again: %+v", d)
	}
	if n := len(s.switches); n != 1 {
		t.Fatalf("%d leases, want 1: the return to broker 2 renews its lease", n)
	}
}
