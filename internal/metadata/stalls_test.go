package metadata

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A stall lasts its period; failing again soon after it ended doubles the
// period, up to a minute; failing long after starts afresh. Concurrent
// failures during one stall count once.
func TestStallsPeriods(t *testing.T) {
	var s Stalls
	t0 := time.Unix(1000, 0)
	_, ok := s.Until("a", t0)
	assert.False(t, ok, "nothing remembered")

	s.Mark("a", t0)
	until, ok := s.Until("a", t0.Add(time.Second))
	assert.True(t, ok)
	assert.Equal(t, t0.Add(stallPeriod), until)
	s.Mark("a", t0.Add(time.Second)) // the same stall
	until, _ = s.Until("a", t0)
	assert.Equal(t, t0.Add(stallPeriod), until, "a failure during the stall changes nothing")
	_, ok = s.Until("a", t0.Add(stallPeriod))
	assert.False(t, ok, "the stall ended")
	_, ok = s.Until("b", t0)
	assert.False(t, ok, "another broker")

	var at time.Time
	for _, want := range []time.Duration{20 * time.Second, 40 * time.Second, time.Minute, time.Minute} {
		at = until.Add(time.Second) // soon after the stall ended
		s.Mark("a", at)
		until, ok = s.Until("a", at)
		assert.True(t, ok)
		assert.Equal(t, want, until.Sub(at))
	}

	s.Forget("a")
	_, ok = s.Until("a", at)
	assert.False(t, ok, "forgotten once it answered")
	s.Mark("a", at.Add(time.Hour))
	until, _ = s.Until("a", at.Add(time.Hour))
	assert.Equal(t, stallPeriod, until.Sub(at.Add(time.Hour)), "a new stall starts at the first period")
}
