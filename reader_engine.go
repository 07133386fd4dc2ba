package kafka

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/sasl"
)

// Partition-mode Readers share fetch engines: kafka-go programs often run
// one Reader per partition, and with an engine each, 300 Readers held 300
// data connections and sent 300 single-partition fetches where one
// multi-partition fetch per broker does (bench/RESULTS.md). Readers with
// the same Dialer, bootstrap list and fetch settings (engineKey) share
// one: per broker one connection and one request for all their partitions,
// and one cluster view with its control connections.
// A group Reader has its own: it already reads all its partitions through
// it.

// engineKey is what a shared engine's requests and connections depend on.
type engineKey struct {
	dialer      dialerIdentity
	brokers     string
	minBytes    int
	maxBuffered int
	isolation   IsolationLevel
	maxWait     time.Duration
	followerLag time.Duration
	rack        string
}

func engineKeyOf(c *ReaderConfig) engineKey {
	d := c.Dialer
	if d == nil {
		d = DefaultDialer
	}
	return engineKey{dialerIdentityOf(d), strings.Join(c.Brokers, ","), c.MinBytes, c.MaxBufferedBytes, c.IsolationLevel,
		c.MaxWait, c.MaxFollowerLag, c.Rack}
}

// engineShare is one shared engine and the Readers using it.
type engineShare struct {
	key     engineKey
	engine  *fetchengine.Engine
	cluster *cluster // the Readers' metadata and control connections
	addrs   brokerAddrs
	rt      *consumerRuntime // the Readers' background work (reader_runtime.go)
	rack    rackCheck        // the Readers' rack check (reader_runtime.go)
	reads   readMeter        // what the Readers fetch, for the probes' path check (cooldown.go)

	mu      sync.Mutex
	readers map[uint64]*Reader // by owner number
}

var engineShares = struct {
	mu sync.Mutex
	m  map[engineKey]*engineShare
}{m: map[engineKey]*engineShare{}}

// engineOwners numbers the Readers of a shared engine (fetchengine.Want.Owner).
var engineOwners atomic.Uint64

// newEngineShare starts an engine for Readers with r's settings, reading
// through cl.
func newEngineShare(r *Reader, cl *cluster) *engineShare {
	s := &engineShare{key: engineKeyOf(&r.config), cluster: cl, readers: map[uint64]*Reader{}}
	cfg := r.config // a copy: the engine may outlive r
	s.rt = newConsumerRuntime(s, &cfg)
	s.engine = fetchengine.New(fetchengine.Config{
		Dial:           s.dial,
		MinBytes:       int32(cfg.MinBytes),
		IsolationLevel: int8(cfg.IsolationLevel),
		MaxWait: func(w fetchengine.Want) time.Duration {
			return engineMaxWait(&cfg, w, func() bool { return s.rt.Quiet(topicPartition{w.Topic, int(w.Partition)}) })
		},
		IdleTimeout: engineIdleTimeout(cfg.Dialer),
		Budget:      int64(cfg.MaxBufferedBytes),
		Buffered:    s.buffered,
		Shared:      readersBudget,
		ErrorCode:   func(code int16) error { return Error(code) },
		KeepEpoch:   s.rt.KeepEpoch,
	})
	return s
}

// joinEngine gives r its engine and cluster view: a group Reader its own,
// a partition-mode Reader the shared one of its settings, started for the
// first one.
func (r *Reader) joinEngine() {
	var s *engineShare
	if r.useConsumerGroup() {
		s = newEngineShare(r, newCluster(r.config.Dialer, r.config.Brokers))
	} else {
		k := engineKeyOf(&r.config)
		engineShares.mu.Lock()
		defer engineShares.mu.Unlock()
		if s = engineShares.m[k]; s == nil {
			s = newEngineShare(r, newCluster(r.config.Dialer, r.config.Brokers))
			engineShares.m[k] = s
		}
	}
	r.share, r.engine, r.addrs, r.cluster = s, s.engine, &s.addrs, s.cluster
	r.cooldown, r.rack = s.rt.Cooldowns(), &s.rack
	r.owner = engineOwners.Add(1)
	s.mu.Lock()
	s.readers[r.owner] = r
	s.mu.Unlock()
	s.rt.RoutesChanged()
}

// leaveEngine takes r off its engine, stopping it and its runtime after the
// last Reader. r's fetchers have stopped.
func (r *Reader) leaveEngine() {
	s := r.share
	engineShares.mu.Lock()
	defer engineShares.mu.Unlock()
	s.mu.Lock()
	delete(s.readers, r.owner)
	last := len(s.readers) == 0
	s.mu.Unlock()
	s.rt.RoutesChanged()
	if !last {
		return
	}
	if engineShares.m[s.key] == s {
		delete(engineShares.m, s.key)
	}
	s.rt.Close()
	s.engine.Close()
	s.cluster.close()
}

