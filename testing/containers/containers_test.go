package containers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"
)

// Settings of these tests (make test-containers sets them):
//
//	CONTAINERS_IMAGE       broker image (default DefaultImage)
//	CONTAINERS_PORT_BASE   ports of the cluster (default Options' default)
//	CONTAINERS_RACK_TESTS  the integration tests (./integration) TestContainersCluster runs after the harness's own
//	                       (default: the rack integration tests that need no second cluster; "" for none)

func TestMain(m *testing.M) {
	// The reaper image comes from a registry; Terminate in each test's cleanup removes what it started.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	os.Exit(m.Run())
}

// required: CI or KAFKA_REQUIRE set (and not 0/false/no), as for the library's integration tests: then a
// missing engine fails the test instead of skipping it.
func required() bool {
	for _, k := range []string{"CI", "KAFKA_REQUIRE"} {
		switch strings.ToLower(strings.TrimSpace(os.Getenv(k))) {
		case "", "0", "false", "no":
		default:
			return true
		}
	}
	return false
}

func startCluster(t *testing.T) *Cluster {
	t.Helper()
	ctx := context.Background()
	if err := DockerAvailable(ctx); err != nil {
		if required() {
			t.Fatalf("no Docker engine answers (%v); CI needs one (make test-containers starts an installed one)", err)
		}
		t.Skipf("SKIPPED, NOT RUN: no Docker engine is available here (%v); make test-containers starts an "+
			"installed one. The JVM-based cluster (make kafka-up) covers this machine.", err)
	}
	if testing.Short() && !required() {
		t.Skip("starts three Kafka containers: skipped with -short")
	}
	o := Options{Image: os.Getenv("CONTAINERS_IMAGE")}
	if s := os.Getenv("CONTAINERS_PORT_BASE"); s != "" {
		var err error
		o.PortBase, err = strconv.Atoi(s)
		require.NoError(t, err, "CONTAINERS_PORT_BASE")
	}
	start := time.Now()
	c, err := Start(ctx, o)
	require.NoError(t, err)
	t.Logf("Kafka %s (%s) from %s serving in %.1fs: %v", c.Version, c.Mode, c.Image, time.Since(start).Seconds(), c.Brokers)
	t.Cleanup(func() {
		if c.Terminate(context.Background()) != nil {
			t.Error("terminate failed")
		}
	})
	return c
}

