// Package containers starts kafka-go's 3-rack test cluster in Docker with testcontainers-go, for machines
// that have a Docker engine: the cluster of testing/cluster/kafka-cluster and docker-compose.yml — three
// combined broker/controller KRaft nodes (2.x: brokers and a ZooKeeper node), ids 1, 2, 3 in racks a, b, c,
// RackAwareReplicaSelector, replication factor 3, min.insync.replicas 2 — with PLAINTEXT, SASL_PLAINTEXT,
// SSL and SASL_SSL listeners on 127.0.0.1, from the image of testing/docker (`make docker-image`). The
// official apache/kafka images serve too, PLAINTEXT only. Env gives the variables kafka-cluster writes, the
// chaos tool included (testing/docker/docker-cluster), so the library's integration tests run against it.
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
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/go-connections/nat"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
)

// DefaultImage is the broker image of the line kafka-cluster starts by default (`make docker-image`).
const DefaultImage = "rackfetch/kafka:3.7"

// RackAwareReplicaSelector is the brokers' replica.selector.class.
const RackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

// Labels of the testing/docker image: the Kafka version, and that it has the SASL and TLS set-up.
const (
	labelVersion = "org.apache.kafka.version"
	labelSecure  = "org.rackfetch.kafka-go.test-broker"
)

// Test users of the image's SASL listeners (a throwaway cluster; nothing secret), as kafka-cluster's.
var users = [][2]string{
	{"KAFKA_PLAIN", "plain"}, {"KAFKA_SCRAM256", "scram256"}, {"KAFKA_SCRAM512", "scram512"},
}

// Options configure Start; the zero value gives the default cluster.
type Options struct {
	// Image is the broker image (DefaultImage when empty): rackfetch/kafka:<line> from `make docker-image`
	// (any line: 2.x gets a ZooKeeper container), or apache/kafka:<version> (3.7 on; PLAINTEXT only).
	Image string
	// PortBase: broker n listens on 127.0.0.1:PortBase+n (SASL_PLAINTEXT +10, SSL +20, SASL_SSL +30), the
	// layout of kafka-cluster. Default 28090, beside kafka-cluster's and docker-compose.yml's (29090).
	PortBase int
	// NoSelector starts the brokers without replica.selector.class.
	NoSelector bool
	// StartupTimeout bounds the wait for every broker (default 3 minutes).
	StartupTimeout time.Duration
	// StateDir receives docker.conf (for the chaos tool), ca.pem and the chaos tool's lock. Default: a new
	// temporary folder, removed by Terminate.
	StateDir string
}

