package integration

// This package holds the integration tests that use only the public API, against the real 3-rack cluster
// of testing/cluster (`make test`, or `make kafka-up` and `source .kafka/env`); those that read the root
// package's internals stay there. Helpers shared by its tests: the gate on the cluster from the
// environment (KAFKA_BROKERS and the rest of .kafka/env; skipped without one, failed under CI), bounded
// waits, dialing brokers and the controller, and the port base of a second cluster.

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// itTimeout bounds each dial and lookup of these tests; the cluster answers in milliseconds when healthy.
const itTimeout = 10 * time.Second

// connDeadline bounds all requests on one test connection, so that a hung broker fails the test instead
// of blocking it.
const connDeadline = 45 * time.Second

// requireRackCluster is the gate of every test here: the cluster from the environment (skipped without
// one, failed under CI), which must be the 3-broker, 3-rack cluster of kafka-cluster.
func requireRackCluster(t *testing.T) *ktesting.Cluster {
	t.Helper()
	return ktesting.RequireRackCluster(t)
}

// brokerInRack is the id of the only broker in rack.
func brokerInRack(t *testing.T, c *ktesting.Cluster, rack string) int {
	t.Helper()
	ids := c.BrokersInRack(rack)
	if len(ids) != 1 {
		t.Fatalf("rack %q has brokers %v, want exactly one (KAFKA_RACKS=%v)", rack, ids, c.Racks)
	}
	return ids[0]
}

// eventually polls cond until it holds, failing the test when timeout passes first.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		<-tick.C
	}
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newDialer() *kafka.Dialer {
	return &kafka.Dialer{ClientID: "kafka-go-itest", Timeout: itTimeout}
}

// dial opens a connection to addr with d, closed at the end of the test, with a deadline on every request.
func dial(t testing.TB, d *kafka.Dialer, addr string) *kafka.Conn {
	t.Helper()
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dialing %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(connDeadline))
	return conn
}

// dialLeader opens a connection to the leader of topic/partition, closed at the end of the test.
func dialLeader(t *testing.T, d *kafka.Dialer, bootstrap, topic string, partition int) *kafka.Conn {
	t.Helper()
	conn, err := d.DialLeader(testContext(t, itTimeout), "tcp", bootstrap, topic, partition)
	if err != nil {
		t.Fatalf("dialing the leader of %s/%d: %v", topic, partition, err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(connDeadline))
	return conn
}

// dialController opens a plaintext connection to the broker the cluster names as controller: where admin
// requests go (a ZooKeeper cluster refuses them elsewhere).
func dialController(t testing.TB, c *ktesting.Cluster) *kafka.Conn {
	t.Helper()
	conn := dial(t, newDialer(), c.Brokers[0])
	ctrl, err := conn.Controller()
	if err != nil {
		t.Fatalf("Controller: %v", err)
	}
	return dial(t, newDialer(), net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
}

// secondClusterPortBase is the port base for a test that starts a cluster of its own (ktesting.StartCluster):
// below the kernel's ephemeral port range (32768+) and 1000 below the main cluster's base, so that two
// suites on one machine (whose main clusters have different bases) never share it. The tests of this
// package run one after the other, so they can all use it. SECOND_CLUSTER_PORT_BASE overrides it.
func secondClusterPortBase(t *testing.T) int {
	t.Helper()
	if v := os.Getenv("SECOND_CLUSTER_PORT_BASE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("SECOND_CLUSTER_PORT_BASE=%q: %v", v, err)
		}
		return n
	}
	if v, err := strconv.Atoi(os.Getenv("KAFKA_PORT_BASE")); err == nil && v > 2000 {
		return v - 1000
	}
	return 28090
}
