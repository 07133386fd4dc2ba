package fakebroker

import (
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Config describes a fake cluster.
type Config struct {
	// Brokers is the number of brokers (default 1), with ids 1..Brokers.
	Brokers int
	// Racks[i] is the rack of broker i+1 ("" or missing: no rack).
	Racks []string
	// ClusterID is returned by Metadata (default "fake-cluster").
	ClusterID string
	// RackAwareSelector makes partition leaders pick a preferred read
	// replica for consumer fetches (v11+) like Kafka's
	// RackAwareReplicaSelector.
	RackAwareSelector bool
	// AutoCreateTopics creates unknown topics named in Metadata requests
	// that allow it (one partition, replication min(3, Brokers)).
	AutoCreateTopics bool
	// Coordinator is the id of the group coordinator (default 1).
	Coordinator int32
	// SASL, when set, makes every broker require SASL/PLAIN with this user.
	SASL *Plain
	// SASLMechanisms makes every broker require SASL and also offer these
	// mechanisms, by name: each connection that picks one runs a fresh
	// exchange from its function.
	SASLMechanisms map[string]func() SASLExchange
	// Now is the clock used for log append times (default time.Now).
	Now func() time.Time
}

// Plain is a SASL/PLAIN credential.
type Plain struct{ User, Password string }

// SASLExchange is the broker's side of one connection's SASL exchange: it
// gets each SaslAuthenticate token in turn and answers with the challenge
// to send back and whether the client is now authenticated. An error fails
// the authentication; its text is the response's error message.
type SASLExchange func(token []byte) (challenge []byte, done bool, err error)

// Cluster is a set of fake brokers sharing one model.
type Cluster struct {
	t       reporter
	cfg     Config
	brokers []*Broker

	mu          sync.Mutex
	selector    bool
	topics      map[string]*topic
	nextTopicID uint64
	serial      uint32 // of the cluster in the process, see createTopic
	groups      map[string]*group
	nextMember  int
}

// clusterSerial numbers the clusters of the process.
var clusterSerial atomic.Uint32

// reporter is where a cluster reports misuse of its helpers (Fatalf) and
// failures inside its brokers (Errorf): the test's testing.TB, or
// standalone for a cluster started by Start.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// NewCluster starts a cluster for the test t; t.Cleanup closes it. A helper
// used wrongly (CreateTopic of a topic that exists, a partition that does
// not) fails t with Fatalf.
func NewCluster(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	c, err := start(t, cfg)
	if err != nil {
		t.Fatalf("fakebroker: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Start starts a cluster outside a test (an Example, a program); the
// caller stops it with Close. Without a test to fail, a helper used wrongly
// panics and a failure inside a broker is logged with the log package.
func Start(cfg Config) (*Cluster, error) {
	return start(standalone{}, cfg)
}

func start(t reporter, cfg Config) (*Cluster, error) {
	if cfg.Brokers <= 0 {
		cfg.Brokers = 1
	}
	if cfg.ClusterID == "" {
		cfg.ClusterID = "fake-cluster"
	}
	if cfg.Coordinator == 0 {
		cfg.Coordinator = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Cluster{
		t:        t,
		cfg:      cfg,
		selector: cfg.RackAwareSelector,
		topics:   map[string]*topic{},
		groups:   map[string]*group{},
		serial:   clusterSerial.Add(1),
	}
	for i := 0; i < cfg.Brokers; i++ {
		rack := ""
		if i < len(cfg.Racks) {
			rack = cfg.Racks[i]
		}
		b, err := newBroker(c, int32(i+1), rack)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("starting broker %d: %w", i+1, err)
		}
		c.brokers = append(c.brokers, b)
	}
	return c, nil
}

// standalone reports for a cluster without a test.
type standalone struct{}

func (standalone) Helper() {}

func (standalone) Errorf(format string, args ...any) { log.Printf(format, args...) }

func (standalone) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// Close stops every broker.
func (c *Cluster) Close() {
	for _, b := range c.brokers {
		b.Stop()
	}
}

// Brokers returns the brokers, ordered by id.
func (c *Cluster) Brokers() []*Broker { return append([]*Broker(nil), c.brokers...) }

// Broker returns the broker with the given id, or nil.
func (c *Cluster) Broker(id int32) *Broker {
	if id < 1 || int(id) > len(c.brokers) {
		return nil
	}
	return c.brokers[id-1]
}

// Addrs returns host:port of every broker, for bootstrapping a client.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.brokers))
	for i, b := range c.brokers {
		addrs[i] = b.Addr()
	}
	return addrs
}

// SetRackAwareSelector turns the leaders' preferred read replica choice on
// or off.
func (c *Cluster) SetRackAwareSelector(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.selector = on
}

// SetClusterID changes the cluster ID Metadata answers carry, as if the
// cluster behind the same addresses had been formatted afresh.
func (c *Cluster) SetClusterID(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg.ClusterID = id
}

// fatalf reports a misuse of a test helper.
func (c *Cluster) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("fakebroker: "+format, args...)
}

func (c *Cluster) String() string { return fmt.Sprintf("fakebroker.Cluster%v", c.Addrs()) }