// Cluster is a running cluster; Terminate removes it.
type Cluster struct {
	Brokers   []string       // PLAINTEXT host:port on 127.0.0.1, in BrokerIDs order
	BrokerIDs []int          // 1, 2, 3
	Racks     map[int]string // 1=a, 2=b, 3=c
	Image     string         // the broker image
	Version   string         // e.g. 3.7.2
	Mode      string         // kraft or zk
	Selector  string         // replica.selector.class or "none"
	// SASL_PLAINTEXT, SSL and SASL_SSL listeners and the CA of their certificate (PEM file); empty with an
	// image that has no SASL and TLS set-up.
	SASLBrokers, TLSBrokers, SASLTLSBrokers []string
	TLSCA                                   string
	StateDir                                string

	nodes    map[int]*testcontainers.DockerContainer
	zk       *testcontainers.DockerContainer
	network  *testcontainers.DockerNetwork
	ownState bool
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

// Start runs the cluster and returns when every broker answers Metadata listing all three brokers with
// their racks (a broker says "started" a moment before its Metadata lists the others).
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Image == "" {
		o.Image = DefaultImage
	}
	if o.PortBase == 0 {
		o.PortBase = 28090
	}
	if o.StartupTimeout == 0 {
		o.StartupTimeout = 3 * time.Minute
	}
	c := &Cluster{
		Image:     o.Image,
		BrokerIDs: []int{1, 2, 3},
		Racks:     map[int]string{},
		Version:   o.Image[strings.LastIndex(o.Image, ":")+1:],
		Mode:      "kraft",
		Selector:  RackAwareReplicaSelector,
		StateDir:  o.StateDir,
		nodes:     map[int]*testcontainers.DockerContainer{},
	}
	if o.NoSelector {
		c.Selector = "none"
	}
	secure, err := c.inspectImage(ctx, o.Image)
	if err != nil {
		return nil, err
	}
	if c.StateDir == "" {
		if c.StateDir, err = os.MkdirTemp("", "kafka-containers-"); err != nil {
			return nil, fmt.Errorf("containers: state folder: %w", err)
		}
		c.ownState = true
	}
	fail := func(err error) (*Cluster, error) {
		_ = c.Terminate(context.Background())
		return nil, err
	}
	nw, err := network.New(ctx)
	if err != nil {
		return fail(fmt.Errorf("containers: network: %w", err))
	}
	c.network = nw

	var voters []string
	for _, id := range c.BrokerIDs {
		voters = append(voters, fmt.Sprintf("%d@kafka-%d:9093", id, id))
		c.Racks[id] = racks[id]
		c.Brokers = append(c.Brokers, hostAddr(o.PortBase+id))
		if secure {
			c.SASLBrokers = append(c.SASLBrokers, hostAddr(o.PortBase+10+id))
			c.TLSBrokers = append(c.TLSBrokers, hostAddr(o.PortBase+20+id))
			c.SASLTLSBrokers = append(c.SASLTLSBrokers, hostAddr(o.PortBase+30+id))
		}
	}
	if c.Mode == "zk" {
		// The brokers wait for it themselves (the image's kafka-start).
		c.zk, err = testcontainers.Run(ctx, o.Image, testcontainers.WithCmd("zookeeper"),
			network.WithNetwork([]string{"zookeeper"}, nw))
		if err != nil {
			return fail(fmt.Errorf("containers: zookeeper: %w", err))
		}
	}

	// KRaft nodes wait for a quorum of controllers: start all at once.
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, len(c.BrokerIDs))
	for i, id := range c.BrokerIDs {
		wg.Add(1)
		go func(i, id int) {
			defer wg.Done()
			ctr, err := startNode(ctx, o, c, nw, id, strings.Join(voters, ","), secure)
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
		return fail(err)
	}
	if err := c.waitServing(ctx, o.StartupTimeout); err != nil {
		return fail(err)
	}
	if err := c.writeState(ctx, secure); err != nil {
		return fail(err)
	}
	return c, nil
}

func hostAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// inspectImage reads the Kafka version and the SASL/TLS set-up from the image's labels. A missing
// rackfetch/ image is an error here, not a pull that no registry can answer.
func (c *Cluster) inspectImage(ctx context.Context, image string) (secure bool, err error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return false, fmt.Errorf("containers: docker client: %w", err)
	}
	defer cli.Close()
	info, err := cli.ImageInspect(ctx, image)
	if err != nil {
		if strings.HasPrefix(image, "rackfetch/") {
			return false, fmt.Errorf("containers: image %s is not here (make docker-image DOCKER_KAFKA=%s): %w",
				image, c.Version, err)
		}
		return false, nil // testcontainers pulls it
	}
	if info.Config == nil {
		return false, nil
	}
	if v := info.Config.Labels[labelVersion]; v != "" {
		c.Version = v
	}
	if major, _, _ := strings.Cut(c.Version, "."); major == "0" || major == "1" || major == "2" {
		if info.Config.Labels[labelSecure] == "" {
			return false, fmt.Errorf("containers: Kafka %s needs ZooKeeper: use the testing/docker image", c.Version)
		}
		c.Mode = "zk"
	}
	return info.Config.Labels[labelSecure] != "", nil
}

