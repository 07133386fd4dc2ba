package consumer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tp struct {
	topic     string
	partition int
}

// member reads partitions from followers: by leader.
type member struct {
	reads map[int][]tp
	mu    sync.Mutex
	hws   map[tp]int64
}

func (m *member) OnFollower() bool { return len(m.FollowerReads()) > 0 }
func (m *member) Topics() []string { return []string{"t"} }
func (m *member) FollowerReads() map[int][]tp {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads
}

func (m *member) setReads(reads map[int][]tp) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads = reads
}
func (m *member) LeaderHighWatermark(p tp, hw int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hws == nil {
		m.hws = map[tp]int64{}
	}
	m.hws[p] = hw
	return false
}

func (m *member) hw(p tp) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	hw, ok := m.hws[p]
	return hw, ok
}

// The set's leaders are sampled once per round, whatever the number of
// Members: one request per leader carries every partition it leads, and
// each Member hears of its own partitions.
func TestRuntimeSamplesEachLeaderOncePerRound(t *testing.T) {
	var ms []Member[tp]
	var members []*member
	for i := 0; i < 50; i++ {
		m := &member{reads: map[int][]tp{1 + i%2: {{"t", i}}}}
		ms, members = append(ms, m), append(members, m)
	}
	var mu sync.Mutex
	asked := map[int][]int{} // partitions per request, by leader
	rounds := make(chan struct{}, 100)
	rt := New(Config[tp]{
		Members: func() []Member[tp] { return ms },
		Refresh: func(context.Context, []string) error { return nil },
		ListEnds: func(_ context.Context, leader int, tps []tp) (map[tp]int64, error) {
			mu.Lock()
			asked[leader] = append(asked[leader], len(tps))
			n := len(asked[1]) + len(asked[2])
			mu.Unlock()
			out := map[tp]int64{}
			for _, p := range tps {
				out[p] = int64(100 + p.partition)
			}
			if n%2 == 0 {
				select {
				case rounds <- struct{}{}:
				default:
				}
			}
			return out, nil
		},
		Dial:            func(context.Context, int) error { return nil },
		Logf:            t.Logf,
		Errorf:          t.Logf,
		Sampling:        5 * time.Millisecond,
		PinnedInterval:  func() time.Duration { return time.Hour },
		CoolingInterval: func() time.Duration { return time.Hour },
	})
	rt.Start()
	for i := 0; i < 3; i++ {
		select {
		case <-rounds:
		case <-time.After(10 * time.Second):
			t.Fatal("no sampling round")
		}
	}
	rt.Close()
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, asked[1])
	for leader, sizes := range asked {
		for _, n := range sizes {
			assert.Equal(t, 25, n, "leader %d: one request for its 25 partitions", leader)
		}
	}
	assert.InDelta(t, len(asked[1]), len(asked[2]), 1, "each leader once per round")
	assert.Equal(t, int64(len(asked[1])+len(asked[2])), rt.LeaderEndRequests())
	for i, m := range members {
		hw, ok := m.hw(tp{"t", i})
		require.True(t, ok, "member %d heard nothing", i)
		assert.Equal(t, int64(100+i), hw)
		e, ok := rt.LeaderEndSince(tp{"t", i}, 0)
		require.True(t, ok)
		assert.Equal(t, int64(100+i), e.HW)
	}
}

// Close stops a probe in flight and joins it; the cooldowns hear nothing
// of a probe cut short, and no probe starts after Close.
func TestRuntimeCloseJoinsProbes(t *testing.T) {
	dialing := make(chan struct{})
	var dials atomic.Int32
	rt := New(Config[tp]{
		Members: func() []Member[tp] { return nil },
		Dial: func(ctx context.Context, broker int) error {
			if dials.Add(1) == 1 {
				close(dialing)
			}
			<-ctx.Done() // a frozen broker
			return ctx.Err()
		},
		Logf: t.Logf, Errorf: t.Logf,
	})
	answered := false
	rt.Probe(2, time.Hour, time.Now, func() { answered = true })
	<-dialing
	rt.Close() // returns only once the probe has
	rt.Probe(2, time.Hour, time.Now, func() { answered = true })
	assert.Equal(t, int32(1), dials.Load(), "a probe started after Close")
	assert.False(t, answered)
}

