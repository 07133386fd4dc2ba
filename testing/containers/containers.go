// Package containers starts kafka-go's 3-rack test cluster in Docker with testcontainers-go, for machines
// that have a Docker engine: the topology of testing/cluster/kafka-cluster and docker-compose.yml — three
// combined broker/controller KRaft nodes from the official apache/kafka image, ids 1, 2, 3 in racks a, b, c,
// RackAwareReplicaSelector, replication factor 3, min.insync.replicas 2 — with PLAINTEXT listeners on
// 127.0.0.1 (no SASL or TLS listeners here; the JVM-based tool has those).
//
// It is a module of its own so that kafka-go itself does not depend on testcontainers-go.
//
// Versions: the module stays on go 1.23 so that its users need no newer toolchain. That fixes
// testcontainers-go at v0.38.0, the last release whose go.mod allows 1.23 (v0.39.0 and later declare 1.24
// or more), with its Docker types from github.com/docker/docker v28. github.com/docker/docker has no go.mod,
// so `go mod tidy` resolves the imports of its tests (OpenTelemetry's OTLP trace exporter) to the newest
// releases, which declare go 1.24 or more; go.mod pins go.opentelemetry.io/otel/exporters/otlp/otlptrace
// v1.35.0 and go.opentelemetry.io/proto/otlp v1.5.0 to keep them, and everything they pull, at 1.23 or below.
// Check after any upgrade: `go list -m -f '{{.Path}} {{.GoVersion}}' all` must list nothing above 1.23.
package containers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/go-connections/nat"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// DefaultImage is the broker image, the version line kafka-cluster starts by default.
const DefaultImage = "apache/kafka:3.7.2"

// RackAwareReplicaSelector is the brokers' replica.selector.class.
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

// Options configure Start; the zero value gives the default cluster.
type Options struct {
	// Image is the apache/kafka image (DefaultImage when empty).
	Image string
	// PortBase: broker n listens on 127.0.0.1:PortBase+n (default 29390, so that it can run beside
	// kafka-cluster's or docker-compose.yml's brokers on 29091..29093).
	PortBase int
	// NoSelector starts the brokers without replica.selector.class.
	NoSelector bool
	// StartupTimeout bounds the wait for every broker (default 3 minutes).
	StartupTimeout time.Duration
}

// Cluster is a running cluster; Terminate removes it.
type Cluster struct {
	Brokers   []string       // host:port on 127.0.0.1, in BrokerIDs order
	BrokerIDs []int          // 1, 2, 3
	Racks     map[int]string // 1=a, 2=b, 3=c
	Version   string         // from the image tag, e.g. 3.7.2
	Selector  string         // replica.selector.class or "none"

	nodes   map[int]*testcontainers.DockerContainer
	network *testcontainers.DockerNetwork
}

var racks = map[int]string{1: "a", 2: "b", 3: "c"}

// DockerAvailable returns nil when a Docker engine answers, and why not otherwise.
func DockerAvailable(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil { // testcontainers panics in some set-ups without Docker
			err = fmt.Errorf("docker provider: %v", r)
		}
	}()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return p.Health(ctx)
}

// Start runs the cluster and returns when every broker has started.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.PortBase == 0 {
		o.PortBase = 29390
	}
	if o.StartupTimeout == 0 {
		o.StartupTimeout = 3 * time.Minute
	}
	c := &Cluster{
		BrokerIDs: []int{1, 2, 3},
		Racks:     map[int]string{},
		Version:   o.Image[strings.LastIndex(o.Image, ":")+1:],
		Selector:  RackAwareReplicaSelector,
		nodes:     map[int]*testcontainers.DockerContainer{},
	}
	if o.NoSelector {
		c.Selector = "none"
	}
	nw, err := network.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("containers: network: %w", err)
	}
	c.network = nw

	var voters []string
	for _, id := range c.BrokerIDs {
		voters = append(voters, fmt.Sprintf("%d@kafka-%d:9093", id, id))
		c.Racks[id] = racks[id]
		c.Brokers = append(c.Brokers, net.JoinHostPort("127.0.0.1", strconv.Itoa(o.PortBase+id)))
	}

	// A node reports "Kafka Server started" only once the controller quorum has a majority: start all at once.
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(c.BrokerIDs))
	for i, id := range c.BrokerIDs {
		wg.Add(1)
		go func(i, id int) {
			defer wg.Done()
			ctr, err := startNode(ctx, o, c, nw, id, strings.Join(voters, ","))
			if ctr != nil {
				mu.Lock()
				c.nodes[id] = ctr
				mu.Unlock()
			}
			if err != nil {
				errs[i] = fmt.Errorf("containers: broker %d: %w", id, err)
			}
		}(i, id)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = c.Terminate(context.Background())
		return nil, err
	}
	return c, nil
}