// startNode may return a container together with an error (created, then failed to start): the caller
// keeps it so that Terminate removes it. The result is a typed pointer so that "no container" is a plain nil.
func startNode(ctx context.Context, o Options, c *Cluster, nw *testcontainers.DockerNetwork, id int, voters string, secure bool) (*testcontainers.DockerContainer, error) {
	port := strconv.Itoa(o.PortBase + id)
	name := fmt.Sprintf("kafka-%d", id)
	env := map[string]string{
		"CLUSTER_ID":                                     "a2Fma2EtZ28tdGVzdHMtMQ", // a Kafka Uuid: 16 bytes, base64url
		"KAFKA_NODE_ID":                                  strconv.Itoa(id),
		"KAFKA_PROCESS_ROLES":                            "broker,controller",
		"KAFKA_CONTROLLER_QUORUM_VOTERS":                 voters,
		"KAFKA_LISTENERS":                                "INTERNAL://:19092,PLAINTEXT://:" + port + ",CONTROLLER://:9093",
		"KAFKA_ADVERTISED_LISTENERS":                     "INTERNAL://" + name + ":19092,PLAINTEXT://127.0.0.1:" + port,
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":           "INTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"KAFKA_CONTROLLER_LISTENER_NAMES":                "CONTROLLER",
		"KAFKA_INTER_BROKER_LISTENER_NAME":               "INTERNAL",
		"KAFKA_BROKER_RACK":                              racks[id],
		"KAFKA_NUM_PARTITIONS":                           "1",
		"KAFKA_DEFAULT_REPLICATION_FACTOR":               "3",
		"KAFKA_MIN_INSYNC_REPLICAS":                      "2",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":         "3",
		"KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS":             "10",
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "3",
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":            "2",
		"KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS":     "10",
		"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS":         "0",
		"KAFKA_AUTO_CREATE_TOPICS_ENABLE":                "false",
		"KAFKA_UNCLEAN_LEADER_ELECTION_ENABLE":           "false",
		"KAFKA_REPLICA_LAG_TIME_MAX_MS":                  "4000",
		"KAFKA_BROKER_SESSION_TIMEOUT_MS":                "4000",
		"KAFKA_BROKER_HEARTBEAT_INTERVAL_MS":             "1000",
		"KAFKA_NUM_NETWORK_THREADS":                      "2",
		"KAFKA_NUM_IO_THREADS":                           "2",
		"KAFKA_NUM_REPLICA_FETCHERS":                     "1",
		"KAFKA_BACKGROUND_THREADS":                       "2",
		"KAFKA_HEAP_OPTS":                                "-Xms64m -Xmx384m",
	}
	ports := []string{port}
	if secure {
		for k, off := range map[string]int{"SASL_PORT": 10, "SSL_PORT": 20, "SASL_SSL_PORT": 30} {
			p := strconv.Itoa(o.PortBase + off + id)
			env[k] = p
			ports = append(ports, p)
		}
	}
	if !o.NoSelector {
		env["KAFKA_REPLICA_SELECTOR_CLASS"] = RackAwareReplicaSelector
	}
	if id != 1 {
		env["START_AFTER"] = "kafka-1:19092" // ZooKeeper lines only: broker 1 becomes the controller
	}
	bindings := nat.PortMap{}
	var exposed []string
	for _, p := range ports {
		bindings[nat.Port(p+"/tcp")] = []nat.PortBinding{{HostIP: "127.0.0.1", HostPort: p}}
		exposed = append(exposed, p+"/tcp")
	}
	return testcontainers.Run(ctx, o.Image,
		testcontainers.WithEnv(env),
		testcontainers.WithExposedPorts(exposed...),
		network.WithNetwork([]string{name}, nw),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.PortBindings = bindings }),
	)
}

