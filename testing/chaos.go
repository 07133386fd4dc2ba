package testing

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	stdtesting "testing"
	"time"
)

// Chaos: the helpers below call the cluster tool (KAFKA_CLUSTER_TOOL) to kill, pause, resume or restart a
// broker. They change the shared cluster, so they first take it for the test alone (LockCluster): tests of
// other packages wait until this one ends. Each helper that takes a broker away registers a cleanup that
// brings it back (resumes a paused broker, starts a killed one, and waits until every broker lists it), which
// runs before the cluster is released, so the next test finds every broker serving.

// toolTimeout bounds one call of the tool; a restart waits for the broker to serve again.
const toolTimeout = 4 * time.Minute

// KillBroker kills broker id with SIGKILL: its ports refuse connections at once, and the controller fences
// it after broker.session.timeout.ms. A cleanup starts it again if the test has not.
func KillBroker(t stdtesting.TB, id int) {
	t.Helper()
	tool := requireTool(t)
	t.Cleanup(func() { startBroker(t, tool, id) })
	runTool(t, tool, "kill", id)
}

// PauseBroker stops broker id with SIGSTOP: connections are still accepted by the kernel, but nothing is
// answered. A cleanup resumes it.
func PauseBroker(t stdtesting.TB, id int) {
	t.Helper()
	tool := requireTool(t)
	t.Cleanup(func() { startBroker(t, tool, id) })
	runTool(t, tool, "pause", id)
}

// ResumeBroker continues a paused broker (SIGCONT).
func ResumeBroker(t stdtesting.TB, id int) {
	t.Helper()
	runTool(t, requireTool(t), "resume", id)
}

// RestartBroker starts broker id again on its old data (killing it first if it runs) and returns when every
// running broker's Metadata lists every broker.
func RestartBroker(t stdtesting.TB, id int) {
	t.Helper()
	runTool(t, requireTool(t), "restart", id)
}

func requireTool(t stdtesting.TB) string {
	t.Helper()
	c := RequireCluster(t)
	if c.Tool == "" {
		msg := "ktesting: broker chaos needs the cluster tool (KAFKA_CLUSTER_TOOL is unset; use a cluster from `make kafka-up`)"
		if Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	LockCluster(t)
	return c.Tool
}

// startBroker brings a killed or paused broker back, for cleanups: no-op when it runs.
func startBroker(t stdtesting.TB, tool string, id int) {
	t.Helper()
	if out, err := tool1(tool, "start", id); err != nil {
		t.Errorf("ktesting: cleanup could not bring broker %d back: %v\n%s", id, err, out)
	}
}

func runTool(t stdtesting.TB, tool, cmd string, id int) {
	t.Helper()
	start := time.Now()
	out, err := tool1(tool, cmd, id)
	if err != nil {
		t.Fatalf("ktesting: %s broker %d: %v\n%s", cmd, id, err, out)
	}
	t.Logf("ktesting: %s broker %d (%.1fs): %s", cmd, id, time.Since(start).Seconds(), strings.TrimSpace(out))
}

func tool1(tool, cmd string, id int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	var out bytes.Buffer
	c := exec.CommandContext(ctx, tool, cmd, strconv.Itoa(id))
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s %d: timed out after %v", tool, cmd, id, toolTimeout)
	}
	return out.String(), err
}

// ActiveController returns the id of the cluster's active controller: with KRaft the quorum leader (Metadata
// names a random broker there), with ZooKeeper the controller Metadata names.
func ActiveController(t stdtesting.TB) int {
	t.Helper()
	tool := requireTool(t)
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, "controller").Output()
	if err != nil {
		t.Fatalf("ktesting: finding the active controller: %v", err)
	}
	id, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("ktesting: the cluster tool named no controller: %q", out)
	}
	return id
}
