package consumer

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPaceSlowsWhileHighWatermarksStay(t *testing.T) {
	const base, quiet = time.Second, 30 * time.Second
	rt := New(Config[string]{})
	ps := &rt.paces
	now := time.Unix(1000, 0)
	require.True(t, ps.due(1, nil, now), "a leader never sampled is due")

	steps := []struct {
		name  string
		hws   map[string]int64
		err   error
		every time.Duration
		quiet bool
	}{
		{"first sample", map[string]int64{"a": 5, "b": 7}, nil, base, false},
		{"nothing moved: the quiet pace at once", map[string]int64{"a": 5, "b": 7}, nil, quiet, true},
		{"still nothing", map[string]int64{"a": 5, "b": 7}, nil, quiet, true},
		{"one moved", map[string]int64{"a": 5, "b": 8}, nil, base, false},
		{"nothing moved again", map[string]int64{"a": 5, "b": 8}, nil, quiet, true},
		{"a partition joins", map[string]int64{"a": 5, "b": 8, "c": 0}, nil, base, false},
		{"nothing moved", map[string]int64{"a": 5, "b": 8, "c": 0}, nil, quiet, true},
		{"c's reads go to the leader for a moment", map[string]int64{"a": 5, "b": 8}, nil, quiet, true},
		{"c back unchanged", map[string]int64{"a": 5, "b": 8, "c": 0}, nil, quiet, true},
		{"nothing to ask", nil, nil, quiet, true},
		{"the sample failed", nil, errors.New("refused"), base, false},
	}
	for i, st := range steps {
		ps.sampled(1, st.hws, nil, st.err, now, base, quiet)
		p := ps.by[1]
		assert.Equal(t, st.every, p.every, "step %d (%s)", i, st.name)
		assert.Equal(t, st.quiet, rt.Quiet("a"), "step %d (%s): Quiet", i, st.name)
		assert.False(t, ps.due(1, nil, now.Add(st.every-base)), "step %d (%s): due a tick early", i, st.name)
		assert.True(t, ps.due(1, nil, now.Add(st.every)), "step %d (%s): not due after its interval", i, st.name)
		now = now.Add(st.every)
	}

	ps.sampled(1, map[string]int64{"a": 5}, nil, nil, now, base, quiet)
	ps.sampled(1, map[string]int64{"a": 5}, nil, nil, now, base, quiet)
	require.True(t, rt.Quiet("a"))
	require.False(t, ps.due(1, nil, now.Add(time.Second)))
	rt.Flowing("a") // a follower answered with records
	assert.True(t, ps.due(1, nil, now.Add(time.Second)), "records flowing again: the leader is sampled at once")
	assert.False(t, rt.Quiet("a"), "records flowing again: not quiet")
	ps.sampled(1, map[string]int64{"a": 5}, nil, nil, now, base, quiet)
	require.True(t, rt.Quiet("a"))
	ps.keep(map[int][]string{2: {"x"}})
	assert.False(t, rt.Quiet("a"), "a leader no partition is read from is forgotten")
	assert.True(t, ps.due(1, nil, now), "a forgotten leader starts again at once")
}

func TestPaceWithoutQuietSamplingNeverSlows(t *testing.T) {
	rt := New(Config[string]{})
	now := time.Unix(1000, 0)
	for i := 0; i < 5; i++ {
		rt.paces.sampled(1, map[string]int64{"a": 5}, nil, nil, now, time.Second, 0)
		require.Equal(t, time.Second, rt.paces.by[1].every)
		require.False(t, rt.Quiet("a"))
	}
}

// A leader whose partitions' readers are already at its high watermarks is
// quiet from its first sample; a partition joining that its readers have
// not read up to yet brings the base pace back.
func TestPaceQuietAtOnceWhenCaughtUp(t *testing.T) {
	const base, quiet = time.Second, 30 * time.Second
	rt := New(Config[string]{})
	ps := &rt.paces
	now := time.Unix(1000, 0)
	ps.sampled(1, map[string]int64{"a": 5, "b": 7}, map[string]bool{"a": true, "b": true}, nil, now, base, quiet)
	assert.Equal(t, quiet, ps.by[1].every, "caught up at the first sample")
	assert.True(t, rt.Quiet("a"))
	ps.sampled(1, map[string]int64{"a": 5, "b": 7, "c": 3}, map[string]bool{"a": true, "b": true}, nil, now, base, quiet)
	assert.Equal(t, base, ps.by[1].every, "c joins with records to read")
	assert.False(t, rt.Quiet("a"))
	ps.sampled(2, map[string]int64{"x": 1}, map[string]bool{"y": true}, nil, now, base, quiet)
	assert.Equal(t, base, ps.by[2].every, "x new and not caught up")
}

