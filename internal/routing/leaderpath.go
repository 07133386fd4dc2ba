package routing

import (
	"sort"
	"time"
)

// Leaving an unreachable leader. A broker serves a consumer's Fetch v11+
// from any replica it hosts (KIP-392), so when the client cannot reach a
// partition's leader — its dial fails, or its fetch stalls — while the
// broker itself stays leader (only the client's path to it is broken: no
// election follows, metadata keeps naming it), an in-sync follower can
// serve the partition. The leader then cools down as a whole broker, as a
// failed follower does: every partition it leads leaves it at once (step
// checks the leader's cooldown on every event), and its probe (Probed)
// ends the cooldown. Reads then go back to the leader, whose answer
// decides where they go next, as after any cooldown.
//
// A Reader that fetches from followers at all (a rack or a client-side
// choice) may leave; one without stays on the leader as before, and so
// does a partition with no in-sync follower that is not cooling down (or
// that Config.Versions says cannot serve a follower fetch): the leader's
// backoff applies as it always did.

// Reasons of the moves around an unreachable leader.
const (
	// ReasonLeaderUnreachable: the leader's dial failed or its fetch
	// stalled, and an in-sync follower serves instead.
	ReasonLeaderUnreachable Reason = "leader_unreachable"
	// ReasonLeaderReachable: the leader answers again (its probe did),
	// reads go back to it.
	ReasonLeaderReachable Reason = "leader_reachable"
)

// FetchVersions tells which brokers serve a consumer's fetch as a
// follower: those with Fetch v11+ (KIP-392); older ones answer
// NOT_LEADER_OR_FOLLOWER.
type FetchVersions interface {
	FollowerFetch(broker int) bool
}

// leavesLeader reports whether reads may leave an unreachable leader: the
// Reader reads from followers at all.
func (s *Selector) leavesLeader() bool { return s.cfg.Rack != "" || s.cfg.Choice != nil }

// unreachable reports whether ev says the leader could not be reached: a
// failed dial, or a fetch without an answer in time.
func unreachable(ev Event) bool {
	return ev.Kind == EventDialFailed || (ev.Kind == EventFetchError && ev.Failure.Unreachable)
}

// standIn returns the in-sync follower that serves while the leader cannot
// be reached: one in the client's rack first, else any, none cooling down
// and each able to serve a consumer's follower fetch (Config.Versions); of
// several, the same one for a partition every time, spread by partition
// ID. It returns -1 when there is none.
func (s *Selector) standIn(now time.Time) int {
	var own, all []int
	for _, r := range s.part.Isr {
		b := r.ID
		if b == s.leader || !s.usable(b, now) || (s.cfg.Versions != nil && !s.cfg.Versions.FollowerFetch(b)) {
			continue
		}
		all = append(all, b)
		if s.inOwnRack(b) {
			own = append(own, b)
		}
	}
	pick := own
	if len(pick) == 0 {
		pick = all
	}
	if len(pick) == 0 {
		return -1
	}
	sort.Ints(pick)
	return pick[s.part.ID%len(pick)]
}

// HasStandIn reports whether reads would leave the leader should it become
// unreachable now: the fetcher then bounds the leader's dial and silence as
// a follower's.
func (s *Selector) HasStandIn(now time.Time) bool {
	return s.leavesLeader() && s.cur == s.leader && s.leader >= 0 && s.standIn(now) >= 0
}

// leaveLeader moves reads off the leader to a stand-in, if there is one,
// and reports whether it did. The leader cools down as a whole broker (a
// report while it already cools changes nothing). The move is no lease of
// the flap budget: nothing else serves while the leader is out of reach.
func (s *Selector) leaveLeader(d *Decision, now time.Time, cool bool) bool {
	if !s.leavesLeader() || s.cur != s.leader {
		return false
	}
	to := s.standIn(now)
	if to < 0 {
		return false
	}
	if cool {
		s.cooldown.fail(s.leader, wholeBroker, now, s.cfg.Cooldown)
	}
	s.route(d, to, ReasonLeaderUnreachable, now)
	s.away = true
	s.pinnedAt = now
	return true
}

// awayCheck runs on every event: a partition on a leader that cools down as
// a whole broker (another partition found it unreachable) leaves it too;
// one away from its leader goes back once the leader's cooldown is over (its
// probe reached it), or, when its stand-in cools down too, moves to the
// next stand-in, else to the leader.
func (s *Selector) awayCheck(now time.Time, d *Decision) {
	if s.leader < 0 || !s.leavesLeader() {
		return
	}
	leaderCooling := s.cooldown.brokerCooling(s.leader, now)
	switch {
	case s.cur == s.leader:
		if leaderCooling {
			s.leaveLeader(d, now, false)
		}
	case !s.away:
	case !leaderCooling:
		s.route(d, s.leader, ReasonLeaderReachable, now)
	case s.cooldown.cooling(s.cur, s.tp(), now):
		if to := s.standIn(now); to >= 0 {
			s.route(d, to, ReasonFollowerFailed, now)
			s.away = true
			return
		}
		s.route(d, s.leader, ReasonFollowerFailed, now)
	}
}
