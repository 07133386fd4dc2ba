package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/protocol"
)

// cluster is the shared view of a Kafka cluster used by Reader, Writer and
// ConsumerGroup: bootstrap addresses, a metadata cache, and one control
// connection per broker (metadata, offsets, coordinator lookups; fetches and
// produces of the data path use connections of their own so a long poll
// never blocks a commit).
//
// Control requests run under a deadline of their own (controlTimeout, the
// dial, ApiVersions and SASL exchange included), whatever the caller's
// context: a Reader's fetchers call with contexts that never expire, and a
// frozen broker (SIGSTOP, a long pause) accepts TCP connections and never
// answers. A broker that lets the deadline pass, or that cannot be reached,
// is remembered as unresponsive for a while and tried last; a request any
// broker can answer moves on to the next broker at once (withControl),
// while a request only the leader can answer fails with RequestTimedOut so
// that the caller re-reads metadata and retries (atLeader).
//
// The metadata itself is a metadata.Cache shared by every cluster of the
// process with the same bootstrap addresses: Readers, Writers (through
// Transport), ConsumerGroups and Clients see one view, monotonic per topic
// incarnation (see metadata.Cache.Merge).
type cluster struct {
	meta *metadata.Cache

	dialer    *Dialer
	bootstrap []string
	timeout   time.Duration // of one control request, see controlTimeout

	connMu   sync.Mutex
	conns    map[int]*Conn         // control connections by broker id
	dialing  map[int]chan struct{} // dials in progress, by broker id (conn)
	boot     *Conn                 // control connection to a bootstrap address
	bootAddr string
	stalls   metadata.Stalls // brokers tried last, by address
	closed   bool
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
		meta:      metadata.Acquire(bootstrap),
		dialer:    dialer,
		bootstrap: bootstrap,
		timeout:   controlTimeout(dialer),
		conns:     map[int]*Conn{},
	}
}

// refresh reads metadata for topics (brokers only when none are given)
// from a responsive broker and merges it into the cache. Concurrent
// refreshes of the same topics, by any user of the cache, share one
// request.
func (cl *cluster) refresh(ctx context.Context, topics ...string) error {
	if topics == nil {
		topics = []string{} // brokers only; callers name the topics they need
	}
	if _, err := cl.read(ctx, topics, false, time.Time{}); err != nil {
		return fmt.Errorf("refreshing metadata for %v: %w", topics, err)
	}
	return nil
}

// read asks a responsive broker for the metadata of topics (nil: every
// topic), merges the answer into the cache and returns it. Concurrent
// reads of the same topics share one request (one sent at or after
// sentAfter: see metadata.Cache.Shared).
func (cl *cluster) read(ctx context.Context, topics []string, autoCreate bool, sentAfter time.Time) (*protocol.MetadataResponse, error) {
	ask := metadata.Ask{Who: credentials(cl.dialer), Topics: topics, AutoCreate: autoCreate, SentAfter: sentAfter}
	return cl.meta.Shared(ctx, ask, func(ctx context.Context) (*protocol.MetadataResponse, error) {
		var md *protocol.MetadataResponse
		err := cl.withControlCtx(ctx, func(ctx context.Context, c *Conn) error {
			resp, _, err := c.roundTrip(ctx, metadata.Request(topics, autoCreate), -1)
			if err == nil {
				md = resp.(*protocol.MetadataResponse)
			}
			return err
		})
		return md, err
	})
}

