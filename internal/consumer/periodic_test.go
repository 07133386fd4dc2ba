package consumer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newIdleRuntime(t *testing.T) *Runtime[tp] {
	return New(Config[tp]{
		Members:         func() []Member[tp] { return nil },
		Refresh:         func(context.Context, []string) error { return nil },
		Dial:            func(context.Context, int) error { return nil },
		Logf:            t.Logf,
		Errorf:          t.Logf,
		PinnedInterval:  func() time.Duration { return time.Hour },
		CoolingInterval: func() time.Duration { return time.Hour },
	})
}

// Work of the same interval registered at different times runs in the
// same wakeup: the second job's first run comes with the first job's,
// not one interval after its own registration.
func TestEveryServesOneIntervalInOneWakeup(t *testing.T) {
	rt := newIdleRuntime(t)
	defer rt.Close()
	const interval = 200 * time.Millisecond
	var mu sync.Mutex
	runs := map[string][]time.Time{}
	job := func(name string) func() {
		return func() {
			mu.Lock()
			defer mu.Unlock()
			runs[name] = append(runs[name], time.Now())
		}
	}
	stopA := rt.Every(interval, job("a"))
	defer stopA()
	time.Sleep(interval / 2) // registered half an interval later (not a synchronization: the order of two registrations)
	stopB := rt.Every(interval, job("b"))
	defer stopB()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(runs["a"]) >= 2 && len(runs["b"]) >= 2
	}, 10*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for i := 0; i < 2; i++ {
		// b's runs are a's runs (the next or the same wakeup): never half an interval apart.
		d := runs["b"][i].Sub(runs["a"][i+len(runs["a"])-len(runs["b"])])
		if d < 0 {
			d = -d
		}
		assert.Less(t, d, interval/4, "run %d of b is %v from a's", i, d)
	}
}

// Stopped work does not run again, and the loop ends when no work is left;
// Close joins it.
func TestEveryStop(t *testing.T) {
	rt := newIdleRuntime(t)
	var mu sync.Mutex
	n := 0
	stop := rt.Every(time.Millisecond, func() {
		mu.Lock()
		defer mu.Unlock()
		n++
	})
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return n >= 3
	}, 10*time.Second, time.Millisecond)
	stop()
	require.Eventually(t, func() bool {
		rt.periodic.mu.Lock()
		defer rt.periodic.mu.Unlock()
		return !rt.periodic.running
	}, 10*time.Second, time.Millisecond, "the loop outlived its last work")
	mu.Lock()
	after := n
	mu.Unlock()
	// A new job starts the loop again; the stopped one stays stopped.
	again := make(chan struct{}, 1)
	stop2 := rt.Every(time.Millisecond, func() {
		select {
		case again <- struct{}{}:
		default:
		}
	})
	<-again
	stop2()
	mu.Lock()
	assert.Equal(t, after, n, "stopped work ran again")
	mu.Unlock()
	rt.Close()
	assert.NotPanics(t, func() { rt.Every(time.Millisecond, func() {})() }, "Every after Close")
}