// A partition that joins a quiet leader's follower reads (a group's new
// assignment, a Reader starting) is sampled at once, not at the quiet
// pace: until its first sample it has no pace of its own, and its
// follower would be polled short all that time.
func TestPaceNewPartitionOfQuietLeaderIsDue(t *testing.T) {
	const base, quiet = time.Second, 5 * time.Minute
	rt := New(Config[string]{})
	ps := &rt.paces
	now := time.Unix(1000, 0)
	ps.sampled(1, map[string]int64{"a": 5}, nil, nil, now, base, quiet)
	ps.sampled(1, map[string]int64{"a": 5}, nil, nil, now, base, quiet)
	require.True(t, rt.Quiet("a"))
	later := now.Add(base)
	assert.False(t, ps.due(1, []string{"a"}, later), "a quiet leader was due for the partitions it had")
	assert.True(t, ps.due(1, []string{"a", "b"}, later), "a partition new to a quiet leader waits for its pace")
	at, ok := ps.nextDue(map[int][]string{1: {"a", "b"}})
	require.True(t, ok)
	assert.True(t, at.IsZero(), "nextDue: the new partition is due at once, got %v", at)
}

// A partition new to a leader's sample whose readers are behind keeps the
// base pace only until a follower brings them to the sampled high
// watermark (Reached); a sample that found a high watermark moved, or
// failed, is not made quiet by it.
func TestPaceQuietWhenBehindPartitionsAreReached(t *testing.T) {
	const base, quiet = time.Second, 5 * time.Minute
	rt := New(Config[string]{})
	ps := &rt.paces
	now := time.Unix(1000, 0)

	ps.sampled(1, map[string]int64{"a": 5, "b": 7}, map[string]bool{"a": true}, nil, now, base, quiet)
	require.Equal(t, base, ps.by[1].every, "b is behind")
	rt.Reached("b", 6)
	assert.False(t, rt.Quiet("a"), "b short of 7")
	assert.Equal(t, 1, ps.behind)
	rt.Reached("b", 7)
	assert.True(t, rt.Quiet("a"), "b at 7: nothing the leader had is missing at the follower")
	assert.Equal(t, quiet, ps.by[1].every)
	assert.Equal(t, now.Add(quiet), ps.by[1].next, "the quiet pace counts from the sample")
	assert.Equal(t, 0, ps.behind)

	// The next sample finds a moved: Reached of a newcomer does not hide it.
	now = now.Add(quiet)
	ps.sampled(1, map[string]int64{"a": 6, "b": 7, "c": 3}, nil, nil, now, base, quiet)
	rt.Reached("c", 3)
	assert.False(t, rt.Quiet("a"), "a moved at this sample")
	assert.Equal(t, base, ps.by[1].every)

	// A failed sample: the partitions it could not sample wait for the
	// pace instead of being due at once, and nothing is behind.
	ps.sampled(2, nil, nil, errors.New("refused"), now, base, quiet)
	assert.False(t, ps.due(2, []string{"x"}, now.Add(base/2)), "a failed leader with a new partition waits for its pace")
	assert.True(t, ps.due(2, []string{"x"}, now.Add(base)))

	// A leader forgotten with partitions behind leaves no count behind.
	ps.sampled(3, map[string]int64{"y": 9}, nil, nil, now, base, quiet)
	require.Equal(t, 1, ps.behind)
	ps.keep(map[int][]string{1: {"a"}})
	assert.Equal(t, 0, ps.behind)
	rt.Reached("y", 9) // no leader to turn quiet: nothing happens
}

// The leader's answer naming a follower seeds the partition's first sample:
// readers there make the leader quiet without a sample, readers behind
// keep the base pace until Reached; a partition sampled before keeps its
// sample; without a quiet pace nothing turns quiet.
func TestPaceSeededByTheLeadersAnswer(t *testing.T) {
	const base, quiet = time.Second, 5 * time.Minute
	rt := New(Config[string]{Sampling: base, QuietSampling: quiet})
	ps := &rt.paces
	rt.Seed(1, "a", 10, true)
	assert.True(t, rt.Quiet("a"), "caught up at the leader's answer")
	assert.False(t, ps.due(1, []string{"a"}, time.Now().Add(base)), "no sample due at the base pace")

	rt.Seed(1, "b", 7, false)
	assert.False(t, rt.Quiet("a"), "b is behind")
	assert.False(t, ps.due(1, []string{"a", "b"}, time.Now()), "b is seeded: not due at once")
	assert.True(t, ps.due(1, []string{"a", "b"}, time.Now().Add(base)), "the base pace while b is behind")
	rt.Reached("b", 7)
	assert.True(t, rt.Quiet("b"))

	ps.sampled(2, map[string]int64{"x": 5}, nil, nil, time.Now(), base, quiet)
	rt.Seed(2, "x", 9, true)
	assert.Equal(t, int64(5), ps.by[2].hws["x"], "a sampled partition keeps its sample")

	off := New(Config[string]{Sampling: base})
	off.Seed(1, "a", 10, true)
	assert.False(t, off.Quiet("a"), "no quiet pace: never quiet")
	none := New(Config[string]{})
	none.Seed(1, "a", 10, true)
	assert.Nil(t, none.paces.by, "no sampling: nothing seeded")
}
