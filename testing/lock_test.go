//go:build unix

package testing

import (
	stdtesting "testing"
	"time"
)

func TestClusterLockSharedAndExclusive(t *stdtesting.T) {
	t.Setenv("KAFKA_STATE_DIR", t.TempDir())
	a, b, c := &fakeTB{name: "TestA"}, &fakeTB{name: "TestB"}, &fakeTB{name: "TestC"}
	lockCluster(a, false)
	lockCluster(b, false) // shared with a: no wait
	sub := &fakeTB{name: "TestA/sub"}
	lockCluster(sub, false) // a subtest shares its test's lock
	if len(sub.cleanups) != 0 {
		t.Fatal("a subtest took a lock of its own")
	}

	done := make(chan struct{})
	go func() {
		lockCluster(c, true) // waits for a and b
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("exclusive lock granted while two tests hold it shared")
	case <-time.After(400 * time.Millisecond):
	}
	a.runCleanups()
	select {
	case <-done:
		t.Fatal("exclusive lock granted while a test holds it shared")
	case <-time.After(400 * time.Millisecond):
	}
	b.runCleanups()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("exclusive lock not granted after the shared holders ended")
	}

	// While c has the cluster, a new test waits even for shared use.
	d := &fakeTB{name: "TestD"}
	got := make(chan struct{})
	go func() {
		lockCluster(d, false)
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("shared lock granted during exclusive use")
	case <-time.After(400 * time.Millisecond):
	}
	c.runCleanups()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("shared lock not granted after the exclusive holder ended")
	}

	// Two tests that both go from shared to exclusive do not wait for each other forever.
	e := &fakeTB{name: "TestE"}
	lockCluster(e, false)
	upgraded := make(chan *fakeTB, 2)
	for _, x := range []*fakeTB{d, e} {
		go func(x *fakeTB) {
			lockCluster(x, true)
			upgraded <- x
		}(x)
	}
	first := <-upgraded
	first.runCleanups()
	select {
	case second := <-upgraded:
		second.runCleanups()
	case <-time.After(5 * time.Second):
		t.Fatal("the second upgrade never got the cluster")
	}
	if a.failed || b.failed || c.failed || d.failed || e.failed {
		t.Fatal("a fake test failed")
	}
}

func TestClusterLockWithoutStateDir(t *stdtesting.T) {
	t.Setenv("KAFKA_STATE_DIR", "")
	t.Setenv("KAFKA_CLUSTER_TOOL", "")
	f := &fakeTB{name: "TestNoLock"}
	lockCluster(f, true) // no cluster of kafka-cluster's: nothing to lock, no wait
	if len(f.cleanups) != 0 {
		t.Error("a lock without a state folder")
	}
}
