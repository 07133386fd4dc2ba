package kafka

// Helpers of the integration tests that stay in this package because they
// read its internals (the Reader's cluster view and fetch engine): bounded
// waits, topics created through the controller and settled on every broker,
// producing v{i} through the leader, and Readers with the quick timings of
// the tests. Those that need only the public API, and their helpers, are in
// integration/. Skipped without a cluster (ktesting.RequireRackCluster).

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	ktesting "github.com/rackfetch/kafka-go/testing"
)

// itTimeout bounds each dial and request of these tests' own connections.
const itTimeout = 10 * time.Second

// itEventually polls cond until it holds, failing the test when timeout
// passes first.
func itEventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		<-tick.C
	}
}

func itCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func itDialer() *Dialer { return &Dialer{ClientID: "kafka-go-itest", Timeout: itTimeout} }

// itDialController connects to the cluster's controller: ZooKeeper-based
// brokers (Kafka 2.x) take CreateTopics and DeleteTopics only there.
func itDialController(t *testing.T, c *ktesting.Cluster) *Conn {
	t.Helper()
	d := itDialer()
	conn, err := d.Dial("tcp", c.Brokers[0])
	if err != nil {
		t.Fatalf("dialing %s: %v", c.Brokers[0], err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(itTimeout))
	ctrl, err := conn.Controller()
	if err != nil {
		t.Fatalf("Controller: %v", err)
	}
	admin, err := d.Dial("tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		t.Fatalf("dialing the controller: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	admin.SetDeadline(time.Now().Add(45 * time.Second))
	return admin
}

// itPartitions reads the partitions of topic as broker addr sees them.
func itPartitions(addr, topic string) ([]Partition, error) {
	conn, err := itDialer().Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(itTimeout))
	return conn.ReadPartitions(topic)
}

// itTopic creates a topic (RF 3 unless cfg assigns replicas), waits until
// every broker's metadata has all its partitions led and fully in sync, and
// deletes it at the end of the test.
func itTopic(t *testing.T, c *ktesting.Cluster, cfg TopicConfig) string {
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
	if err := itDialController(t, c).CreateTopics(cfg); err != nil {
		t.Fatalf("CreateTopics %s: %v", cfg.Topic, err)
	}
	t.Cleanup(func() {
		conn, err := itDialer().Dial("tcp", c.Brokers[0])
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(itTimeout))
		conn.DeleteTopics(cfg.Topic)
	})
	for _, addr := range c.Brokers {
		itEventually(t, 30*time.Second, fmt.Sprintf("topic %s settled on %s", cfg.Topic, addr), func() bool {
			ps, err := itPartitions(addr, cfg.Topic)
			if err != nil || len(ps) != partitions {
				return false
			}
			for _, p := range ps {
				if p.Error != nil || p.Leader.ID < 0 || p.Leader.Host == "" || len(p.Isr) != len(p.Replicas) || len(p.Replicas) == 0 {
					return false
				}
			}
			return true
		})
	}
	return cfg.Topic
}

// itBrokerInRack is the id of the only broker in rack.
func itBrokerInRack(t *testing.T, c *ktesting.Cluster, rack string) int {
	t.Helper()
	ids := c.BrokersInRack(rack)
	if len(ids) != 1 {
		t.Fatalf("rack %q has brokers %v, want exactly one (KAFKA_RACKS=%v)", rack, ids, c.Racks)
	}
	return ids[0]
}

// itLeaders returns the leader of each partition of topic, as a live broker
// sees it.
func itLeaders(t *testing.T, c *ktesting.Cluster, topic string, partitions int) map[int]int {
	t.Helper()
	leaders := map[int]int{}
	itEventually(t, 30*time.Second, "leaders of "+topic, func() bool {
		for _, addr := range c.Brokers {
			ps, err := itPartitions(addr, topic)
			if err != nil || len(ps) != partitions {
				continue
			}
			for _, p := range ps {
				if p.Leader.ID < 0 {
					return false
				}
				leaders[p.ID] = p.Leader.ID
			}
			return true
		}
		return false
	})
	return leaders
}

