package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// cluster is the shared view of a Kafka cluster used by Reader, Writer and
// ConsumerGroup: bootstrap addresses, a metadata cache, and one control
// connection per broker (metadata, offsets, commits; fetches and produces of
// the data path use connections of their own so a long poll never blocks a
// commit).
//
// Metadata is monotonic per partition: an answer carrying an older leader
// epoch than one already seen (a lagging broker) does not replace it.
type cluster struct {
	dialer    *Dialer
	bootstrap []string

	mu         sync.Mutex
	brokers    map[int]Broker
	partitions map[topicPartition]Partition
	topics     map[string][]int // partition ids per topic, sorted
	conns      map[int]*Conn    // control connections by broker id
	boot       *Conn            // control connection to a bootstrap address
	refreshed  time.Time
	closed     bool
}

type topicPartition struct {
	topic     string
	partition int
}

func (tp topicPartition) String() string { return tp.topic + "/" + strconv.Itoa(tp.partition) }

var errClusterClosed = errors.New("kafka: client closed")

func newCluster(dialer *Dialer, bootstrap []string) *cluster {
	if dialer == nil {
		dialer = DefaultDialer
	}
	return &cluster{
		dialer:     dialer,
		bootstrap:  bootstrap,
		brokers:    map[int]Broker{},
		partitions: map[topicPartition]Partition{},
		topics:     map[string][]int{},
		conns:      map[int]*Conn{},
	}
}

// refresh reads metadata for topics (all topics when none are given) from
// any reachable broker and merges it into the cache.
func (cl *cluster) refresh(ctx context.Context, topics ...string) error {
	if topics == nil {
		topics = []string{} // brokers only; callers name the topics they need
	}
	err := cl.withControl(ctx, func(c *Conn) error {
		md, err := c.metadata(ctx, topics)
		if err == nil {
			cl.merge(md.Brokers, md.Topics)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("refreshing metadata for %v: %w", topics, err)
	}
	return nil
}

// withControl runs fn on a control connection to any broker. Control
// connections are shared, and a request abandoned by another caller's
// cancelled context closes the connection under everyone using it; so a
// failure of the connection itself (not a Kafka error, not this caller's
// context) drops it and fn runs again on a fresh one, a few times.
func (cl *cluster) withControl(ctx context.Context, fn func(*Conn) error) error {
	var lastErr error
	for round := 0; round < 4; round++ {
		cands := cl.controlCandidates(ctx)
		if len(cands) == 0 {
			break
		}
		c := cands[0]
		err := fn(c)
		if err == nil {
			return nil
		}
		lastErr = err
		var kerr Error
		var uv *protocol.UnsupportedVersionError
		if ctx.Err() != nil || errors.As(err, &kerr) || errors.As(err, &uv) {
			return err // not the connection's fault: another one would not help
		}
		cl.dropConn(c)
	}
	if lastErr == nil {
		if lastErr = ctx.Err(); lastErr == nil {
			lastErr = fmt.Errorf("no broker reachable among %v", cl.bootstrap)
		}
	}
	return lastErr
}

// controlCandidates returns connections to try for a metadata request: the
// known brokers' control connections first, then a bootstrap address.
func (cl *cluster) controlCandidates(ctx context.Context) []*Conn {
	cl.mu.Lock()
	ids := make([]int, 0, len(cl.brokers))
	for id := range cl.brokers {
		ids = append(ids, id)
	}
	cl.mu.Unlock()
	var out []*Conn
	for _, id := range ids {
		if c, err := cl.conn(ctx, id); err == nil {
			out = append(out, c)
			break // one live broker is enough; others are tried on failure
		}
	}
	if len(out) == 0 {
		if c, err := cl.bootConn(ctx); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// bootConn returns a connection to the first reachable bootstrap address.
func (cl *cluster) bootConn(ctx context.Context) (*Conn, error) {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil, errClusterClosed
	}
	if c := cl.boot; c != nil && !c.isBroken() {
		cl.mu.Unlock()
		return c, nil
	}
	cl.mu.Unlock()
	var lastErr error
	for _, addr := range cl.bootstrap {
		c, err := cl.dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			lastErr = err
			continue
		}
		cl.mu.Lock()
		if cl.boot != nil {
			cl.boot.Close()
		}
		cl.boot = c
		cl.mu.Unlock()
		return c, nil
	}
	if lastErr == nil {
		lastErr = errors.New("no bootstrap address configured")
	}
	return nil, lastErr
}

// merge folds a metadata answer into the cache, keeping per partition the
// entry with the newest leader epoch.
func (cl *cluster) merge(brokers []protocol.MetadataResponseBroker, topics []protocol.MetadataResponseTopic) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for _, b := range brokers {
		cl.brokers[int(b.NodeID)] = makeBroker(b)
	}
	md := &protocol.MetadataResponse{Brokers: brokers}
	for i := range topics {
		t := &topics[i]
		if t.ErrorCode != 0 {
			continue
		}
		ids := make([]int, 0, len(t.Partitions))
		for _, p := range makePartitions(md, t) {
			tp := topicPartition{p.Topic, p.ID}
			if old, ok := cl.partitions[tp]; ok && old.LeaderEpoch > p.LeaderEpoch && p.LeaderEpoch >= 0 {
				p = old // a stale answer: keep what newer metadata said
			}
			cl.partitions[tp] = p
			ids = append(ids, p.ID)
		}
		cl.topics[t.Name] = ids
	}
	cl.refreshed = time.Now()
}

// partition returns the cached metadata of one partition.
func (cl *cluster) partition(topic string, id int) (Partition, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	p, ok := cl.partitions[topicPartition{topic, id}]
	return p, ok
}

// topicPartitions returns the cached partitions of topic, in id order.
func (cl *cluster) topicPartitions(topic string) ([]Partition, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	ids, ok := cl.topics[topic]
	if !ok {
		return nil, false
	}
	out := make([]Partition, 0, len(ids))
	for _, id := range ids {
		out = append(out, cl.partitions[topicPartition{topic, id}])
	}
	return out, true
}

// broker returns a cached broker.
func (cl *cluster) broker(id int) (Broker, bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	b, ok := cl.brokers[id]
	return b, ok
}

// conn returns the control connection to broker id, dialing it if needed.
func (cl *cluster) conn(ctx context.Context, id int) (*Conn, error) {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil, errClusterClosed
	}
	if c := cl.conns[id]; c != nil && !c.isBroken() {
		cl.mu.Unlock()
		return c, nil
	}
	b, ok := cl.brokers[id]
	cl.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("broker %d is not in the cluster metadata", id)
	}
	c, err := cl.dialer.connect(ctx, "tcp", net.JoinHostPort(b.Host, strconv.Itoa(b.Port)), ConnConfig{Broker: b.ID, Rack: b.Rack})
	if err != nil {
		return nil, err
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.closed {
		c.Close()
		return nil, errClusterClosed
	}
	if old := cl.conns[id]; old != nil {
		old.Close()
	}
	cl.conns[id] = c
	return c, nil
}

