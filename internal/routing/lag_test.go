package routing

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFollowerLagTracker(t *testing.T) {
	at := func(d time.Duration) time.Time { return rsT0.Add(d) }
	cases := []struct {
		name string
		run  func(l *followerLag)
		now  time.Duration
		want time.Duration
	}{
		{name: "no leader end known", run: func(l *followerLag) { l.sawFollower(2, 100, 100) }, now: time.Hour, want: 0},
		{name: "waiting at the follower's HW for what the leader had", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 150)
			l.sawFollower(2, 100, 100)
		}, now: 4 * time.Second, want: 3 * time.Second},
		{name: "the follower has records beyond the position: no lag", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 150)
			l.sawFollower(2, 100, 120)
		}, now: time.Hour, want: 0},
		{name: "the leader has nothing beyond the position either", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 100)
			l.sawFollower(2, 100, 100)
		}, now: time.Hour, want: 0},
		{name: "the first leader end above the position counts", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 90)
			l.sawLeader(at(2*time.Second), 101)
			l.sawLeader(at(3*time.Second), 150)
			l.sawFollower(2, 100, 100)
		}, now: 5 * time.Second, want: 3 * time.Second},
		{name: "an end that is no news keeps its first time", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 150)
			l.sawLeader(at(3*time.Second), 150)
			l.sawLeader(at(3*time.Second), 140)
			l.sawFollower(2, 100, 100)
		}, now: 5 * time.Second, want: 4 * time.Second},
		{name: "another follower's wait does not count", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 150)
			l.sawFollower(3, 100, 100)
		}, now: 5 * time.Second, want: 0},
		{name: "records from the follower end the wait", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 150)
			l.sawFollower(2, 100, 100)
			l.sawFollower(2, 110, 130)
		}, now: 5 * time.Second, want: 0},
		{name: "OffsetOutOfRange: waiting for the offset", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), 150)
			l.missing(2, 120)
		}, now: 3 * time.Second, want: 2 * time.Second},
		{name: "a full list keeps its oldest marks", run: func(l *followerLag) {
			for i := 0; i < 2*followerLagMarks; i++ {
				l.sawLeader(at(time.Duration(i)*time.Second), int64(101+i))
			}
			l.sawFollower(2, 100, 100)
		}, now: 100 * time.Second, want: 100 * time.Second},
		{name: "a zero or negative end is ignored", run: func(l *followerLag) {
			l.sawLeader(at(time.Second), -1)
			l.sawFollower(2, 100, 100)
		}, now: 5 * time.Second, want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newFollowerLag()
			tc.run(&l)
			assert.Equal(t, tc.want, l.lag(2, at(tc.now)))
			assert.LessOrEqual(t, len(l.marks), followerLagMarks)
		})
	}
}

func TestFollowerLagBehind(t *testing.T) {
	l := newFollowerLag()
	assert.True(t, l.behind(2, 50), "unknown high watermark")
	l.sawFollower(2, 80, 100)
	assert.False(t, l.behind(2, 50), "below the follower's high watermark: not a lag")
	assert.True(t, l.behind(2, 100))
	assert.True(t, l.behind(2, 150))
	assert.True(t, l.behind(3, 50), "another follower's high watermark is unknown")
}

// evLeaderHW: a ListOffsets answer of the leader (broker 1) read at at.
func evLeaderHW(at time.Duration, hw int64) Event {
	return Event{Kind: EventLeaderHW, Broker: 1, Now: rsT0.Add(at), Preferred: -1, HighWatermark: hw}
}

// evFollowerAt: broker 2 answered a fetch at offset next with nothing, its
// high watermark hw.
func evFollowerAt(at time.Duration, next, hw int64) Event {
	return Event{Kind: EventFetched, Broker: 2, Now: rsT0.Add(at), Preferred: -1, Empty: true,
		FetchOffset: next, NextOffset: next, HighWatermark: hw}
}

func evOOR(at time.Duration, broker int, offset int64) Event {
	return Event{Kind: EventFetchError, Broker: broker, Now: rsT0.Add(at), Preferred: -1, Failure: OffsetOutOfRange, FetchOffset: offset}
}

