package routing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// tooOld: brokers whose Fetch is below v11.
type tooOld map[int]bool

func (o tooOld) FollowerFetch(b int) bool { return !o[b] }

// The leader cannot be reached (a dial failure, a stall) while it stays
// leader: an in-sync follower stands in (leaderpath.go). The default
// partition is led by broker 1 (rack a), ISR {1,2,3}; the client is in
// rack b, so broker 2 is the stand-in of choice.
func TestLeaderUnreachableTransitions(t *testing.T) {
	ms := time.Millisecond
	probed := &Config{Rack: "b", PreferenceTTL: time.Second}
	requireProbe := func(c *Cooldowns) { c.RequireProbe() }
	alone := rsPart(1, 5, 1)
	// away: the leader's dial failed at +0, reads are on broker 2.
	away := []Event{evDial(0, 1)}
	leaderCooling := func(at time.Duration) func(t *testing.T, s *Selector) {
		return func(t *testing.T, s *Selector) {
			assert.True(t, s.cooldown.cooling(1, rsOtherTP, rsT0.Add(at)), "the leader cools down for all its partitions")
		}
	}
	cases := []rsCase{
		{name: "dial failure of the leader: the in-rack follower stands in", ev: evDial(0, 1),
			want:  Decision{Broker: 2, Changed: true, Reason: ReasonLeaderUnreachable, RefreshMetadata: true},
			check: leaderCooling(0)},
		{name: "stall of the leader: the in-rack follower stands in", ev: evErr(0, 1, RequestTimedOut),
			want:  Decision{Broker: 2, Changed: true, Reason: ReasonLeaderUnreachable},
			check: leaderCooling(0)},
		{name: "no in-sync follower: stay, back off, no cooldown", init: &alone, ev: evDial(0, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * ms},
			check: func(t *testing.T, s *Selector) {
				assert.False(t, s.cooldown.cooling(1, rsOtherTP, rsT0), "nowhere to go: the leader is not cooled down")
			}},
		{name: "the followers cool down: stay and back off", prep: func(c *Cooldowns) {
			c.fail(2, wholeBroker, rsT0, time.Minute)
			c.fail(3, rsTP, rsT0, time.Minute)
		}, ev: evDial(0, 1), want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * ms}},
		{name: "no in-rack follower: any in-sync one", prep: func(c *Cooldowns) { c.fail(2, wholeBroker, rsT0, time.Minute) },
			ev: evDial(0, 1), want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderUnreachable, RefreshMetadata: true}},
		{name: "a follower below Fetch v11 is no stand-in", cfg: &Config{Rack: "b", Versions: tooOld{2: true}},
			ev: evDial(0, 1), want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderUnreachable, RefreshMetadata: true}},
		{name: "a lost connection is no proof: stay (an election may follow)", ev: evErr(0, 1, connLost),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * ms}},
		{name: "without a rack or a choice: stay", cfg: &Config{}, ev: evDial(0, 1),
			want: Decision{Broker: 1, Reason: ReasonLeaderError, RefreshMetadata: true, Backoff: 100 * ms}},
		{name: "with a client-side choice and no rack: a follower stands in", cfg: &Config{Choice: RackAffinity{}},
			ev: evDial(0, 1), want: Decision{Broker: 2, Changed: true, Reason: ReasonLeaderUnreachable, RefreshMetadata: true}},
		{name: "the leader cools down for another partition: this one leaves at once",
			prep: func(c *Cooldowns) { c.fail(1, wholeBroker, rsT0, time.Minute) },
			ev:   evTick(100 * ms), want: Decision{Broker: 2, Changed: true, Reason: ReasonLeaderUnreachable}},
		{name: "a partition error of the leader's broker elsewhere moves nothing",
			prep: func(c *Cooldowns) { c.fail(1, rsOtherTP, rsT0, time.Minute) },
			ev:   evTick(100 * ms), want: Decision{Broker: 1}},
		{name: "the stand-in fails too: the next in-sync follower", setup: away, ev: evDial(500*ms, 2),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonFollowerFailed},
			check: func(t *testing.T, s *Selector) {
				assert.True(t, s.cooldown.cooling(2, rsOtherTP, rsT0.Add(500*ms)), "the failed stand-in cools down")
			}},
		{name: "the last stand-in fails too: the leader, whose failures back off", setup: []Event{evDial(0, 1), evDial(500*ms, 2)},
			ev: evDial(600*ms, 3), want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}},
		{name: "the stand-in cools down for another partition: the next one", setup: away,
			mid: func(s *Selector) { s.cooldown.fail(2, wholeBroker, rsT0.Add(400*ms), time.Minute) },
			ev:  evTick(500 * ms), want: Decision{Broker: 3, Changed: true, Reason: ReasonFollowerFailed}},
		{name: "the stand-in serves: reads stay", setup: away, ev: evFetch(500*ms, 2, -1), want: Decision{Broker: 2}},
		{name: "the TTL does not send reads back to an unreachable leader", cfg: probed, prep: requireProbe, setup: away,
			ev: evFetch(1500*ms, 2, -1), want: Decision{Broker: 2}},
		{name: "cooldown over, the probe is due: reads stay until it reaches the leader", cfg: probed, prep: requireProbe,
			setup: away, ev: evFetch(2*time.Second, 2, -1), want: Decision{Broker: 2, Probe: true, ProbeBroker: 1}},
		{name: "the probe is refused: reads stay", cfg: probed, prep: requireProbe,
			setup: []Event{evDial(0, 1), evFetch(2*time.Second, 2, -1)},
			mid:   func(s *Selector) { s.cooldown.Probed(1, false, rsT0.Add(2500*ms)) },
			ev:    evFetch(2600*ms, 2, -1), want: Decision{Broker: 2}},
		{name: "the probe reaches the leader: back to it", cfg: probed, prep: requireProbe,
			setup: []Event{evDial(0, 1), evFetch(2*time.Second, 2, -1)},
			mid:   func(s *Selector) { s.cooldown.Probed(1, true, rsT0.Add(2500*ms)) },
			ev:    evFetch(2600*ms, 2, -1), want: Decision{Broker: 1, Changed: true, Reason: ReasonLeaderReachable},
			check: func(t *testing.T, s *Selector) { assert.False(t, s.away) }},
		{name: "back on the leader, its naming applies: the same follower is a renewal", cfg: &Config{Rack: "b", MaxSwitchesPerMinute: 1},
			prep: requireProbe, setup: []Event{evNamed(0, 1, 2), evTick(10 * ms), evFetch(20*ms, 1, -1), evDial(30*ms, 1), evFetch(2100*ms, 2, -1)},
			mid: func(s *Selector) { s.cooldown.Probed(1, true, rsT0.Add(2200*ms)) },
			ev:  evTick(2300 * ms), want: Decision{Broker: 1, Changed: true, Reason: ReasonLeaderReachable}},
		{name: "a new leader while away: reads follow it, it decides", setup: away,
			ev:   evMeta(time.Second, rsPart(3, 6, 1, 2, 3)),
			want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "the stand-in becomes leader: reads stay", setup: away,
			ev:   evMeta(time.Second, rsPart(2, 6, 1, 2, 3)),
			want: Decision{Broker: 2, Reason: ReasonLeaderChanged, ValidateOffset: true}},
		{name: "the stand-in leaves the ISR: the next stand-in, the leader still cooling", setup: away,
			ev: evMeta(time.Second, rsPart(1, 5, 1, 3)), want: Decision{Broker: 3, Changed: true, Reason: ReasonLeaderUnreachable}},
		{name: "a stand-in is no lease", cfg: &Config{Rack: "b", MaxSwitchesPerMinute: 1}, setup: []Event{evNamed(0, 1, 3), evFetch(100*ms, 1, -1)},
			ev: evDial(200*ms, 1), want: Decision{Broker: 2, Changed: true, Reason: ReasonLeaderUnreachable, RefreshMetadata: true},
			check: func(t *testing.T, s *Selector) {
				s.pruneSwitches(s.now)
				assert.Len(t, s.switches, 1, "only the lease of broker 3")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runRouteCase(t, tc) })
	}
}
