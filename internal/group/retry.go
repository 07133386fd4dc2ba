package group

import (
	"context"
	"time"
)

// sleep waits for d or until ctx ends, reporting whether it waited fully.
func sleep(ctx context.Context, d time.Duration) bool {
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

// backoff grows quadratically from min up to max.
func backoff(attempt int, min, max time.Duration) time.Duration {
	d := time.Duration(attempt*attempt) * min
	if d > max || d <= 0 {
		d = max
	}
	return d
}

// sleepBoth waits d unless a or b ends first; it returns the error of the
// one that ended.
func sleepBoth(a, b context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-a.Done():
		return a.Err()
	case <-b.Done():
		return b.Err()
	}
}