func TestReplicaSelectorFollowerLag(t *testing.T) {
	lag2s := Config{Rack: "b", MaxFollowerLag: 2 * time.Second}
	lagOff := Config{Rack: "b"}
	// Pinned to 2 at 0 (the leader's end, 100, read); the leader is at
	// 150 from 200ms on; the follower stops at 100.
	behind := []Event{evNamed(0, 1, 2), evLeaderHW(200*time.Millisecond, 150)}
	// Left for lagging at 1.3s: held off until 2.3s.
	left := rsEvents(behind, []Event{evFollowerAt(1300*time.Millisecond, 100, 100)})
	leftThenLeader := rsEvents(left, []Event{evFetch(1500*time.Millisecond, 1, -1)})
	cases := []rsCase{
		{name: "a leader high watermark alone changes nothing", cfg: &lag2s, setup: pin2, ev: evLeaderHW(time.Second, 500),
			want: Decision{Broker: 2}},
		{name: "lag up to half the bound: stay, back off", cfg: &lag2s, setup: behind, ev: evFollowerAt(1200*time.Millisecond, 100, 100),
			want: Decision{Broker: 2, Backoff: 50 * time.Millisecond}},
		{name: "lag over half the bound: back to the leader", cfg: &lag2s, setup: behind, ev: evFollowerAt(1300*time.Millisecond, 100, 100),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerLagging, OmitRack: true}},
		{name: "a sample arriving between fetches is enough", cfg: &lag2s,
			setup: rsEvents(behind, []Event{evFollowerAt(300*time.Millisecond, 100, 100)}), ev: evLeaderHW(1300*time.Millisecond, 160),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerLagging, OmitRack: true}},
		{name: "lag measured from the leader's own answers", cfg: &lag2s,
			setup: []Event{{Kind: EventFetched, Broker: 1, Now: rsT0, Preferred: 2, Empty: true, FetchOffset: 100, NextOffset: 100, HighWatermark: 130}},
			ev:    evFollowerAt(1100*time.Millisecond, 100, 100), want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerLagging, OmitRack: true}},
		{name: "a follower that long-polled: no backoff", cfg: &lag2s, setup: rsEvents(pin2, []Event{evFollowerAt(100*time.Millisecond, 100, 100)}),
			ev:   Event{Kind: EventFetched, Broker: 2, Now: rsT0.Add(600 * time.Millisecond), Preferred: -1, Empty: true, FetchOffset: 100, NextOffset: 100, HighWatermark: 100, LongPolled: true},
			want: Decision{Broker: 2}},
		{name: "after a long poll the backoff starts over", cfg: &lag2s,
			setup: rsEvents(pin2, []Event{evFollowerAt(100*time.Millisecond, 100, 100), evFollowerAt(200*time.Millisecond, 100, 100),
				{Kind: EventFetched, Broker: 2, Now: rsT0.Add(700 * time.Millisecond), Preferred: -1, Empty: true, FetchOffset: 100, NextOffset: 100, HighWatermark: 100, LongPolled: true}}),
			ev: evFollowerAt(800*time.Millisecond, 100, 100), want: Decision{Broker: 2, Backoff: 50 * time.Millisecond}},
		{name: "the reader behind the follower: no lag", cfg: &lag2s, setup: behind, ev: evFollowerAt(time.Minute, 100, 120),
			want: Decision{Broker: 2}},
		{name: "check off: stays however long", cfg: &lagOff, setup: behind, ev: evFollowerAt(time.Minute, 100, 100),
			want: Decision{Broker: 2, Backoff: 50 * time.Millisecond}},
		{name: "check off without a rack", cfg: &Config{MaxFollowerLag: 2 * time.Second}, setup: behind, ev: evFollowerAt(time.Minute, 100, 100),
			want: Decision{Broker: 1}},
		{name: "lagging follower named again within its hold: refused", cfg: &lag2s, setup: left, ev: evNamed(2*time.Second, 1, 2),
			want: Decision{Broker: 1, Reason: ReasonFollowerLagging, Backoff: 50 * time.Millisecond, OmitRack: true}},
		{name: "the hold omits the rack", cfg: &lag2s, setup: left, ev: evTick(2300*time.Millisecond - time.Nanosecond),
			want: Decision{Broker: 1, OmitRack: true}},
		{name: "named again after its hold: followed", cfg: &lag2s, setup: leftThenLeader, ev: evNamed(2300*time.Millisecond, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "back after its hold: a renewal, off the flap budget", cfg: &Config{Rack: "b", MaxFollowerLag: 2 * time.Second, MaxSwitchesPerMinute: 1},
			setup: leftThenLeader, ev: evNamed(2300*time.Millisecond, 1, 2),
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
		{name: "OffsetOutOfRange above the follower's HW: wait there", cfg: &lag2s,
			setup: rsEvents(pin2, []Event{evFollowerAt(100*time.Millisecond, 100, 100)}), ev: evOOR(200*time.Millisecond, 2, 120),
			want: Decision{Broker: 2, Backoff: 100 * time.Millisecond},
			check: func(t *testing.T, s *Selector) {
				assert.False(t, s.cooldown.cooling(2, rsTP, rsT0.Add(200*time.Millisecond)), "a follower behind is not failed")
			}},
		{name: "OffsetOutOfRange on the first fetch: wait there", cfg: &lag2s, setup: pin2, ev: evOOR(100*time.Millisecond, 2, 120),
			want: Decision{Broker: 2, Backoff: 50 * time.Millisecond}},
		{name: "OffsetOutOfRange waits back off further", cfg: &lag2s, setup: rsEvents(pin2, []Event{evOOR(100*time.Millisecond, 2, 120), evOOR(200*time.Millisecond, 2, 120)}),
			ev: evOOR(300*time.Millisecond, 2, 120), want: Decision{Broker: 2, Backoff: 200 * time.Millisecond}},
		{name: "OffsetOutOfRange waits are bounded by the lag check", cfg: &lag2s,
			setup: rsEvents(pin2, []Event{evLeaderHW(100*time.Millisecond, 130), evOOR(200*time.Millisecond, 2, 120)}), ev: evOOR(1200*time.Millisecond, 2, 120),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerLagging, OmitRack: true}},
		{name: "OffsetOutOfRange below the follower's HW: a failure", cfg: &lag2s,
			setup: rsEvents(pin2, []Event{evFollowerAt(100*time.Millisecond, 100, 150)}), ev: evOOR(200*time.Millisecond, 2, 90),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}},
		{name: "OffsetOutOfRange with the check off: a failure", cfg: &lagOff, setup: pin2, ev: evOOR(100*time.Millisecond, 2, 120),
			want: Decision{Broker: 1, Changed: true, Reason: ReasonFollowerFailed}},
		{name: "the leader's OffsetOutOfRange is the Reader's", cfg: &lag2s, ev: evOOR(0, 1, 120), want: Decision{Broker: 1}},
		// Seen on Kafka 2.8: the reader waited at 2 for new records when 2
		// died; the leader's end moved on while 2 was away. That old wait
		// is no lag of the replica the leader names once 2 is back.
		{name: "a wait at the follower before it failed is not its lag", cfg: &lag2s,
			setup: rsEvents(pin2, []Event{evFollowerAt(100*time.Millisecond, 100, 100), evErr(200*time.Millisecond, 2, connLost),
				evLeaderHW(300*time.Millisecond, 150)}),
			ev:   Event{Kind: EventFetched, Broker: 1, Now: rsT0.Add(5 * time.Second), Preferred: 2, Empty: true, FetchOffset: 100, NextOffset: 100, HighWatermark: 150},
			want: Decision{Broker: 2, Changed: true, Reason: ReasonPreferred}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runRouteCase(t, tc) })
	}
}