// dropConn closes a control connection after a failure so the next use
// redials.
func (cl *cluster) dropConn(c *Conn) {
	cl.mu.Lock()
	for id, x := range cl.conns {
		if x == c {
			delete(cl.conns, id)
		}
	}
	if cl.boot == c {
		cl.boot = nil
	}
	cl.mu.Unlock()
	c.Close()
}

// leaderConn returns the control connection to a partition's leader,
// refreshing metadata when the partition is unknown.
func (cl *cluster) leaderConn(ctx context.Context, topic string, partition int) (*Conn, Partition, error) {
	p, ok := cl.partition(topic, partition)
	if !ok || p.Leader.ID < 0 {
		if err := cl.refresh(ctx, topic); err != nil {
			return nil, Partition{}, err
		}
		if p, ok = cl.partition(topic, partition); !ok {
			return nil, Partition{}, fmt.Errorf("looking up %s/%d: %w", topic, partition, UnknownTopicOrPartition)
		}
	}
	if p.Leader.ID < 0 {
		return nil, p, fmt.Errorf("looking up the leader of %s/%d: %w", topic, partition, LeaderNotAvailable)
	}
	c, err := cl.conn(ctx, p.Leader.ID)
	return c, p, err
}

// dialData opens a data-path connection to broker b bound to partition p.
func (cl *cluster) dialData(ctx context.Context, b Broker, p Partition) (*Conn, error) {
	return cl.dialer.dialBroker(ctx, "tcp", b, p)
}

// close closes every control connection.
func (cl *cluster) close() {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.closed = true
	for id, c := range cl.conns {
		c.Close()
		delete(cl.conns, id)
	}
	if cl.boot != nil {
		cl.boot.Close()
		cl.boot = nil
	}
}
