package kafka_test

// Copies of integration/'s helpers (helpers_test.go, helpers_topics_test.go, conn_integration_test.go,
// reader_integration_test.go) for reader_engine_integration_test.go, which stays in the root package for the
// fetch engine's test hooks (rack_integration_helpers_test.go): the cluster gate (skipped without
// KAFKA_BROKERS, failed under CI), dialing, topics, and producing and reading v0..vn.

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
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
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
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
func dial(t *testing.T, d *kafka.Dialer, addr string) *kafka.Conn {
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
func dialController(t *testing.T, c *ktesting.Cluster) *kafka.Conn {
	t.Helper()
	conn := dial(t, newDialer(), c.Brokers[0])
	ctrl, err := conn.Controller()
	if err != nil {
		t.Fatalf("Controller: %v", err)
	}
	return dial(t, newDialer(), net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
}

// partitionsOn reads the partitions of topic as broker addr sees them.
func partitionsOn(addr, topic string) ([]kafka.Partition, error) {
	conn, err := newDialer().Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(itTimeout))
	return conn.ReadPartitions(topic)
}

// settled reports whether every partition has a live leader and its whole replica set in sync.
func settled(ps []kafka.Partition, want int) bool {
	if len(ps) != want {
		return false
	}
	for _, p := range ps {
		if p.Error != nil || p.Leader.ID < 0 || p.Leader.Host == "" || len(p.Isr) != len(p.Replicas) || len(p.Replicas) == 0 {
			return false
		}
	}
	return true
}

// createTopic creates a topic (RF 3 unless cfg assigns replicas), waits until every broker's metadata has
// all its partitions led and fully in sync, and deletes it at the end of the test.
func createTopic(t *testing.T, c *ktesting.Cluster, cfg kafka.TopicConfig) string {
	t.Helper()
	if cfg.Topic == "" {
		cfg.Topic = ktesting.UniqueTopic(t)
	}
	partitions := cfg.NumPartitions
	if len(cfg.ReplicaAssignments) > 0 {
		cfg.NumPartitions, cfg.ReplicationFactor = -1, -1
		partitions = len(cfg.ReplicaAssignments)
	} else {
		if partitions <= 0 {
			cfg.NumPartitions, partitions = 1, 1
		}
		cfg.ReplicationFactor = 3
	}
	if err := dialController(t, c).CreateTopics(cfg); err != nil {
		t.Fatalf("CreateTopics %s: %v", cfg.Topic, err)
	}
	t.Cleanup(func() {
		conn, err := newDialer().Dial("tcp", c.Brokers[0])
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(itTimeout))
		conn.DeleteTopics(cfg.Topic)
	})
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, fmt.Sprintf("topic %s settled on %s", cfg.Topic, addr), func() bool {
			ps, err := partitionsOn(addr, cfg.Topic)
			return err == nil && settled(ps, partitions)
		})
	}
	return cfg.Topic
}

func brokerIDs(bs []kafka.Broker) []int {
	ids := make([]int, len(bs))
	for i, b := range bs {
		ids[i] = b.ID
	}
	sort.Ints(ids)
	return ids
}

// rackTopic creates a one-partition topic led by the rack-a broker with followers in racks b and c, and
// writes n messages to it. It returns the topic and the partition as metadata describes it.
func rackTopic(t *testing.T, c *ktesting.Cluster, n int) (string, kafka.Partition, []kafka.Message) {
	t.Helper()
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	p, err := newDialer().LookupPartition(testContext(t, itTimeout), "tcp", c.Brokers[0], topic, 0)
	if err != nil {
		t.Fatalf("LookupPartition: %v", err)
	}
	if p.Leader.ID != a || p.Leader.Rack != "a" || len(p.Isr) != 3 {
		t.Fatalf("%s/0: leader %+v, ISR %v; want broker %d in rack a leading a full ISR", topic, p.Leader, brokerIDs(p.Isr), a)
	}
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
	}
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	if _, err := conn.WriteMessages(msgs...); err != nil { // acks=all: every replica has them
		t.Fatal(err)
	}
	return topic, p, msgs
}

// riProduce writes values v{from}..v{from+n-1} to topic/0 through its
// leader, in chunks, each with the time given by at (nil: now).
func riProduce(t *testing.T, c *ktesting.Cluster, topic string, from, n int, at func(i int) time.Time) {
	t.Helper()
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	defer conn.Close()
	for i := from; i < from+n; {
		var msgs []kafka.Message
		for ; i < from+n && len(msgs) < 200; i++ {
			m := kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
			if at != nil {
				m.Time = at(i)
			}
			msgs = append(msgs, m)
		}
		if _, err := conn.WriteMessages(msgs...); err != nil {
			t.Fatalf("producing to %s: %v", topic, err)
		}
	}
}

type riLogger struct {
	t      *testing.T
	mu     sync.Mutex
	lines  []string
	prefix string
}

func (l *riLogger) Printf(format string, args ...interface{}) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
	l.t.Logf("%s%s", l.prefix, s)
}

func riReader(t *testing.T, c *ktesting.Cluster, topic string, edit func(*kafka.ReaderConfig)) *kafka.Reader {
	cfg := kafka.ReaderConfig{
		Brokers:         c.Brokers,
		Topic:           topic,
		MaxWait:         500 * time.Millisecond,
		ReadBackoffMin:  50 * time.Millisecond,
		ReadBackoffMax:  500 * time.Millisecond,
		ReadLagInterval: -1,
		Dialer:          newDialer(),
		Logger:          &riLogger{t: t, prefix: "reader: "},
		ErrorLogger:     &riLogger{t: t, prefix: "reader error: "},
	}
	if edit != nil {
		edit(&cfg)
	}
	r := kafka.NewReader(cfg)
	t.Cleanup(func() { r.Close() })
	return r
}

// riExpect reads v{from}..v{from+n-1} at those offsets, exactly once and in
// order. Errors the reader returns (it retries by itself) are tolerated
// and counted.
func riExpect(t *testing.T, ctx context.Context, r *kafka.Reader, from, n int) (errs int) {
	t.Helper()
	for i := from; i < from+n; {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("waiting for offset %d: %v", i, err)
			}
			errs++
			t.Logf("FetchMessage at offset %d returned %v (the reader goes on)", i, err)
			continue
		}
		if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("v%d", i) || string(m.Key) != fmt.Sprintf("k%d", i) {
			t.Fatalf("got offset %d %q=%q, want offset %d k%d=v%d", m.Offset, m.Key, m.Value, i, i, i)
		}
		i++
	}
	return errs
}
