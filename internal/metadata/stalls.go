package metadata

import "time"

const (
	stallPeriod    = 10 * time.Second
	maxStallPeriod = time.Minute
)

// Stalls remembers the brokers, by address, that did not answer a control
// request in time or could not be reached: they are tried last until their
// stall ends. The period doubles when a broker fails again soon after, so
// a broker frozen for long costs one deadline per period, not one per
// request. The zero value is ready; its owner guards it against
// concurrent use.
type Stalls struct {
	m map[string]stall
}

type stall struct {
	until  time.Time
	period time.Duration
}

// Mark remembers that the broker at addr stalled or could not be reached.
func (s *Stalls) Mark(addr string, now time.Time) {
	st, ok := s.m[addr]
	switch {
	case ok && now.Before(st.until):
		return // already known: concurrent requests that stalled together
	case ok && now.Before(st.until.Add(st.period)):
		st.period = min(2*st.period, maxStallPeriod) // failed again soon after
	default:
		st.period = stallPeriod
	}
	st.until = now.Add(st.period)
	if s.m == nil {
		s.m = map[string]stall{}
	}
	s.m[addr] = st
}

// Forget forgets a stall of the broker at addr: it answered.
func (s *Stalls) Forget(addr string) { delete(s.m, addr) }

// Until returns when the stall of the broker at addr ends, if it is
// stalled at now.
func (s *Stalls) Until(addr string, now time.Time) (time.Time, bool) {
	st, ok := s.m[addr]
	if !ok || !now.Before(st.until) {
		return time.Time{}, false
	}
	return st.until, true
}
