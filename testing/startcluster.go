package testing

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	stdtesting "testing"
	"time"
)

// ClusterOptions configure a cluster that one test starts for itself (StartCluster).
type ClusterOptions struct {
	// Selector is the brokers' replica.selector.class: "rack" (RackAwareReplicaSelector), "none", or a
	// class name (KAFKA_SELECTOR of the tool). Empty: "rack".
	Selector string
	// PortBase is the first port (KAFKA_PORT_BASE of the tool); required. It must not overlap the ports
	// of any other cluster on the machine (each cluster uses PortBase..PortBase+50).
	PortBase int
	// StateDir is the cluster's state folder. Empty: <os.TempDir()>/kafka-go-cluster-<PortBase>, a fixed
	// place, so that the next StartCluster on the same ports finds and stops the JVMs of a run that died
	// before its cleanup.
	StateDir string
	// Version is the Kafka version line or version (KAFKA_VERSION). Empty: the environment's
	// KAFKA_VERSION (the version of the cluster the other tests use), else the tool's default.
	Version string
}

// startTimeout bounds `kafka-cluster up` (its own readiness wait is 150 s by default) and `down`.
const startTimeout = 5 * time.Minute

// StartCluster starts a 3-broker cluster of its own for test t with the cluster tool, and stops it (down)
// in t.Cleanup. It is for a test that needs brokers configured differently from the shared cluster (no
// replica selector, say); it costs as long as a `kafka-cluster up` (20-60 s).
//
// The test is skipped with -short, or when the tool cannot be found (failed when Required). The chaos
// helpers (KillBroker...) act on the environment's cluster, not on this one.
func StartCluster(t stdtesting.TB, opts ClusterOptions) *Cluster {
	t.Helper()
	if stdtesting.Short() {
		t.Skip("ktesting: integration test skipped in -short mode")
	}
	if opts.PortBase <= 0 {
		t.Fatal("ktesting: StartCluster needs ClusterOptions.PortBase")
	}
	tool := findTool()
	if tool == "" {
		msg := "ktesting: StartCluster: the cluster tool testing/cluster/kafka-cluster was not found (set KAFKA_CLUSTER_TOOL)"
		if Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := opts.StateDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "kafka-go-cluster-"+strconv.Itoa(opts.PortBase))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("ktesting: StartCluster: %v", err)
	}
	env := clusterToolEnv(os.Environ(), opts, dir)

	start := time.Now()
	// The cleanup is registered first: a failed `up` may leave JVMs behind.
	t.Cleanup(func() {
		out, err := runClusterTool(tool, env, "down")
		if err != nil {
			t.Errorf("ktesting: stopping the cluster in %s: %v\n%s", dir, err, out)
			return
		}
		t.Logf("ktesting: cluster in %s stopped", dir)
	})
	out, err := runClusterTool(tool, env, "up")
	if err != nil {
		t.Fatalf("ktesting: starting a cluster in %s (ports from %d): %v\n%s", dir, opts.PortBase, err, out)
	}
	c := ownedCluster(t, "StartCluster", &ownCluster{tool: tool, env: env, dir: dir})
	t.Logf("ktesting: started a cluster in %.1fs: brokers %v, selector %s, state %s",
		time.Since(start).Seconds(), c.Brokers, c.Selector, dir)
	return c
}

// ownCluster is what StartCluster keeps of a cluster it started, to start it again (RecreateCluster).
type ownCluster struct {
	tool string
	env  []string
	dir  string
}

// RecreateCluster replaces a cluster that StartCluster started with a new one on the same ports: every
// broker stopped, the state folder removed, storage formatted afresh (a new cluster ID: no topics, no
// committed offsets, no producer state) and the brokers started. Clients that keep running across it see
// what they would see if operators rebuilt a cluster behind the same addresses. It returns the new
// cluster's description (its addresses are the old ones).
func RecreateCluster(t stdtesting.TB, c *Cluster) *Cluster {
	t.Helper()
	if c.own == nil {
		t.Fatal("ktesting: RecreateCluster: the cluster was not started by StartCluster")
	}
	start := time.Now()
	if out, err := runClusterTool(c.own.tool, c.own.env, "clean"); err != nil {
		t.Fatalf("ktesting: removing the cluster in %s: %v\n%s", c.own.dir, err, out)
	}
	if out, err := runClusterTool(c.own.tool, c.own.env, "up"); err != nil {
		t.Fatalf("ktesting: starting the cluster in %s again: %v\n%s", c.own.dir, err, out)
	}
	nc := ownedCluster(t, "RecreateCluster", c.own)
	t.Logf("ktesting: recreated the cluster in %s in %.1fs", c.own.dir, time.Since(start).Seconds())
	return nc
}

// ownedCluster describes the cluster own just started, from the env file the tool wrote in its state
// folder; caller names the helper in errors.
func ownedCluster(t stdtesting.TB, caller string, own *ownCluster) *Cluster {
	t.Helper()
	vars, err := readEnvFile(filepath.Join(own.dir, "env"))
	if err != nil {
		t.Fatalf("ktesting: %s: %v", caller, err)
	}
	c, err := parseCluster(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatalf("ktesting: %s: the cluster's env: %v", caller, err)
	}
	c.own = own
	return c
}

// findTool is KAFKA_CLUSTER_TOOL, else the tool beside this source file.
func findTool() string {
	if tool := strings.TrimSpace(os.Getenv("KAFKA_CLUSTER_TOOL")); tool != "" {
		return tool
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		tool := filepath.Join(filepath.Dir(file), "cluster", "kafka-cluster")
		if st, err := os.Stat(tool); err == nil && !st.IsDir() {
			return tool
		}
	}
	return ""
}

// clusterToolEnv is environ without the description of the environment's cluster (which the tool would
// otherwise apply to this one), with the options set.
func clusterToolEnv(environ []string, opts ClusterOptions, dir string) []string {
	keep := map[string]bool{"KAFKA_VERSION": true, "KAFKA_JAVA_HOME": true, "KAFKA_JVM_OPTS": true, "KAFKA_UP_TIMEOUT": true}
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "KAFKA_") && !keep[k] {
			continue
		}
		if k == "KAFKA_VERSION" && opts.Version != "" {
			continue
		}
		env = append(env, kv)
	}
	selector := opts.Selector
	if selector == "" {
		selector = "rack"
	}
	env = append(env, "KAFKA_SELECTOR="+selector, "KAFKA_PORT_BASE="+strconv.Itoa(opts.PortBase), "KAFKA_STATE_DIR="+dir)
	if opts.Version != "" {
		env = append(env, "KAFKA_VERSION="+opts.Version)
	}
	return env
}

func runClusterTool(tool string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var out bytes.Buffer
	c := exec.CommandContext(ctx, tool, args...)
	c.Env = env
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: timed out after %v", tool, strings.Join(args, " "), startTimeout)
	}
	return out.String(), err
}

// readEnvFile reads the `export K=V` lines the tool writes (V bare or in single quotes).
func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "export ") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		vars[k] = unquoteShell(v)
	}
	return vars, sc.Err()
}

// unquoteShell undoes the tool's shell_quote: single quotes delimit literal text, and outside them a
// backslash escapes the next character (so a quote inside a value is written quote-backslash-quote-quote).
func unquoteShell(v string) string {
	if !strings.HasPrefix(v, "'") {
		return v
	}
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\'':
			quoted = !quoted
		case c == '\\' && !quoted && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