// waitServing polls every broker's Metadata until each lists all brokers with their racks; a container
// that exits meanwhile ends the wait with its last log lines.
func (c *Cluster) waitServing(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pending := c.notServing()
		if len(pending) == 0 {
			return nil
		}
		for _, id := range pending {
			if st, err := c.nodes[id].State(ctx); err == nil && !st.Running {
				return fmt.Errorf("containers: broker %d exited (code %d) while starting: %s", id, st.ExitCode, c.tail(ctx, c.nodes[id]))
			}
		}
		if c.zk != nil {
			if st, err := c.zk.State(ctx); err == nil && !st.Running {
				return fmt.Errorf("containers: zookeeper exited while starting: %s", c.tail(ctx, c.zk))
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containers: broker(s) %v do not list every broker with its rack after %v", pending, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("containers: waiting for the brokers: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// notServing lists the brokers whose Metadata does not yet list every broker with its rack.
func (c *Cluster) notServing() []int {
	var pending []int
	for i, id := range c.BrokerIDs {
		got, err := MetadataRacks(c.Brokers[i], 2*time.Second)
		ok := err == nil && len(got) == len(c.BrokerIDs)
		for bid, rack := range c.Racks {
			ok = ok && got[bid] == rack
		}
		if !ok {
			pending = append(pending, id)
		}
	}
	return pending
}

func (c *Cluster) tail(ctx context.Context, n *testcontainers.DockerContainer) string {
	r, err := n.Logs(ctx)
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// writeState writes docker.conf for testing/docker/docker-cluster and copies the image's CA.
func (c *Cluster) writeState(ctx context.Context, secure bool) error {
	var conf bytes.Buffer
	for i, id := range c.BrokerIDs {
		fmt.Fprintf(&conf, "BROKER_%d=%s\nPORT_%d=%s\n", id, c.nodes[id].GetContainerID(), id, c.Brokers[i][strings.LastIndex(c.Brokers[i], ":")+1:])
	}
	if err := os.WriteFile(filepath.Join(c.StateDir, "docker.conf"), conf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("containers: state: %w", err)
	}
	if !secure {
		return nil
	}
	r, err := c.nodes[c.BrokerIDs[0]].CopyFileFromContainer(ctx, "/opt/kafka/certs/ca.pem")
	if err != nil {
		return fmt.Errorf("containers: copying the test CA: %w", err)
	}
	defer r.Close()
	pem, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("containers: copying the test CA: %w", err)
	}
	c.TLSCA = filepath.Join(c.StateDir, "ca.pem")
	if err := os.WriteFile(c.TLSCA, pem, 0o644); err != nil {
		return fmt.Errorf("containers: state: %w", err)
	}
	return nil
}

// Tool is the chaos tool for ktesting.KillBroker & co. (testing/docker/docker-cluster, beside this
// package's source), or "" when this package was not built from the repository.
func Tool() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	tool := filepath.Join(filepath.Dir(file), "..", "docker", "docker-cluster")
	if st, err := os.Stat(tool); err != nil || st.IsDir() {
		return ""
	}
	return tool
}

// Env is the cluster in the variables kafka-cluster writes to .kafka/env, for
// github.com/rackfetch/kafka-go/testing (ktesting): listeners, users, state folder and chaos tool.
func (c *Cluster) Env() map[string]string {
	ids := make([]string, len(c.BrokerIDs))
	rk := make([]string, len(c.BrokerIDs))
	for i, id := range c.BrokerIDs {
		ids[i] = strconv.Itoa(id)
		rk[i] = fmt.Sprintf("%d=%s", id, c.Racks[id])
	}
	env := map[string]string{
		"KAFKA_BROKERS":    strings.Join(c.Brokers, ","),
		"KAFKA_BROKER_IDS": strings.Join(ids, ","),
		"KAFKA_RACKS":      strings.Join(rk, ","),
		"KAFKA_VERSION":    c.Version,
		"KAFKA_MODE":       c.Mode,
		"KAFKA_SELECTOR":   c.Selector,
		"KAFKA_STATE_DIR":  c.StateDir,
	}
	if tool := Tool(); tool != "" {
		env["KAFKA_CLUSTER_TOOL"] = tool
	}
	if len(c.SASLBrokers) > 0 {
		env["KAFKA_SASL_BROKERS"] = strings.Join(c.SASLBrokers, ",")
		env["KAFKA_TLS_BROKERS"] = strings.Join(c.TLSBrokers, ",")
		env["KAFKA_SASL_TLS_BROKERS"] = strings.Join(c.SASLTLSBrokers, ",")
		env["KAFKA_TLS_CA"] = c.TLSCA
		for _, u := range users {
			env[u[0]+"_USER"] = u[1] + "-user"
			env[u[0]+"_PASSWORD"] = u[1] + "-secret"
		}
	}
	return env
}

// StopBroker stops broker id's container (SIGKILL with the testing/docker image; others get timeout).
func (c *Cluster) StopBroker(ctx context.Context, id int, timeout time.Duration) error {
	n, ok := c.nodes[id]
	if !ok {
		return fmt.Errorf("containers: no broker %d", id)
	}
	return n.Stop(ctx, &timeout)
}

// StartBroker starts a stopped broker's container again, on its old data, and returns when every broker
// lists all brokers again.
func (c *Cluster) StartBroker(ctx context.Context, id int) error {
	n, ok := c.nodes[id]
	if !ok {
		return fmt.Errorf("containers: no broker %d", id)
	}
	if err := n.Start(ctx); err != nil {
		return fmt.Errorf("containers: starting broker %d: %w", id, err)
	}
	return c.waitServing(ctx, 3*time.Minute)
}

// Terminate removes the containers (at once: the cluster is disposable), the network and a state folder
// Start made. A second call does nothing.
func (c *Cluster) Terminate(ctx context.Context) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	ctrs := []*testcontainers.DockerContainer{c.zk}
	for _, n := range c.nodes {
		ctrs = append(ctrs, n)
	}
	for _, n := range ctrs {
		if n == nil {
			continue
		}
		wg.Add(1)
		go func(n *testcontainers.DockerContainer) {
			defer wg.Done()
			if err := n.Terminate(ctx, testcontainers.StopTimeout(0)); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(n)
	}
	wg.Wait()
	if c.network != nil {
		if err := c.network.Remove(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if c.ownState {
		if err := os.RemoveAll(c.StateDir); err != nil {
			errs = append(errs, err)
		}
	}
	c.nodes, c.zk, c.network, c.ownState = map[int]*testcontainers.DockerContainer{}, nil, nil, false
	return errors.Join(errs...)
}

// ContainerIDs are the ids of the cluster's containers (brokers, and ZooKeeper on 2.x), sorted.
func (c *Cluster) ContainerIDs() []string {
	var ids []string
	for _, n := range c.nodes {
		ids = append(ids, n.GetContainerID())
	}
	if c.zk != nil {
		ids = append(ids, c.zk.GetContainerID())
	}
	sort.Strings(ids)
	return ids
}

// MetadataRacks asks addr for Metadata v4 (no topics) and returns broker id -> rack ("" for none).
func MetadataRacks(addr string, timeout time.Duration) (map[int]string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	req := []byte{0, 0, 0, 17, 0, 3, 0, 4, 0, 0, 0, 1, 0, 2, 'k', 't', 0, 0, 0, 0, 0}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 12 || n > 1<<20 {
		return nil, fmt.Errorf("metadata from %s: response of %d bytes", addr, n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(conn, b); err != nil {
		return nil, err
	}
	short := fmt.Errorf("metadata from %s: response cut short", addr)
	out := map[int]string{}
	i := 12 // correlation id, throttle time, broker count
	for k := int(binary.BigEndian.Uint32(b[8:])); k > 0; k-- {
		if i+8 > len(b) {
			return nil, short
		}
		id := int(int32(binary.BigEndian.Uint32(b[i:])))
		i += 6 + int(binary.BigEndian.Uint16(b[i+4:])) // id, host
		if i+6 > len(b) {
			return nil, short
		}
		i += 4 // port
		l := int(int16(binary.BigEndian.Uint16(b[i:])))
		i += 2
		rack := ""
		if l > 0 {
			if i+l > len(b) {
				return nil, short
			}
			rack = string(b[i : i+l])
			i += l
		}
		out[id] = rack
	}
	return out, nil
}
