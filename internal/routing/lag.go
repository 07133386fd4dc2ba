package routing

import "time"

// A lagging follower (ReaderConfig.MaxFollowerLag).
//
// A follower's high watermark trails the leader's by about one replica
// fetch round (up to replica.fetch.wait.max.ms, 500 ms by default), and by
// far more when its replication is throttled or slow. Kafka judges replica
// lag in time (replica.lag.time.max.ms), not in messages, because a message
// count means nothing without the write rate; the Reader does the same, and
// measures the lag as the reader feels it: how long it has waited at the
// follower for an offset the leader already had. A follower that lags
// while the reader is still behind it (it has records beyond the reader's
// position) costs nothing and does not count.
//
// The leader's end is known from its own fetch answers and, while reads go
// to a follower, from a ListOffsets (latest) the Reader sends each leader
// every MaxFollowerLag/8 for all the partitions it reads from followers
// (reader_runtime.go); a follower's long poll is capped at
// MaxFollowerLag/4 so that the check runs that often. The measured lag
// thus trails the real one by up to 3/8 MaxFollowerLag (plus round trips),
// so reads leave the follower once it passes MaxFollowerLag/2: they never
// wait on a follower more than MaxFollowerLag behind the leader.
//
// Transitions added to the table of selector.go:
//
//	on   event                                            → decision
//	any  leader HW (a ListOffsets answer, EventLeaderHW)  → unchanged; the leader's end is noted
//	F    fetched from F, lag > MaxFollowerLag/2           → L                       ReasonFollowerLagging
//	F    OffsetOutOfRange at or above F's last HW, lag ≤  → F, Backoff FollowerBackoffMin→Max (not a failure)
//	L    fetched from L naming F within its lag hold      → L, OmitRack            ReasonFollowerLagging
//	L    client's choice F, left for lagging, no metadata → L; metadata every second (no leader
//	     read since it was left                             vouches for F: the ISR it rejoins once caught up does)
//	F    (client's choice) lag > MaxFollowerLag/2          → L, and (F, partition) cools down as after a failure
//
// The lag hold (MaxFollowerLag/2 after leaving F) keeps a leader that names
// F whatever its log end (before Kafka 3.4) from sending reads straight
// back; after it, the leader's naming is followed again (a renewal of F's
// lease, off the flap budget: the hold is what spaces the returns), and F,
// if it still lags, is left again within the bound.

// followerLagMarks bounds the leader's ends kept for one partition.
const followerLagMarks = 32

// lagMark is the leader's readable end as first seen at a time.
type lagMark struct {
	at  time.Time
	end int64
}

// followerLag tracks one partition's lag at a follower; no clock, no I/O.
type followerLag struct {
	// marks: the leader's ends above the reader's position, increasing.
	marks []lagMark
	// The reader waits at broker waitOn for offset waitAt (waitOn -1:
	// it does not wait: the follower had records beyond its position).
	waitOn int
	waitAt int64
	// endOn's high watermark as its last answer gave it (-1: unknown).
	endOn int
	end   int64
	// leftOn is the follower last left for lagging, at leftAt; metaAt is
	// when metadata last arrived (the client's choice waits for metadata
	// newer than leftAt: no leader vouches for a replica it picks).
	leftOn         int
	leftAt, metaAt time.Time
}

func newFollowerLag() followerLag { return followerLag{waitOn: -1, endOn: -1, end: -1, leftOn: -1} }

// sawLeader notes that the leader's end was end at at.
func (l *followerLag) sawLeader(at time.Time, end int64) {
	n := len(l.marks)
	switch {
	case end < 0 || (n > 0 && end <= l.marks[n-1].end):
		return // no news
	case n == followerLagMarks:
		// Full: the newest mark takes the new end, which can only
		// overstate the lag of the offsets between the two.
		l.marks[n-1].end = end
	default:
		l.marks = append(l.marks, lagMark{at, end})
	}
}

// read forgets the leader's ends the reader has read past.
func (l *followerLag) read(next int64) {
	i := 0
	for i < len(l.marks) && l.marks[i].end <= next {
		i++
	}
	l.marks = l.marks[i:]
}

