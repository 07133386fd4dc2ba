package routing

import "time"

// quietMax bounds how long a partition's fetch may wait across empty long
// polls without its router being asked (the PreferenceTTL's default): a
// safety net, not a timer anything depends on.
const quietMax = routeDefaultTTL

// Quiet reports whether, until the time returned, nothing but news in a
// fetch answer (records, an error, a named replica, new watermarks) or in
// metadata can change where the partition is read: the route is steady (no
// failure, backoff, refusal or stand-in in play), no time-driven rule is due
// before then (the preference's TTL, a held replica, the lag check), and the
// replica read is not cooling down. The fetcher's engine may then keep the
// partition's fetch waiting across answers that the broker's fetch session
// leaves it out of, instead of waking the fetcher after every long poll.
// Client-side selection is never quiet: it picks again on every answer.
func (s *Selector) Quiet(now time.Time) (until time.Time, ok bool) {
	if s.leader < 0 || s.cfg.Choice != nil || s.away || s.emptyStreak > 0 || s.staleErrors > 0 ||
		s.leaderErrors > 0 || s.failures > 0 || s.refusals > 0 || s.unknown >= 0 {
		return time.Time{}, false
	}
	until = now.Add(quietMax)
	if s.held >= 0 {
		until = earliest(until, s.heldUntil)
	}
	if s.cur != s.leader {
		if s.cooldown.cooling(s.cur, s.tp(), now) || s.lag.lag(s.cur, now) > 0 {
			return time.Time{}, false
		}
		until = earliest(until, s.pinnedAt.Add(s.cfg.PreferenceTTL))
	} else if s.cooldown.brokerCooling(s.leader, now) {
		return time.Time{}, false // the stand-in rule may move reads (awayCheck)
	}
	if !until.After(now) {
		return time.Time{}, false
	}
	return until, true
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