// Between route changes the sampler keeps the Members' follower reads:
// hundreds of idle Readers are not asked for them at every tick. A change
// (RoutesChanged) is seen at the next tick.
func TestRuntimeAsksMembersOnlyAfterRoutesChange(t *testing.T) {
	var mu sync.Mutex
	var asks atomic.Int32
	current := []Member[tp]{&countingMember{member{reads: map[int][]tp{1: {{"t", 0}}}}, &asks}}
	sampled := make(chan []tp, 100)
	rt := New(Config[tp]{
		Members: func() []Member[tp] {
			mu.Lock()
			defer mu.Unlock()
			return current
		},
		Refresh: func(context.Context, []string) error { return nil },
		ListEnds: func(_ context.Context, _ int, tps []tp) (map[tp]int64, error) {
			sampled <- tps
			out := map[tp]int64{}
			for _, p := range tps {
				out[p] = 7 // never moves: the pace slows, samples go on
			}
			return out, nil
		},
		Dial:            func(context.Context, int) error { return nil },
		Logf:            t.Logf,
		Errorf:          t.Logf,
		Sampling:        2 * time.Millisecond,
		QuietSampling:   8 * time.Millisecond,
		PinnedInterval:  func() time.Duration { return time.Hour },
		CoolingInterval: func() time.Duration { return time.Hour },
	})
	rt.Start()
	defer rt.Close()
	next := func() []tp {
		select {
		case tps := <-sampled:
			return tps
		case <-time.After(10 * time.Second):
			t.Fatal("no sample")
			return nil
		}
	}
	for i := 0; i < 4; i++ {
		require.Equal(t, []tp{{"t", 0}}, next())
	}
	assert.Equal(t, int32(1), asks.Load(), "follower reads asked again without a route change")

	mu.Lock()
	current = []Member[tp]{&countingMember{member{reads: map[int][]tp{1: {{"t", 0}, {"t", 1}}}}, &asks}}
	mu.Unlock()
	rt.RoutesChanged()
	for {
		if tps := next(); len(tps) == 2 {
			break
		}
	}
	assert.Equal(t, int32(2), asks.Load())
}

// countingMember counts the calls of FollowerReads.
type countingMember struct {
	member
	asks *atomic.Int32
}

func (m *countingMember) FollowerReads() map[int][]tp {
	m.asks.Add(1)
	return m.member.FollowerReads()
}

// A leader whose high watermarks do not move is sampled at the quiet pace;
// records flowing from a follower (Flowing) wake the sampler, which asks the
// leader again at once instead of at its next quiet sample.
func TestRuntimeFlowingWakesQuietSampler(t *testing.T) {
	m := &member{reads: map[int][]tp{1: {{"t", 0}}}}
	sampled := make(chan time.Time, 100)
	rt := New(Config[tp]{
		Members: func() []Member[tp] { return []Member[tp]{m} },
		Refresh: func(context.Context, []string) error { return nil },
		ListEnds: func(_ context.Context, _ int, tps []tp) (map[tp]int64, error) {
			sampled <- time.Now()
			return map[tp]int64{tps[0]: 7}, nil
		},
		Dial:            func(context.Context, int) error { return nil },
		Logf:            t.Logf,
		Errorf:          t.Logf,
		Sampling:        5 * time.Millisecond,
		QuietSampling:   time.Hour,
		PinnedInterval:  func() time.Duration { return time.Hour },
		CoolingInterval: func() time.Duration { return time.Hour },
	})
	rt.Start()
	defer rt.Close()
	next := func() {
		t.Helper()
		select {
		case <-sampled:
		case <-time.After(10 * time.Second):
			t.Fatal("no sample")
		}
	}
	next()
	next() // unchanged since the first: the leader is quiet now
	require.Eventually(t, func() bool { return rt.Quiet(tp{"t", 0}) }, 10*time.Second, time.Millisecond)
	select {
	case <-sampled:
		t.Fatal("a quiet leader sampled before its quiet pace")
	default:
	}
	rt.Flowing(tp{"t", 0})
	next()
}

