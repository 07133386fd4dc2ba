// Package retry is the client's one retry policy: the wait after the n-th
// failure in a row grows as n² × min up to max (kafka-go's growth from
// ReadBackoffMin to ReadBackoffMax), and Sleep waits it out unless the
// context ends first. The Reader's router, the Writer, the consumer group
// and the Dialer's lookups all wait this way.
package retry

import (
	"context"
	"time"
)

// Backoff is the wait after the n-th failure in a row (n ≥ 1): n² × min,
// at most max.
func Backoff(n int, min, max time.Duration) time.Duration {
	d := time.Duration(n*n) * min
	if d > max || d <= 0 {
		d = max
	}
	return d
}

// Sleep waits for d or until ctx ends, reporting whether it waited fully.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