// startNode may return a container together with an error (created, then failed to start): the caller
// keeps it so that Terminate removes it. The result is a typed pointer so that "no container" is a plain nil.
func startNode(ctx context.Context, o Options, c *Cluster, nw *testcontainers.DockerNetwork, id int, voters string) (*testcontainers.DockerContainer, error) {
	port := strconv.Itoa(o.PortBase + id)
	name := fmt.Sprintf("kafka-%d", id)
	env := map[string]string{
		"CLUSTER_ID":                                     "a2Fma2EtZ28tdGVzdHMtMQ", // a Kafka Uuid: 16 bytes, base64url
		"KAFKA_NODE_ID":                                  strconv.Itoa(id),
		"KAFKA_PROCESS_ROLES":                            "broker,controller",
		"KAFKA_CONTROLLER_QUORUM_VOTERS":                 voters,
		"KAFKA_LISTENERS":                                "INTERNAL://:19092,EXTERNAL://:" + port + ",CONTROLLER://:9093",
		"KAFKA_ADVERTISED_LISTENERS":                     "INTERNAL://" + name + ":19092,EXTERNAL://127.0.0.1:" + port,
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":           "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"KAFKA_CONTROLLER_LISTENER_NAMES":                "CONTROLLER",
		"KAFKA_INTER_BROKER_LISTENER_NAME":               "INTERNAL",
		"KAFKA_BROKER_RACK":                              racks[id],
		"KAFKA_DEFAULT_REPLICATION_FACTOR":               "3",
		"KAFKA_MIN_INSYNC_REPLICAS":                      "2",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":         "3",
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS":             "10",
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "3",
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":            "2",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS":         "0",
		"KAFKA_AUTO_CREATE_TOPICS_ENABLE":                "false",
		"KAFKA_REPLICA_LAG_TIME_MAX_MS":                  "4000",
		"KAFKA_BROKER_SESSION_TIMEOUT_MS":                "4000",
		"KAFKA_BROKER_HEARTBEAT_INTERVAL_MS":             "1000",
		"KAFKA_NUM_NETWORK_THREADS":                      "2",
		"KAFKA_NUM_IO_THREADS":                           "2",
		"KAFKA_HEAP_OPTS":                                "-Xms64m -Xmx384m",
	}
	if !o.NoSelector {
		env["KAFKA_REPLICA_SELECTOR_CLASS"] = RackAwareReplicaSelector
	}
	hostPort := nat.Port(port + "/tcp")
	return testcontainers.Run(ctx, o.Image,
		testcontainers.WithEnv(env),
		testcontainers.WithExposedPorts(port+"/tcp"),
		network.WithNetwork([]string{name}, nw),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = nat.PortMap{
				hostPort: {{HostIP: "127.0.0.1", HostPort: port}},
			}
		}),
		testcontainers.WithWaitStrategyAndDeadline(o.StartupTimeout, wait.ForLog("Kafka Server started")),
	)
}

// Env is the cluster in the variables kafka-cluster writes to .kafka/env (the PLAINTEXT part), for
// github.com/rackfetch/kafka-go/testing.
func (c *Cluster) Env() map[string]string {
	ids := make([]string, len(c.BrokerIDs))
	rk := make([]string, len(c.BrokerIDs))
	for i, id := range c.BrokerIDs {
		ids[i] = strconv.Itoa(id)
		rk[i] = fmt.Sprintf("%d=%s", id, c.Racks[id])
	}
	return map[string]string{
		"KAFKA_BROKERS":    strings.Join(c.Brokers, ","),
		"KAFKA_BROKER_IDS": strings.Join(ids, ","),
		"KAFKA_RACKS":      strings.Join(rk, ","),
		"KAFKA_VERSION":    c.Version,
		"KAFKA_MODE":       "kraft",
		"KAFKA_SELECTOR":   c.Selector,
	}
}

// StopBroker stops broker id's container (SIGTERM, then SIGKILL after timeout).
func (c *Cluster) StopBroker(ctx context.Context, id int, timeout time.Duration) error {
	n, ok := c.nodes[id]
	if !ok {
		return fmt.Errorf("containers: no broker %d", id)
	}
	return n.Stop(ctx, &timeout)
}

// StartBroker starts a stopped broker's container again, on its old data.
func (c *Cluster) StartBroker(ctx context.Context, id int) error {
	n, ok := c.nodes[id]
	if !ok {
		return fmt.Errorf("containers: no broker %d", id)
	}
	return n.Start(ctx)
}

// Terminate removes the containers and the network.
func (c *Cluster) Terminate(ctx context.Context) error {
	var errs []error
	for _, n := range c.nodes {
		if err := n.Terminate(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if c.network != nil {
		if err := c.network.Remove(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
