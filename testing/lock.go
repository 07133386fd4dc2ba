package testing

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	stdtesting "testing"
	"time"
)

// The test packages of `go test ./...` run at the same time, and share one cluster. So that no test sees a
// broker missing because a test of another package (or a parallel test of its own) took it away, every
// test that calls RequireCluster holds a shared lock on the cluster until it ends, and a test that takes a
// broker away (KillBroker, PauseBroker, RestartBroker) or calls LockCluster holds it exclusively from then
// on. The lock is a flock(2) on tests.lock in the cluster's state folder (KAFKA_STATE_DIR), so it works
// across test binaries. It belongs to the top-level test: its subtests share it.

// lockWait bounds the wait for the cluster lock.
const lockWait = 15 * time.Minute

type clusterLock struct {
	mu        sync.Mutex
	f         *os.File
	held      bool // shared or exclusive
	exclusive bool
}

var (
	locksMu sync.Mutex
	locks   = map[string]*clusterLock{} // by top-level test name
)

// LockCluster gives the test exclusive use of the cluster until it ends: tests of other packages that use
// the cluster wait. The chaos helpers call it; call it directly for a test that must have the cluster to
// itself for another reason (timing, cluster-wide settings).
func LockCluster(t stdtesting.TB) {
	t.Helper()
	lockCluster(t, true)
}

func lockPath() string {
	dir := os.Getenv("KAFKA_STATE_DIR")
	if dir == "" {
		if tool := os.Getenv("KAFKA_CLUSTER_TOOL"); tool != "" {
			// <repo>/testing/cluster/kafka-cluster keeps its state in <repo>/.kafka by default.
			dir = filepath.Join(filepath.Dir(tool), "..", "..", ".kafka")
		}
	}
	if dir == "" {
		return ""
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return filepath.Join(dir, "tests.lock")
}

func lockCluster(t stdtesting.TB, exclusive bool) {
	t.Helper()
	path := lockPath()
	if path == "" || !flockSupported {
		return // a cluster not made by kafka-cluster: nothing to coordinate with
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	locksMu.Lock()
	l := locks[top]
	if l == nil {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			locksMu.Unlock()
			t.Fatalf("ktesting: cluster lock: %v", err)
		}
		l = &clusterLock{f: f}
		locks[top] = l
		t.Cleanup(func() {
			locksMu.Lock()
			delete(locks, top)
			locksMu.Unlock()
			l.mu.Lock()
			l.f.Close() // releases the flock
			l.mu.Unlock()
		})
		locksMu.Unlock()
		l.acquire(t, exclusive)
		return
	}
	locksMu.Unlock()
	if exclusive {
		l.acquire(t, true)
	}
}

// acquire takes the lock shared or exclusive (from shared, or from nothing), polling so that a long wait
// is logged and bounded.
func (l *clusterLock) acquire(t stdtesting.TB, exclusive bool) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.exclusive || (l.held && !exclusive) {
		return
	}
	if l.held {
		// Shared to exclusive: give up the shared lock first, or two tests upgrading at once would wait for
		// each other forever.
		if err := unlockFlock(l.f); err != nil {
			t.Fatalf("ktesting: cluster lock: %v", err)
		}
		l.held = false
	}
	start, logged := time.Now(), false
	for {
		ok, err := tryFlock(l.f, exclusive)
		if err != nil {
			t.Fatalf("ktesting: cluster lock: %v", err)
		}
		if ok {
			l.held, l.exclusive = true, exclusive
			if logged {
				t.Logf("ktesting: got the cluster after %.1fs", time.Since(start).Seconds())
			}
			return
		}
		if !logged && time.Since(start) > 2*time.Second {
			what := "shared"
			if exclusive {
				what = "exclusive"
			}
			t.Logf("ktesting: waiting for %s use of the cluster: another test (maybe of another package) holds it", what)
			logged = true
		}
		if time.Since(start) > lockWait {
			t.Fatalf("ktesting: no use of the cluster within %v", lockWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