// A partition that moves to a follower is sampled as soon as the move
// settles (newcomerSettle), not a Sampling after the last sample: its
// readers are catching up, and the sample lets its leader turn quiet when
// they are there (Reached) instead of polling the follower short meanwhile.
func TestRuntimeSamplesAMoveOnceItSettles(t *testing.T) {
	m := &member{reads: map[int][]tp{1: {{"t", 0}}}}
	sampled := make(chan []tp, 100)
	rt := New(Config[tp]{
		Members: func() []Member[tp] { return []Member[tp]{m} },
		Refresh: func(context.Context, []string) error { return nil },
		ListEnds: func(_ context.Context, _ int, tps []tp) (map[tp]int64, error) {
			sampled <- tps
			hws := map[tp]int64{}
			for _, p := range tps {
				hws[p] = 7
			}
			return hws, nil
		},
		Dial:            func(context.Context, int) error { return nil },
		Logf:            t.Logf,
		Errorf:          t.Logf,
		Sampling:        time.Hour,
		QuietSampling:   2 * time.Hour,
		PinnedInterval:  func() time.Duration { return time.Hour },
		CoolingInterval: func() time.Duration { return time.Hour },
	})
	rt.Start()
	defer rt.Close()
	next := func() []tp {
		t.Helper()
		select {
		case tps := <-sampled:
			return tps
		case <-time.After(10 * time.Second):
			t.Fatal("no sample within 10 s of the move; Sampling is an hour")
			return nil
		}
	}
	assert.Equal(t, []tp{{"t", 0}}, next())
	m.setReads(map[int][]tp{1: {{"t", 0}, {"t", 1}}})
	rt.RoutesChanged()
	assert.ElementsMatch(t, []tp{{"t", 0}, {"t", 1}}, next(), "the partition that moved, with its leader's others")

	// Behind at the sample (member.LeaderHighWatermark says so), the
	// leader keeps the base pace until a follower brings them to 7.
	require.False(t, rt.Quiet(tp{"t", 0}))
	rt.Reached(tp{"t", 0}, 7)
	rt.Reached(tp{"t", 1}, 6)
	assert.False(t, rt.Quiet(tp{"t", 0}), "partition 1 is still behind")
	rt.Reached(tp{"t", 1}, 7)
	assert.True(t, rt.Quiet(tp{"t", 0}), "both reached what the leader had: quiet without a second sample")
}

// A refresh that changed nothing is not news: the fetchers watching
// Version are not asked to look again, while a change anyone merged since
// the last counted refresh is.
func TestRefreshCountsChangesOnly(t *testing.T) {
	var changes uint64
	rt := New(Config[int]{
		Members: func() []Member[int] { return nil },
		Refresh: func(context.Context, []string) error { return nil },
		Changes: func() uint64 { return changes },
	})
	defer rt.Close()
	ctx := context.Background()

	require.NoError(t, rt.Refresh(ctx, "t"))
	require.Equal(t, uint64(1), rt.Version(), "the first refresh is news")
	require.NoError(t, rt.Refresh(ctx, "t"))
	require.Equal(t, uint64(1), rt.Version(), "a refresh that changed nothing was counted")

	changes++ // merged by anyone: another share, a Writer
	require.NoError(t, rt.Refresh(ctx, "t"))
	require.Equal(t, uint64(2), rt.Version(), "a change was not counted")
	require.False(t, rt.Refreshed().IsZero())
}