// members returns the Readers using s now.
func (s *engineShare) members() []*Reader {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := make([]*Reader, 0, len(s.readers))
	for _, r := range s.readers {
		rs = append(rs, r)
	}
	return rs
}

// anyMember returns a Reader using s, nil when none does.
func (s *engineShare) anyMember() *Reader {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.readers {
		return r
	}
	return nil
}

// buffered is what the Reader numbered owner holds.
func (s *engineShare) buffered(owner uint64) int64 {
	s.mu.Lock()
	r := s.readers[owner]
	s.mu.Unlock()
	if r == nil {
		return 0
	}
	return r.queue.bufferedBytes()
}

// dial opens the shared engine's connection to broker id; every Reader of
// s counts it, the share's rack check checks its rack support.
func (s *engineShare) dial(ctx context.Context, id int) (fetchengine.Conn, error) {
	b, ok := s.brokerAddr(id)
	if !ok {
		return nil, fmt.Errorf("dialing broker %d: it is not among the brokers the metadata lists: %w", id, BrokerNotAvailable)
	}
	t0 := time.Now()
	c, err := s.cluster.dialer.dialBroker(ctx, "tcp", b, Partition{})
	took := time.Since(t0)
	rs := s.members()
	for _, r := range rs {
		r.stats.dials.observe(1)
		r.stats.dialTime.observeDuration(took)
	}
	if err != nil {
		return nil, err
	}
	s.rackDialed(id, c)
	return engineConn{c}, nil
}

// brokerAddr returns where broker id listens: as metadata says, else as
// a fetcher last saw it.
func (s *engineShare) brokerAddr(id int) (Broker, bool) {
	b, ok := s.cluster.broker(id)
	if v, known := s.addrs.m.Load(id); known && (!ok || b.Host == "") {
		b, ok = v.(Broker), true
	}
	return b, ok
}

// engineIdleTimeouts holds, for tests, how soon the engines of a Dialer
// close a data connection nothing was fetched on (*Dialer → time.Duration;
// the engine's default of 2 minutes otherwise).
var engineIdleTimeouts sync.Map

func engineIdleTimeout(d *Dialer) time.Duration {
	if v, ok := engineIdleTimeouts.Load(d); ok {
		return v.(time.Duration)
	}
	return 0
}

// dialerIdentity tells when two Dialers dial the same way, so that the
// Readers given them may share a fetch engine. Programs often build a
// Dialer per Reader (a fresh &kafka.Dialer{...} in each config): compared
// by pointer, each such Reader got an engine, connections and
// single-partition fetches of its own where equal settings need one engine.
//
// Settings compare by value where that is safe: strings, durations, and
// the TLS config, resolver, local address and SASL mechanism by what the
// interface or pointer holds (two scram mechanisms made apart differ; two
// plain ones with the same credentials do not). A DialFunc cannot be
// compared (closures with one code pointer may capture different
// proxies), nor can an interface holding an uncomparable value: such a
// Dialer is then only itself (as is one a test gave its own idle timeout).
type dialerIdentity struct {
	only  *Dialer // set when the settings cannot be compared
	value dialerSettings
}

type dialerSettings struct {
	clientID, transactionalID, rackID string
	timeout, fallbackDelay, keepAlive time.Duration
	deadline                          time.Time
	dualStack                         bool
	localAddr                         net.Addr
	resolver                          Resolver
	tls                               *tls.Config
	sasl                              sasl.Mechanism
}

func dialerIdentityOf(d *Dialer) dialerIdentity {
	if _, test := engineIdleTimeouts.Load(d); test || d.DialFunc != nil || !comparableValue(d.LocalAddr) || !comparableValue(d.Resolver) || !comparableValue(d.SASLMechanism) {
		return dialerIdentity{only: d}
	}
	return dialerIdentity{value: dialerSettings{
		clientID: d.ClientID, transactionalID: d.TransactionalID, rackID: d.RackID,
		timeout: d.Timeout, fallbackDelay: d.FallbackDelay, keepAlive: d.KeepAlive,
		deadline: d.Deadline, dualStack: d.DualStack,
		localAddr: d.LocalAddr, resolver: d.Resolver, tls: d.TLS, sasl: d.SASLMechanism,
	}}
}

// comparableValue reports whether v can be compared with == without a
// panic (what it holds, interfaces inside included).
func comparableValue(v any) bool {
	return v == nil || reflect.ValueOf(v).Comparable()
}

// The Reader's fetches go through one fetch engine (internal/fetchengine):
// per broker one data connection and one loop, each Fetch request carrying
// every partition the Reader reads from that broker at the moment. This
// file connects the engine to the Reader's connections and settings.

