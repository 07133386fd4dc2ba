package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/metadata"
	"github.com/rackfetch/kafka-go/protocol"
)

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
	tc.mu.Lock()
	stale := ok && time.Since(tc.cl.readAt(topic)) > tc.ttl && !tc.refreshing[topic] && !tc.closed
	if stale {
		tc.refreshing[topic] = true
		tc.bg.Add(1)
	}
	tc.mu.Unlock()
	if stale {
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
	if ok {
		return n, nil
	}
	var err error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 && !sleep(ctx, backoff(attempt, bmin, bmax)) {
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