// The lag check never keeps reads on a follower past the bound, whatever
// the order of samples and answers, and never leaves a follower the reader
// still has records from.
func TestReplicaSelectorFollowerLagWalk(t *testing.T) {
	for _, step := range []time.Duration{10 * time.Millisecond, 170 * time.Millisecond, 450 * time.Millisecond} {
		t.Run(fmt.Sprint(step), func(t *testing.T) {
			s := New(Config{Rack: "b", MaxFollowerLag: 2 * time.Second}, nil, rsDefault, rsT0)
			require.Equal(t, 2, s.step(evNamed(0, 1, 2)).Broker)
			// The leader gains an offset every step; the follower holds
			// everything up to 100 and no more.
			var stuckSince time.Time
			for i := 1; i < 1000 && s.Current() == 2; i++ {
				now := time.Duration(i) * step
				if stuckSince.IsZero() {
					stuckSince = rsT0.Add(now)
				}
				s.step(evLeaderHW(now, 100+int64(i)))
				s.step(evFollowerAt(now, 100, 100))
			}
			require.Equal(t, 1, s.Current(), "still on the lagging follower")
			left := s.now.Sub(stuckSince)
			assert.LessOrEqual(t, left, time.Second+step, "left after %v", left)
		})
	}
}

// With the client's choice no leader vouches for the replica: one left for
// lagging is picked again only once metadata read after it was left shows
// it in the ISR (which it rejoins only caught up), and meanwhile the
// Reader re-reads metadata every second (Cooldowns.active).
func TestReplicaSelectorFollowerLagClientChoice(t *testing.T) {
	cfg := Config{Rack: "b", Choice: RackAffinity{}, MaxFollowerLag: 2 * time.Second}
	at := func(d time.Duration) time.Time { return rsT0.Add(d) }
	start := func(t *testing.T) *Selector {
		s := New(cfg.withDefaults(), NewCooldowns(), rsDefault, rsT0)
		for _, ev := range []Event{evMeta(0, rsDefault), evLeaderHW(200*time.Millisecond, 150), evFollowerAt(1300*time.Millisecond, 100, 100)} {
			s.step(ev)
		}
		require.Equal(t, 1, s.Current(), "left the lagging follower for the leader")
		return s
	}
	t.Run("the leader naming none after the hold: no pick without new metadata", func(t *testing.T) {
		s := start(t)
		d := s.step(evFetch(2400*time.Millisecond, 1, -1))
		assert.Equal(t, 1, d.Broker)
		assert.Equal(t, 1, s.Current())
		assert.True(t, s.cooldown.Active(at(2400*time.Millisecond)), "metadata re-read every second meanwhile")
	})
	t.Run("new metadata without it in the ISR: stay on the leader", func(t *testing.T) {
		s := start(t)
		s.step(evMeta(2500*time.Millisecond, rsPart(1, 5, 1, 3)))
		assert.Equal(t, 1, s.Current())
		d := s.step(evMeta(4*time.Second, rsDefault))
		assert.Equal(t, 2, s.Current(), "back once metadata shows it in the ISR again")
		assert.Equal(t, ReasonClientChoice, d.Reason)
	})
	t.Run("new metadata with it in the ISR: refused while it cools down", func(t *testing.T) {
		s := start(t)
		s.step(evMeta(2500*time.Millisecond, rsDefault))
		assert.Equal(t, 1, s.Current(), "the cooldown of a lagging replica (2 s from 1.3 s)")
		d := s.step(evMeta(3400*time.Millisecond, rsDefault))
		assert.Equal(t, 2, s.Current(), "picked again once the cooldown ended")
		assert.Equal(t, ReasonClientChoice, d.Reason)
	})
	t.Run("lagging again: a longer cooldown", func(t *testing.T) {
		s := start(t)
		s.step(evMeta(3400*time.Millisecond, rsDefault))
		require.Equal(t, 2, s.Current())
		s.step(evLeaderHW(3500*time.Millisecond, 200))
		s.step(evFollowerAt(4600*time.Millisecond, 150, 150))
		require.Equal(t, 1, s.Current(), "left again")
		s.step(evMeta(7*time.Second, rsDefault))
		assert.Equal(t, 1, s.Current(), "a second cooldown of 4 s")
		s.step(evMeta(8700*time.Millisecond, rsDefault))
		assert.Equal(t, 2, s.Current())
	})
}