// itRackTopic creates a one-partition topic led by the rack-a broker with
// followers in racks b and c, and writes k0=v0..k{n-1}=v{n-1} to it. It
// returns the topic and the partition as metadata describes it.
func itRackTopic(t *testing.T, c *ktesting.Cluster, n int) (string, Partition) {
	t.Helper()
	a, b, cc := itBrokerInRack(t, c, "a"), itBrokerInRack(t, c, "b"), itBrokerInRack(t, c, "c")
	topic := itTopic(t, c, TopicConfig{ReplicaAssignments: []ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	p, err := itDialer().LookupPartition(itCtx(t, itTimeout), "tcp", c.Brokers[0], topic, 0)
	if err != nil {
		t.Fatalf("LookupPartition: %v", err)
	}
	if p.Leader.ID != a || p.Leader.Rack != "a" || len(p.Isr) != 3 {
		t.Fatalf("%s/0: leader %+v, ISR %d replicas; want broker %d in rack a leading a full ISR", topic, p.Leader, len(p.Isr), a)
	}
	itProduce(t, c, topic, 0, n)
	return topic, p
}

// itProduce writes k{i}=v{i} for i in from..from+n-1 to topic/0 through its
// leader (acks=all).
func itProduce(t *testing.T, c *ktesting.Cluster, topic string, from, n int) {
	t.Helper()
	conn, err := itDialer().DialLeader(itCtx(t, itTimeout), "tcp", c.Brokers[0], topic, 0)
	if err != nil {
		t.Fatalf("dialing the leader of %s/0: %v", topic, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(45 * time.Second))
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{Key: []byte(fmt.Sprintf("k%d", from+i)), Value: []byte(fmt.Sprintf("v%d", from+i))}
	}
	if _, err := conn.WriteMessages(msgs...); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
}

type itLogger struct {
	t      *testing.T
	mu     sync.Mutex
	done   bool
	prefix string
}

func (l *itLogger) Printf(format string, args ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("%s%s", l.prefix, fmt.Sprintf(format, args...))
	}
}

// itReader is a Reader of topic with the quick timings of these tests,
// closed at the end of the test.
func itReader(t *testing.T, c *ktesting.Cluster, topic string, edit func(*ReaderConfig)) *Reader {
	logger, errs := &itLogger{t: t, prefix: "reader: "}, &itLogger{t: t, prefix: "reader error: "}
	cfg := ReaderConfig{
		Brokers:         c.Brokers,
		Topic:           topic,
		MaxWait:         500 * time.Millisecond,
		ReadBackoffMin:  50 * time.Millisecond,
		ReadBackoffMax:  500 * time.Millisecond,
		ReadLagInterval: -1,
		Dialer:          itDialer(),
		Logger:          logger,
		ErrorLogger:     errs,
	}
	if edit != nil {
		edit(&cfg)
	}
	r := NewReader(cfg)
	t.Cleanup(func() {
		r.Close()
		for _, l := range []*itLogger{logger, errs} {
			l.mu.Lock()
			l.done = true
			l.mu.Unlock()
		}
	})
	return r
}

// itExpect reads v{from}..v{from+n-1} at those offsets, exactly once and in
// order; errors the Reader returns (it retries by itself) are logged.
func itExpect(t *testing.T, ctx context.Context, r *Reader, from, n int) {
	t.Helper()
	for i := from; i < from+n; {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("waiting for offset %d: %v", i, err)
			}
			t.Logf("FetchMessage at offset %d returned %v (the reader goes on)", i, err)
			continue
		}
		if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("v%d", i) || string(m.Key) != fmt.Sprintf("k%d", i) {
			t.Fatalf("got offset %d %q=%q, want offset %d k%d=v%d", m.Offset, m.Key, m.Value, i, i, i)
		}
		i++
	}
}
