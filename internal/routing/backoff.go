package routing

import (
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
)

// The router owns every wait of a fetcher between two fetches: the
// decision's Backoff is the only one it sleeps. Routing's own waits (a
// follower at its high watermark, a refused replica, the leader failing,
// a stale client) grow per cause in selector.go and lag.go; eventBackoff
// adds the wait any failure earns whatever routing did with it, the
// Reader's ReadBackoffMin→Max growth (kafka-go's), so that a partition
// whose fetches keep failing, wherever they go, is asked at most that often.

// eventBackoff counts ev towards the error backoff and returns the least
// wait it earns.
func (s *Selector) eventBackoff(ev Event) time.Duration {
	switch ev.Kind {
	case EventFetchError, EventDialFailed:
		s.failures++
		return retry.Backoff(s.failures, s.cfg.ErrorBackoffMin, s.cfg.ErrorBackoffMax)
	case EventFetched:
		s.failures = 0
		if ev.Empty && ev.Preferred < 0 && !ev.LongPolled {
			// Nothing at once for any partition: do not spin.
			return s.cfg.ErrorBackoffMin
		}
	}
	return 0
}