// defaultReaderMaxBufferedBytes is the default of
// ReaderConfig.MaxBufferedBytes.
const defaultReaderMaxBufferedBytes = 192 << 20

// DefaultReaderBufferLimit is the default of SetReaderBufferLimit.
const DefaultReaderBufferLimit = 256 << 20

// readersBudget is shared by every Reader of the process.
var readersBudget = fetchengine.NewBudget(DefaultReaderBufferLimit)

// SetReaderBufferLimit bounds the bytes (keys and values) that all the
// Readers of the process together fetch ahead of their applications, on
// top of each Reader's MaxBufferedBytes: a program that runs one Reader per
// partition, as kafka-go programs often do, holds no more than this
// however many partitions it reads. The default is
// DefaultReaderBufferLimit (256 MiB); 0 removes the bound. A Reader that
// holds nothing may always fetch, so reading never stops.
func SetReaderBufferLimit(bytes int) {
	readersBudget.SetLimit(int64(max(bytes, 0)))
}

// brokerAddrs remembers the address of every broker a fetcher asked the
// engine to fetch from (the cluster's list may not have caught up yet).
type brokerAddrs struct{ m sync.Map }

func (a *brokerAddrs) put(b Broker) {
	if old, ok := a.m.Load(b.ID); !ok || old.(Broker) != b {
		a.m.Store(b.ID, b)
	}
}

// engineConn is a Conn as the engine uses it.
type engineConn struct{ c *Conn }

func (ec engineConn) Versions() (protocol.Versions, error) { return ec.c.apiVersions() }
func (ec engineConn) Broken() bool                         { return ec.c.isBroken() }
func (ec engineConn) Close() error                         { return ec.c.Close() }

func (ec engineConn) Fetch(ctx context.Context, req *protocol.FetchRequest, stallBy time.Time) (*protocol.FetchResponse, error) {
	vs, err := ec.c.apiVersions()
	if err != nil {
		return nil, err
	}
	v, err := vs.Pick(req, ec.c.fetchVersionLimit)
	if err != nil {
		return nil, err
	}
	if v >= 13 {
		for _, t := range req.Topics {
			if t.TopicID == ([16]byte{}) {
				v = 12 // a topic without a known id: name topics instead
				break
			}
		}
	}
	if !stallBy.IsZero() {
		ctx = withResponseStart(ctx, stallBy)
	}
	resp := new(protocol.FetchResponse)
	// The frame is never handed back (releaseBuffer): messages alias it.
	if _, err := ec.c.exchangeRetain(ctx, req, resp, v); err != nil {
		return nil, fmt.Errorf("fetching %d partitions from broker %d: %w", countPartitions(req), ec.c.broker, err)
	}
	return resp, nil
}

func countPartitions(req *protocol.FetchRequest) int {
	n := 0
	for _, t := range req.Topics {
		n += len(t.Partitions)
	}
	return n
}

// engineMaxWait returns the long poll of a fetch of w: MaxWait, and at
// most followerActivePoll at a follower while records flow to the
// partition. Whether they flow is what the lag check's sampling says when
// it runs (quiet: the leader's high watermark stays put,
// internal/consumer/pace.go), else what the follower said last (w.Drained:
// no records for the previous fetch).
func engineMaxWait(config *ReaderConfig, w fetchengine.Want, quiet func() bool) time.Duration {
	wait := config.MaxWait
	if !w.Follower {
		if w.StallTimeout > 0 && !w.Drained {
			// A leader with a stand-in (fetch.go) is polled as a follower
			// while records flow, so that a silent path to it shows
			// within the poll plus its stall timeout; with records there
			// it answers at once anyway.
			return min(wait, followerActivePoll)
		}
		return wait
	}
	if config.MaxFollowerLag > 0 {
		if quiet() {
			return wait
		}
		wait = min(wait, followerActivePoll)
		if config.Rack != "" {
			wait = min(wait, config.followerLagPoll())
		}
		return wait
	}
	if w.Drained {
		return wait
	}
	return min(wait, followerActivePoll)
}

// followerActivePoll bounds a follower's long poll while records flow to
// its partitions. A follower holds a fetch until records arrive or
// replica.fetch.wait.max.ms (500 ms by default) passes, so asking for
// 500 ms adds no request while records flow, and it bounds how long a
// silent path to the follower (a black hole, a frozen broker) goes
// unnoticed: the poll plus ReplicaStallTimeout, under 4 s with the
// defaults. It also keeps the lag check (internal/routing/lag.go), which
// runs between fetches, at the pace of the leader's samples. An idle
// partition's follower is long-polled for MaxWait.
const followerActivePoll = 500 * time.Millisecond

// clampInt32 bounds n to an int32.
func clampInt32(n int) int32 {
	return int32(min(max(n, 0), math.MaxInt32))
}
