package group

import (
	"context"
	"time"
)

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