// close closes every control connection and gives back the cluster's
// reference to the metadata cache.
func (cl *cluster) close() {
	cl.connMu.Lock()
	defer cl.connMu.Unlock()
	if !cl.closed {
		cl.meta.Release()
	}
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

// The cluster's metadata is the process's one view of it, a
// metadata.Cache shared by every cluster with the same bootstrap
// addresses (see internal/metadata). These methods read it in the public
// types; none copies more than the cache itself hands out.

// The public Broker converts to and from metadata.Broker: the two have
// the same fields, which publicBrokers relies on.
var _ = Broker(metadata.Broker{})

// publicBrokers views brokers of the cache as public ones, without a copy
// (they share their memory, as the cache's Partition values always did).
func publicBrokers(bs []metadata.Broker) []Broker {
	if bs == nil {
		return nil
	}
	return unsafe.Slice((*Broker)(unsafe.Pointer(unsafe.SliceData(bs))), len(bs))
}

// publicPartition converts a partition of the cache without allocating.
func publicPartition(p metadata.Partition) Partition {
	return Partition{
		Topic:           p.Topic,
		ID:              p.ID,
		Leader:          Broker(p.Leader),
		Replicas:        publicBrokers(p.Replicas),
		Isr:             publicBrokers(p.Isr),
		OfflineReplicas: publicBrokers(p.OfflineReplicas),
		LeaderEpoch:     p.LeaderEpoch,
		Error:           errorFromCode(p.ErrorCode),
	}
}

// partition returns the cached metadata of one partition.
func (cl *cluster) partition(topic string, id int) (Partition, bool) {
	p, ok := cl.meta.Partition(topic, id)
	if !ok {
		return Partition{}, false
	}
	return publicPartition(p), true
}

// topicPartitions returns the cached partitions of topic, in id order.
func (cl *cluster) topicPartitions(topic string) ([]Partition, bool) {
	ps, ok := cl.meta.TopicPartitions(topic)
	if !ok {
		return nil, false
	}
	out := make([]Partition, len(ps))
	for i, p := range ps {
		out[i] = publicPartition(p)
	}
	return out, true
}

// broker returns a cached broker.
func (cl *cluster) broker(id int) (Broker, bool) {
	b, ok := cl.meta.Broker(id)
	return Broker(b), ok
}

// brokerList returns the cached brokers.
func (cl *cluster) brokerList() []Broker { return publicBrokers(cl.meta.Brokers()) }

// eachBroker calls fn with every cached broker, under the cache's lock: fn
// must not call the cache.
func (cl *cluster) eachBroker(fn func(Broker)) {
	cl.meta.EachBroker(func(b metadata.Broker) { fn(Broker(b)) })
}

// brokerRacks returns the rack of every broker seen in metadata.
func (cl *cluster) brokerRacks() map[int]string { return cl.meta.Racks() }

// listedBrokers returns the IDs of the brokers the latest Metadata answer
// listed (every broker the answering one knows alive).
func (cl *cluster) listedBrokers() []int { return cl.meta.Listed() }

// topicID returns the topic ID of topic's cached partitions and its
// generation (see metadata.Cache.TopicID).
func (cl *cluster) topicID(topic string) (id [16]byte, generation int) {
	return cl.meta.TopicID(topic)
}

// partitionCount returns how many partitions of topic the cache knows.
func (cl *cluster) partitionCount(topic string) (int, bool) { return cl.meta.PartitionCount(topic) }

// readAt reports when topic was last read (zero: never).
func (cl *cluster) readAt(topic string) time.Time { return cl.meta.ReadAt(topic) }

// mergeAnswer merges a Metadata answer read elsewhere into the cache.
func (cl *cluster) mergeAnswer(md *protocol.MetadataResponse) { cl.meta.MergeAnswer(md) }

// credentials names who connections dialed by d are (for metadata.Ask.Who):
// the SASL identity and the TLS settings. Two mechanism values print the
// same only when they hold the same settings; TLS settings are the same
// only as the same *tls.Config (a request over another TLS setup may fail
// where this one would not: a client must never get the error of another
// client's certificates or missing TLS). The string never leaves the
// process.
func credentials(d *Dialer) string {
	if d == nil {
		return ""
	}
	who := ""
	if d.SASLMechanism != nil {
		who = fmt.Sprintf("%T:%+v", d.SASLMechanism, d.SASLMechanism)
	}
	if d.TLS != nil {
		who += fmt.Sprintf("\x04tls:%p", d.TLS)
	}
	return who
}

// leader returns the cached metadata of a partition that has a leader,
// refreshing metadata when the partition is unknown or leaderless.
func (cl *cluster) leader(ctx context.Context, topic string, partition int) (Partition, error) {
	p, ok := cl.partition(topic, partition)
	if !ok || p.Leader.ID < 0 {
		if err := cl.refresh(ctx, topic); err != nil {
			return Partition{}, err
		}
		if p, ok = cl.partition(topic, partition); !ok {
			return Partition{}, fmt.Errorf("looking up %s/%d: %w", topic, partition, UnknownTopicOrPartition)
		}
	}
	leader, err := partitionLeader(p, cl.broker)
	if err != nil {
		return p, err
	}
	p.Leader = leader
	return p, nil
}

// transportCluster is what the clients of one cluster share: the control
// connections, and through them the process's metadata cache of the
// cluster (internal/metadata), which keeps when each topic was read. With
// a custom RoundTripper (rt set) the cache is filled through it and no
// connection is made here.
type transportCluster struct {
	t    *Transport // nil with a custom RoundTripper
	rt   RoundTripper
	addr net.Addr
	key  string
	refs int // guarded by t.mu

	cl     *cluster
	dialer *Dialer
	ttl    time.Duration
	extra  []string // MetadataTopics

	mu         sync.Mutex
	refreshing map[string]bool // background refreshes under way
	closed     bool            // stop was called: no refresh starts any more
	// bg counts the background refreshes; stopBg ends them (stop).
	bg     sync.WaitGroup
	bgCtx  context.Context
	stopBg context.CancelFunc
}

func newTransportCluster(t *Transport, addr net.Addr, rt RoundTripper) *transportCluster {
	tc := &transportCluster{
		t:          t,
		rt:         rt,
		addr:       addr,
		ttl:        6 * time.Second,
		refreshing: map[string]bool{},
	}
	tc.bgCtx, tc.stopBg = context.WithCancel(context.Background())
	if t != nil {
		tc.ttl = t.metadataTTL()
		tc.extra = t.MetadataTopics
		tc.dialer = t.newDialer(tc.lookupBroker)
	}
	tc.cl = newCluster(tc.dialer, splitAddr(addr))
	return tc
}

// lookupBroker names the broker listening at host:port, as far as the
// metadata knows (ID -1 for a bootstrap address).
func (tc *transportCluster) lookupBroker(host string, port int) Broker {
	if b, ok := tc.cl.meta.BrokerAt(host, port); ok {
		return Broker(b)
	}
	return Broker{Host: host, Port: port, ID: -1}
}

// stop ends the background refreshes and waits for them: the last client
// of the cluster state closes it, and none of its goroutines outlives it.
func (tc *transportCluster) stop() {
	tc.mu.Lock()
	tc.closed = true
	tc.mu.Unlock()
	tc.stopBg()
	tc.bg.Wait()
}

func (tc *transportCluster) context() context.Context {
	if tc.t != nil {
		return tc.t.context()
	}
	return context.Background()
}

// partitionCount returns the number of partitions of topic, reading
// metadata when the topic is unknown and refreshing it in the background
// when it is older than the TTL. With autoCreate the brokers may create
// the topic; the first answers can then lack it or its leaders, which is
// retried up to attempts times.
func (tc *transportCluster) partitionCount(ctx context.Context, topic string, autoCreate bool, attempts int, bmin, bmax time.Duration, timeout time.Duration) (int, error) {
	n, ok := tc.cl.partitionCount(topic)
	if ok {
		tc.refreshOlderThan(topic, tc.ttl, timeout)
		return n, nil
	}
	var err error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 && !retry.Sleep(ctx, retry.Backoff(attempt, bmin, bmax)) {
			return 0, fmt.Errorf("looking up the partitions of %q: %w (last error: %w)", topic, ctx.Err(), err)
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		err = tc.refreshSince(rctx, topic, time.Now(), autoCreate)
		cancel()
		if n, ok = tc.cl.partitionCount(topic); ok {
			return n, nil
		}
		if err == nil {
			err = UnknownTopicOrPartition
		}
		// An unknown topic is final unless the brokers are creating it.
		if !(isTemporary(err) && (autoCreate || !errors.Is(err, UnknownTopicOrPartition))) {
			break
		}
	}
	return 0, fmt.Errorf("looking up the partitions of %q: %w", topic, err)
}

// refreshOlderThan reads the metadata of a known topic in the background
// when it is older than age, unless a read of it is already under way.
func (tc *transportCluster) refreshOlderThan(topic string, age, timeout time.Duration) {
	tc.mu.Lock()
	stale := time.Since(tc.cl.readAt(topic)) > age && !tc.refreshing[topic] && !tc.closed
	if stale {
		tc.refreshing[topic] = true
		tc.bg.Add(1)
	}
	tc.mu.Unlock()
	if !stale {
		return
	}
	go func() {
		defer tc.bg.Done()
		ctx, cancel := context.WithTimeout(tc.context(), timeout)
		defer cancel()
		defer context.AfterFunc(tc.bgCtx, cancel)()
		tc.refreshSince(ctx, topic, time.Now(), false)
		tc.mu.Lock()
		delete(tc.refreshing, topic)
		tc.mu.Unlock()
	}()
}

// refreshSince reads the metadata of topic unless it was read after since
// (by any user of the cache), and returns the topic's error if it has one.
func (tc *transportCluster) refreshSince(ctx context.Context, topic string, since time.Time, autoCreate bool) error {
	if tc.cl.readAt(topic).After(since) && !autoCreate {
		return nil
	}
	topics := []string{topic}
	for _, t := range tc.extra {
		if t != topic {
			topics = append(topics, t)
		}
	}
	md, err := tc.read(ctx, topics, autoCreate, time.Time{})
	if err != nil {
		return fmt.Errorf("reading metadata of %v: %w", topics, err)
	}
	for i := range md.Topics {
		if t := &md.Topics[i]; t.Name == topic && t.ErrorCode != 0 {
			return Error(t.ErrorCode)
		}
	}
	return nil
}

// read asks for the metadata of topics (nil: every topic) and merges it
// into the cache: on a control connection, or through the RoundTripper.
// Concurrent reads of the same topics share one request (one sent at or
// after sentAfter: see metadata.Cache.Shared).
func (tc *transportCluster) read(ctx context.Context, topics []string, autoCreate bool, sentAfter time.Time) (*protocol.MetadataResponse, error) {
	if tc.rt == nil {
		return tc.cl.read(ctx, topics, autoCreate, sentAfter)
	}
	ask := metadata.Ask{Who: tc.credentials(), Topics: topics, AutoCreate: autoCreate, SentAfter: sentAfter}
	return tc.cl.meta.Shared(ctx, ask, func(ctx context.Context) (*protocol.MetadataResponse, error) {
		resp, err := tc.controlRoundTrip(ctx, metadata.Request(topics, autoCreate))
		if err != nil {
			return nil, err
		}
		return resp.(*protocol.MetadataResponse), nil
	})
}

// credentials names who the RoundTripper's requests are sent as (see
// metadata.Ask.Who): a Transport's SASL and TLS settings; a RoundTripper of
// the program's own shares no request.
func (tc *transportCluster) credentials() string {
	t, ok := tc.rt.(*Transport)
	if !ok {
		return fmt.Sprintf("roundtripper %p", tc)
	}
	if t.dialer != nil {
		return credentials(t.dialer)
	}
	return credentials(&Dialer{SASLMechanism: t.SASL, TLS: t.TLS})
}

// initProducerID asks a broker for a producer id and epoch, for idempotent
// produce.
func (tc *transportCluster) initProducerID(ctx context.Context) (*protocol.InitProducerIdResponse, error) {
	resp, err := tc.controlRoundTrip(ctx, &protocol.InitProducerIdRequest{ProducerID: -1, ProducerEpoch: -1})
	if err != nil {
		return nil, fmt.Errorf("asking for a producer id: %w", err)
	}
	r := resp.(*protocol.InitProducerIdResponse)
	if r.ErrorCode != 0 {
		return nil, fmt.Errorf("asking for a producer id: %w", Error(r.ErrorCode))
	}
	return r, nil
}

// controlRoundTrip sends a request that any broker can answer: on a
// control connection of the cluster (another broker when one fails), or
// through the RoundTripper to Addr.
func (tc *transportCluster) controlRoundTrip(ctx context.Context, req protocol.Request) (protocol.Response, error) {
	if tc.rt != nil {
		resp, err := tc.rt.RoundTrip(ctx, tc.addr, req)
		if err != nil {
			return nil, err
		}
		if resp == nil || resp.Key() != req.Key() {
			return nil, fmt.Errorf("the RoundTripper answered %s with %T", req.Key(), resp)
		}
		return resp, nil
	}
	var resp protocol.Response
	err := tc.cl.withControl(ctx, func(c *Conn) error {
		var err error
		resp, _, err = c.roundTrip(ctx, req, -1)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// leader returns the broker leading a partition, as cached.
func (tc *transportCluster) leader(topic string, partition int) (Broker, error) {
	p, ok := tc.cl.partition(topic, partition)
	if !ok {
		return Broker{}, fmt.Errorf("%s/%d: %w", topic, partition, UnknownTopicOrPartition)
	}
	return partitionLeader(p, tc.cl.broker)
}

// dialProduce opens a produce connection to broker b.
func (tc *transportCluster) dialProduce(ctx context.Context, b Broker) (*Conn, error) {
	return tc.dialer.connect(ctx, "tcp", net.JoinHostPort(b.Host, strconv.Itoa(b.Port)), ConnConfig{Broker: b.ID, Rack: b.Rack})
}