// sawFollower notes follower b's answer: the reader's position after it
// and b's high watermark.
func (l *followerLag) sawFollower(b int, next, hw int64) {
	l.read(next)
	l.endOn, l.end = b, hw
	l.waitOn = -1
	if hw >= 0 && next >= hw {
		l.waitOn, l.waitAt = b, next
	}
}

// missing notes that follower b does not have offset yet.
func (l *followerLag) missing(b int, offset int64) {
	l.read(offset)
	l.waitOn, l.waitAt = b, offset
}

// behind reports whether offset is at or above follower b's last known
// high watermark (or b's is unknown): an OffsetOutOfRange there says b
// has not replicated it yet, not that the offset is gone.
func (l *followerLag) behind(b int, offset int64) bool {
	return l.endOn != b || l.end < 0 || offset >= l.end
}

// lag returns how long the reader has waited at follower b for an offset
// the leader had.
func (l *followerLag) lag(b int, now time.Time) time.Duration {
	if l.waitOn != b || b < 0 {
		return 0
	}
	for _, m := range l.marks {
		if m.end > l.waitAt {
			return max(now.Sub(m.at), 0)
		}
	}
	return 0
}

// The selector's side: called from selector.go.

// lagOn reports whether the lag check is on.
func (s *Selector) lagOn() bool { return s.cfg.MaxFollowerLag > 0 && s.cfg.Rack != "" }

// lagFetched feeds a fetch answer to the lag tracker.
func (s *Selector) lagFetched(ev Event) {
	next := max(ev.NextOffset, ev.FetchOffset)
	switch ev.Broker {
	case s.leader:
		s.lag.sawLeader(ev.Now, ev.HighWatermark)
		s.lag.read(next)
	case s.cur:
		s.lag.sawFollower(ev.Broker, next, ev.HighWatermark)
	}
}

// lagMissing handles follower F's OffsetOutOfRange: at or above F's high
// watermark it is F not having the offset yet, which the reader waits
// for with a backoff (the lag check bounds the wait). It reports whether
// it handled ev.
func (s *Selector) lagMissing(ev Event, d *Decision) bool {
	if !s.lagOn() || ev.Kind != EventFetchError || !ev.Failure.OutOfRange ||
		ev.Broker != s.cur || ev.Broker == s.leader || !s.lag.behind(ev.Broker, ev.FetchOffset) {
		return false
	}
	s.lag.missing(ev.Broker, ev.FetchOffset)
	s.emptyStreak++
	d.Backoff = routeBackoffStep(s.cfg.FollowerBackoffMin, s.cfg.FollowerBackoffMax, s.emptyStreak)
	return true
}

// lagCheck sends reads back to the leader when the follower lags too far,
// and holds it off for a while.
func (s *Selector) lagCheck(now time.Time, d *Decision) {
	if !s.lagOn() || s.cur == s.leader || s.lag.lag(s.cur, now) <= s.cfg.MaxFollowerLag/2 {
		return
	}
	f := s.cur
	s.route(d, s.leader, ReasonFollowerLagging, now)
	s.held, s.heldUntil, s.heldReason = f, now.Add(s.cfg.MaxFollowerLag/2), ReasonFollowerLagging
	s.lag.waitOn = -1
	s.lag.leftOn, s.lag.leftAt = f, now
	if s.cfg.Choice != nil {
		// No leader checks that a replica the client picks has the
		// offset: F stays refused until its cooldown ends (2 s, doubling
		// while it keeps lagging) or it rejoins the ISR it left, as
		// after a failure.
		s.cooldown.fail(f, s.tp(), now, s.cfg.Cooldown)
	}
}

// lagUnvouched reports whether the client's choice x is the follower last
// left for lagging and no metadata arrived since: the ISR it was picked from
// may predate its fall (it rejoins the ISR only once caught up).
func (s *Selector) lagUnvouched(x int) bool {
	return x == s.lag.leftOn && !s.lag.metaAt.After(s.lag.leftAt)
}

// lagHeld reports whether replica x, named by the leader, is held off for
// lagging, and until when.
func (s *Selector) lagHeld(x int, now time.Time) (time.Time, bool) {
	if s.held == x && s.heldReason == ReasonFollowerLagging && now.Before(s.heldUntil) {
		return s.heldUntil, true
	}
	return time.Time{}, false
}