// One cluster per run (a start costs 15-25 s): Start returns only once every broker lists all three with
// their racks (checked at once, no polling here); the harness's own integration tests (racks, TLS, SASL
// logins, kill/pause/restart of a broker through testing/docker/docker-cluster) and the library's rack
// integration tests then run against it with `go test` in the repository, and must all pass, none skip;
// Terminate is fast and leaves no container.
func TestContainersCluster(t *testing.T) {
	c := startCluster(t)
	for _, addr := range c.Brokers {
		racks, err := MetadataRacks(addr, 10*time.Second)
		require.NoError(t, err, "Metadata from %s", addr)
		require.Equal(t, map[int]string{1: "a", 2: "b", 3: "c"}, racks, "Metadata from %s right after Start", addr)
	}
	env := c.Env()
	assert.Equal(t, "1=a,2=b,3=c", env["KAFKA_RACKS"])
	assert.Equal(t, "1,2,3", env["KAFKA_BROKER_IDS"])
	assert.Equal(t, strings.Join(c.Brokers, ","), env["KAFKA_BROKERS"])
	require.NotEmpty(t, env["KAFKA_CLUSTER_TOOL"], "the chaos tool beside the package")
	require.FileExists(t, filepath.Join(c.StateDir, "docker.conf"))

	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	childEnv := []string{"KAFKA_REQUIRE=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KAFKA_") {
			childEnv = append(childEnv, kv)
		}
	}
	for k, v := range env {
		childEnv = append(childEnv, k+"="+v)
	}
	rackTests, ok := os.LookupEnv("CONTAINERS_RACK_TESTS")
	if !ok {
		rackTests = "^TestRackIntegration(SteadyState|FollowerKilled|FollowerPaused)$"
	}
	runs := []struct{ name, pkg, run string }{
		{"harness", "./testing", "^TestCluster"},
		{"rack", "./integration", rackTests},
	}
	for _, r := range runs {
		if r.run == "" {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			cmd := exec.Command("go", "test", "-count=1", "-v", "-run", r.run, r.pkg)
			cmd.Dir, cmd.Env = root, childEnv
			out, err := cmd.CombinedOutput()
			passed, skipped, failed := summarize(out)
			for _, l := range passed {
				t.Log(l)
			}
			if err != nil || len(failed) > 0 || len(skipped) > 0 || len(passed) == 0 {
				t.Logf("go test -run '%s' %s:\n%s", r.run, r.pkg, out)
			}
			require.NoError(t, err, "go test -run '%s' %s", r.run, r.pkg)
			assert.Empty(t, failed, "failed")
			assert.Empty(t, skipped, "skipped: every test must run against the containers")
			assert.NotEmpty(t, passed, "no test passed")
		})
	}

	// Stopping is fast (the image stops with SIGKILL; others get no grace) and leaves nothing.
	ids := c.ContainerIDs()
	start := time.Now()
	require.NoError(t, c.Terminate(context.Background()))
	took := time.Since(start)
	t.Logf("terminated %d containers in %.1fs", len(ids), took.Seconds())
	assert.Less(t, took, 8*time.Second, "terminating the cluster")
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	require.NoError(t, err)
	defer cli.Close()
	for _, id := range ids {
		_, err := cli.ContainerInspect(context.Background(), id)
		assert.Error(t, err, "container %s still exists after Terminate", id)
	}
	assert.NoDirExists(t, c.StateDir)
}

var resultLine = regexp.MustCompile(`^\s*--- (PASS|SKIP|FAIL): (\S+)`)

// summarize picks the results of a go test -v output.
func summarize(out []byte) (passed, skipped, failed []string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		switch {
		case m == nil:
		case m[1] == "PASS":
			passed = append(passed, strings.TrimSpace(sc.Text()))
		case m[1] == "SKIP":
			skipped = append(skipped, m[2])
		default:
			failed = append(failed, m[2])
		}
	}
	return passed, skipped, failed
}

// A rackfetch/ image that is not here is reported with the make target that builds it, before any
// container or network is made (no registry lookup).
func TestStartMissingImage(t *testing.T) {
	ctx := context.Background()
	if err := DockerAvailable(ctx); err != nil {
		if required() {
			t.Fatalf("no Docker engine answers: %v", err)
		}
		t.Skipf("no Docker engine is available here (%v)", err)
	}
	_, err := Start(ctx, Options{Image: "rackfetch/kafka:0.0.404", StartupTimeout: 10 * time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make docker-image")
}

// MetadataRacks reads the brokers of a Metadata v4 response, and an answer cut anywhere is an error, never a
// panic.
func TestMetadataRacks(t *testing.T) {
	// correlation id, throttle time, 2 brokers: (1, "h", 9092, "a"), (2, "h", 9093, null rack)
	body := []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2,
		0, 0, 0, 1, 0, 1, 'h', 0, 0, 0x23, 0x84, 0, 1, 'a',
		0, 0, 0, 2, 0, 1, 'h', 0, 0, 0x23, 0x85, 0xff, 0xff}
	for cut := len(body); cut >= 12; cut-- {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go func(b []byte) {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
			req := make([]byte, 21)
			if _, err := io.ReadFull(conn, req); err != nil {
				return
			}
			_ = binary.Write(conn, binary.BigEndian, uint32(len(b)))
			_, _ = conn.Write(b)
		}(body[:cut])
		got, err := MetadataRacks(ln.Addr().String(), 5*time.Second)
		ln.Close()
		if cut == len(body) {
			require.NoError(t, err)
			assert.Equal(t, map[int]string{1: "a", 2: ""}, got)
		} else {
			assert.Error(t, err, "response cut to %d of %d bytes", cut, len(body))
		}
	}
}
