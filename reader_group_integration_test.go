package kafka

// Acceptance tests of the Reader's group mode on the real 3-rack cluster
// (testing/cluster/kafka-cluster): three members sharing six partitions
// while a producer writes, a member leaving without committing, a member
// crashing, the takeover time, and a new member resuming at the committed
// offsets; ReadMessage's synchronous and periodic commits. The helpers
// (prefix rgi) are shared with reader_failures_integration_test.go.
// Skipped without a cluster (see ktesting).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// Group timings of these tests: the brokers' minimum session timeout
// (group.min.session.timeout.ms), heartbeats every second.
const (
	rgiSession   = 6 * time.Second
	rgiHeartbeat = time.Second
	// rgiMargin is what a takeover may take beyond the session timeout:
	// a heartbeat interval to notice the rebalance, the join and sync
	// round, the offset fetch and the first fetch (MaxWait 500 ms).
	rgiMargin = 4 * time.Second
	// rgiReadMargin is what reading each partition taken over may take
	// once owned: the survivor works through the backlog of all its
	// partitions with a commit per message.
	rgiReadMargin = 3 * time.Second
)

func rgiCluster(t *testing.T) *ktesting.Cluster {
	t.Helper()
	c := ktesting.RequireCluster(t)
	if len(c.BrokerIDs) != 3 {
		msg := fmt.Sprintf("these tests need the 3-broker cluster (KAFKA_BROKER_IDS=%v)", c.BrokerIDs)
		if ktesting.Required() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return c
}

func rgiEventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
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

func rgiCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// rgiTopic creates a topic with RF 3 and waits until every broker knows a
// leader and a full ISR for each partition; it is deleted at the end.
func rgiTopic(t *testing.T, c *ktesting.Cluster, partitions int) string {
	t.Helper()
	topic := ktesting.UniqueTopic(t)
	d := &Dialer{ClientID: "kafka-go-rg-itest", Timeout: 10 * time.Second}
	conn, err := itestDialController(d, c.Brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	err = conn.CreateTopics(TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 3})
	conn.Close()
	if err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	t.Cleanup(func() {
		if conn, err := itestDialController(d, c.Brokers[0]); err == nil {
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			conn.DeleteTopics(topic)
			conn.Close()
		}
	})
	for _, addr := range c.Brokers {
		rgiEventually(t, 30*time.Second, "topic "+topic+" settled on "+addr, func() bool {
			conn, err := d.Dial("tcp", addr)
			if err != nil {
				return false
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			ps, err := conn.ReadPartitions(topic)
			if err != nil || len(ps) != partitions {
				return false
			}
			for _, p := range ps {
				if p.Leader.ID < 0 || p.Leader.Host == "" || len(p.Isr) != 3 {
					return false
				}
			}
			return true
		})
	}
	return topic
}

// rgiProducer writes messages "p{partition}-{seq}" through each partition's
// leader, redialing after errors.
type rgiProducer struct {
	t       *testing.T
	brokers []string
	topic   string
	conns   map[int]*Conn
	seq     map[int]int
	boot    int // bootstrap broker of the next leader lookup: moves on after failures

	stop chan struct{}
	done chan struct{}
	errs atomic.Int64
}

func newRgiProducer(t *testing.T, c *ktesting.Cluster, topic string) *rgiProducer {
	p := &rgiProducer{t: t, brokers: c.Brokers, topic: topic, conns: map[int]*Conn{}, seq: map[int]int{}}
	t.Cleanup(p.close)
	return p
}

func (p *rgiProducer) close() {
	if p.stop != nil {
		p.stopBackground()
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = map[int]*Conn{}
}

// send writes n messages to partition part once.
func (p *rgiProducer) send(part, n int) error {
	conn := p.conns[part]
	if conn == nil {
		d := &Dialer{ClientID: "kafka-go-rg-producer", Timeout: 5 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := d.DialLeader(ctx, "tcp", p.brokers[p.boot%len(p.brokers)], p.topic, part)
		cancel()
		if err != nil {
			p.boot++
			return err
		}
		p.conns[part], conn = c, c
	}
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i].Value = []byte(fmt.Sprintf("p%d-%d", part, p.seq[part]+i))
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.WriteMessages(msgs...); err != nil {
		conn.Close()
		delete(p.conns, part)
		return err
	}
	p.seq[part] += n
	return nil
}

// produce writes n messages to each of partitions, retrying for up to 30 s.
func (p *rgiProducer) produce(partitions, n int) {
	p.t.Helper()
	for part := 0; part < partitions; part++ {
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := p.send(part, n)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				p.t.Fatalf("producing to %s/%d: %v", p.topic, part, err)
			}
		}
	}
}

// background writes perTick messages to each partition every tick until
// stopBackground; failed writes are retried at the next tick.
func (p *rgiProducer) background(partitions, perTick int, tick time.Duration) {
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.done)
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		for {
			for part := 0; part < partitions; part++ {
				if err := p.send(part, perTick); err != nil {
					p.errs.Add(1)
				}
			}
			select {
			case <-p.stop:
				return
			case <-ticker.C:
			}
		}
	}()
}

func (p *rgiProducer) stopBackground() {
	close(p.stop)
	<-p.done
	p.stop = nil
}

// rgiEnds returns the end offset (high watermark) of each partition.
func rgiEnds(t *testing.T, c *ktesting.Cluster, topic string, partitions int) map[int]int64 {
	t.Helper()
	ends := map[int]int64{}
	d := &Dialer{ClientID: "kafka-go-rg-itest", Timeout: 5 * time.Second}
	for part := 0; part < partitions; part++ {
		rgiEventually(t, 30*time.Second, fmt.Sprintf("end offset of %s/%d", topic, part), func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, err := d.DialLeader(ctx, "tcp", c.Brokers[0], topic, part)
			if err != nil {
				return false
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			end, err := conn.ReadLastOffset()
			ends[part] = end
			return err == nil
		})
	}
	return ends
}

// rgiCoordinator is a connection to the coordinator of group, for
// OffsetFetch and to know which broker it is.
func rgiCoordinator(t *testing.T, c *ktesting.Cluster, group string) (*ConsumerGroup, *Conn) {
	t.Helper()
	d := &Dialer{ClientID: "kafka-go-rg-itest", Timeout: 5 * time.Second}
	cg := &ConsumerGroup{config: ConsumerGroupConfig{ID: group, Timeout: 5 * time.Second}, cl: newCluster(d, c.Brokers)}
	defer cg.cl.close()
	var conn *Conn
	rgiEventually(t, 30*time.Second, "coordinator of "+group, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		conn, err = cg.dialCoordinator(ctx)
		return err == nil
	})
	return cg, conn
}

// rgiCommitted reads the group's committed offsets (-1: none) with
// OffsetFetch at its coordinator.
func rgiCommitted(t *testing.T, c *ktesting.Cluster, group, topic string, partitions int) map[int]int64 {
	t.Helper()
	ps := make([]int, partitions)
	for i := range ps {
		ps[i] = i
	}
	var out map[string]map[int]int64
	rgiEventually(t, 30*time.Second, "committed offsets of "+group, func() bool {
		cg, conn := rgiCoordinator(t, c, group)
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		out, err = cg.fetchOffsets(ctx, conn, map[string][]int{topic: ps})
		if err != nil {
			t.Logf("OffsetFetch of %s: %v", group, err)
		}
		return err == nil
	})
	return out[topic]
}

// rgiFrames counts the requests a Dialer's connections send, by API key,
// from the bytes written; crash cuts every connection and fails new dials,
// like a process that died.
type rgiFrames struct {
	mu      sync.Mutex
	sent    []rgiFrame
	crashed bool
	conns   map[*rgiConn]bool
}

type rgiFrame struct {
	at  time.Time
	key int16
}

func newRgiFrames() *rgiFrames { return &rgiFrames{conns: map[*rgiConn]bool{}} }

func (f *rgiFrames) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	crashed := f.crashed
	f.mu.Unlock()
	if crashed {
		return nil, errors.New("rgi: crashed member dials nothing")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &rgiConn{Conn: nc, f: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crashed {
		nc.Close()
		return nil, errors.New("rgi: crashed member dials nothing")
	}
	f.conns[c] = true
	return c, nil
}

func (f *rgiFrames) crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.crashed = true
	for c := range f.conns {
		c.Conn.Close()
	}
}

// count returns how many requests of key were sent in [from, to).
func (f *rgiFrames) count(key protocol.ApiKey, from, to time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, fr := range f.sent {
		if fr.key == int16(key) && !fr.at.Before(from) && fr.at.Before(to) {
			n++
		}
	}
	return n
}

// last returns when the last request of key before t was sent (zero:
// none).
func (f *rgiFrames) last(key protocol.ApiKey, t time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var at time.Time
	for _, fr := range f.sent {
		if fr.key == int16(key) && fr.at.Before(t) {
			at = fr.at
		}
	}
	return at
}

// rgiConn parses the request frames written (int32 size, int16 API key,
// then size-2 more bytes), whatever the split of the writes.
type rgiConn struct {
	net.Conn
	f *rgiFrames

	mu   sync.Mutex
	hdr  [6]byte
	nhdr int
	skip int64
}

func (c *rgiConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	for rest := b[:n]; len(rest) > 0; {
		if c.skip > 0 {
			k := int64(len(rest))
			if k > c.skip {
				k = c.skip
			}
			c.skip -= k
			rest = rest[k:]
			continue
		}
		k := copy(c.hdr[c.nhdr:], rest)
		c.nhdr += k
		rest = rest[k:]
		if c.nhdr == len(c.hdr) {
			size := int64(int32(binary.BigEndian.Uint32(c.hdr[:4])))
			key := int16(binary.BigEndian.Uint16(c.hdr[4:]))
			c.f.mu.Lock()
			c.f.sent = append(c.f.sent, rgiFrame{at: time.Now(), key: key})
			c.f.mu.Unlock()
			c.nhdr, c.skip = 0, size-2
		}
	}
	return n, err
}

func (c *rgiConn) Close() error {
	c.f.mu.Lock()
	delete(c.f.conns, c)
	c.f.mu.Unlock()
	return c.Conn.Close()
}

type rgiLogger struct {
	t      *testing.T
	prefix string
	quiet  atomic.Bool // set once the test is over
}

func (l *rgiLogger) Printf(format string, args ...interface{}) {
	if !l.quiet.Load() {
		l.t.Logf("%s %s%s", time.Now().Format("15:04:05.000"), l.prefix, fmt.Sprintf(format, args...))
	}
}

// rgiReader is a group reader of topic with the quick timings of these
// tests, its requests counted by frames (nil: a fresh counter).
func rgiReader(t *testing.T, c *ktesting.Cluster, name, group, topic string, frames *rgiFrames, edit func(*ReaderConfig)) *Reader {
	if frames == nil {
		frames = newRgiFrames()
	}
	logger := &rgiLogger{t: t, prefix: name + ": "}
	cfg := ReaderConfig{
		Brokers:           c.Brokers,
		GroupID:           group,
		GroupTopics:       []string{topic},
		Dialer:            &Dialer{ClientID: "kafka-go-rg-" + name, Timeout: 5 * time.Second, DialFunc: frames.dial},
		MaxWait:           500 * time.Millisecond,
		ReadBackoffMin:    50 * time.Millisecond,
		ReadBackoffMax:    500 * time.Millisecond,
		ReadLagInterval:   -1,
		SessionTimeout:    rgiSession,
		HeartbeatInterval: rgiHeartbeat,
		RebalanceTimeout:  10 * time.Second,
		JoinGroupBackoff:  time.Second,
		Logger:            logger,
	}
	if edit != nil {
		edit(&cfg)
	}
	r := NewReader(cfg)
	t.Cleanup(func() {
		r.Close()
		logger.quiet.Store(true)
	})
	return r
}

// rgiAssignment returns the generation a group reader works in (-1: none)
// and its partitions of topic.
func rgiAssignment(r *Reader, topic string) (int32, []int) {
	g := r.group
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gen == nil {
		return -1, nil
	}
	var ps []int
	for tp := range g.owned {
		if tp.topic == topic {
			ps = append(ps, tp.partition)
		}
	}
	sort.Ints(ps)
	return g.gen.ID, ps
}

// rgiWaitStable waits until readers work in one generation whose
// assignments are disjoint and cover partitions 0..n-1; it returns the
// generation and each reader's partitions.
func rgiWaitStable(t *testing.T, timeout time.Duration, topic string, n int, readers ...*Reader) (int32, [][]int) {
	t.Helper()
	var id int32
	var owned [][]int
	rgiEventually(t, timeout, "a stable generation", func() bool {
		id, owned = -1, make([][]int, len(readers))
		seen := map[int]bool{}
		for i, r := range readers {
			g, ps := rgiAssignment(r, topic)
			if g < 0 || (id >= 0 && g != id) {
				return false
			}
			id, owned[i] = g, ps
			for _, p := range ps {
				if seen[p] {
					return false
				}
				seen[p] = true
			}
		}
		return len(seen) == n
	})
	return id, owned
}

// Commit states of a delivery.
const (
	rgiPending = iota
	rgiCommitOK
	rgiCommitFailed
	rgiNotCommitted // the application chose not to commit it
)

type rgiDelivery struct {
	member string
	part   int
	offset int64
	value  string
	at     time.Time
	before int32 // the reader's generation when FetchMessage was called
	gen    int32 // and when it returned
	state  int
}

// rgiRecorder keeps every message the members returned.
type rgiRecorder struct {
	mu  sync.Mutex
	all []*rgiDelivery
}

func (rec *rgiRecorder) add(d *rgiDelivery) {
	rec.mu.Lock()
	rec.all = append(rec.all, d)
	rec.mu.Unlock()
}

func (rec *rgiRecorder) setState(d *rgiDelivery, s int) {
	rec.mu.Lock()
	d.state = s
	rec.mu.Unlock()
}

func (rec *rgiRecorder) snapshot() []rgiDelivery {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]rgiDelivery, len(rec.all))
	for i, d := range rec.all {
		out[i] = *d
	}
	return out
}

// count returns how many messages member returned (all members: "").
func (rec *rgiRecorder) count(member string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, d := range rec.all {
		if member == "" || d.member == member {
			n++
		}
	}
	return n
}

// covered reports whether every offset below ends[p] of every partition
// was returned to a member that processed it (committed it, or tried to).
func (rec *rgiRecorder) covered(ends map[int]int64) bool {
	missing, _ := rec.missing(ends)
	return missing == 0
}

func (rec *rgiRecorder) missing(ends map[int]int64) (int, string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := map[[2]int64]bool{}
	for _, d := range rec.all {
		// A message whose commit failed was processed all the same;
		// whether the commit was applied (an answer lost with the
		// connection) only decides whether it comes again.
		if d.state == rgiCommitOK || d.state == rgiCommitFailed {
			got[[2]int64{int64(d.part), d.offset}] = true
		}
	}
	n, first := 0, ""
	for p, end := range ends {
		for o := int64(0); o < end; o++ {
			if !got[[2]int64{int64(p), o}] {
				if n == 0 {
					first = fmt.Sprintf("partition %d offset %d", p, o)
				}
				n++
			}
		}
	}
	return n, first
}

// rgiWaitCovered waits until every message below ends was returned to a
// member that processed it.
func rgiWaitCovered(t *testing.T, rec *rgiRecorder, ends map[int]int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !rec.covered(ends) {
		if time.Now().After(deadline) {
			n, first := rec.missing(ends)
			var states []string
			var p int
			var o int64
			fmt.Sscanf(first, "partition %d offset %d", &p, &o)
			for _, d := range rec.snapshot() {
				if d.part == p && d.offset == o {
					states = append(states, fmt.Sprintf("%s gen %d state %d at %s", d.member, d.gen, d.state, d.at.Format("15:04:05.000")))
				}
			}
			t.Fatalf("%d messages below the end offsets %v not returned (or not processed); first: %s, returned as %v", n, ends, first, states)
		}
		<-tick.C
	}
}

// rgiMember reads with FetchMessage and commits every message with
// CommitMessages (unless noCommit), recording each one.
type rgiMember struct {
	t        *testing.T
	name     string
	topic    string
	r        *Reader
	frames   *rgiFrames
	noCommit atomic.Bool
	stop     chan struct{}
	done     chan struct{}
	errs     atomic.Int64 // errors FetchMessage returned (not timeouts)
}

func rgiStart(t *testing.T, c *ktesting.Cluster, rec *rgiRecorder, name, group, topic string, edit func(*ReaderConfig)) *rgiMember {
	m := rgiNewMember(t, c, name, group, topic, edit)
	m.run(rec)
	return m
}

// rgiNewMember makes a member whose loop is not running yet.
func rgiNewMember(t *testing.T, c *ktesting.Cluster, name, group, topic string, edit func(*ReaderConfig)) *rgiMember {
	m := &rgiMember{t: t, name: name, topic: topic, frames: newRgiFrames(), stop: make(chan struct{}), done: make(chan struct{})}
	m.r = rgiReader(t, c, name, group, topic, m.frames, edit)
	return m
}

// run starts the read loop; it stops at the end of the test.
func (m *rgiMember) run(rec *rgiRecorder) {
	go m.loop(rec)
	m.t.Cleanup(m.halt)
}

func (m *rgiMember) loop(rec *rgiRecorder) {
	defer close(m.done)
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		before, _ := rgiAssignment(m.r, m.topic)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		msg, err := m.r.FetchMessage(ctx)
		cancel()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) {
				m.errs.Add(1)
			}
			continue
		}
		gen, _ := rgiAssignment(m.r, m.topic)
		d := &rgiDelivery{member: m.name, part: msg.Partition, offset: msg.Offset, value: string(msg.Value), at: time.Now(), before: before, gen: gen}
		rec.add(d)
		if m.noCommit.Load() {
			rec.setState(d, rgiNotCommitted)
			continue
		}
		ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
		err = m.r.CommitMessages(ctx, msg)
		cancel()
		if err != nil {
			rec.setState(d, rgiCommitFailed)
		} else {
			rec.setState(d, rgiCommitOK)
		}
	}
}

// halt stops the read loop (the reader stays open).
func (m *rgiMember) halt() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// rgiCheckDeliveries checks what each member returned: values of the right
// partition; per member and partition, offsets only ever go up: within one
// Reader's run no message is returned twice, even when a rebalance leaves
// it a partition it had (whether or not its last commit went through).
func rgiCheckDeliveries(t *testing.T, all []rgiDelivery) {
	t.Helper()
	type key struct {
		member string
		part   int
	}
	last := map[key]rgiDelivery{}
	bad := 0
	for _, d := range all {
		if !strings.HasPrefix(d.value, fmt.Sprintf("p%d-", d.part)) {
			t.Errorf("%s: partition %d offset %d has value %q", d.member, d.part, d.offset, d.value)
		}
		k := key{d.member, d.part}
		if prev, ok := last[k]; ok && d.offset <= prev.offset {
			if bad++; bad <= 10 {
				t.Errorf("%s: partition %d offset %d (generation %d) returned after offset %d (generation %d, commit state %d)",
					d.member, d.part, d.offset, d.gen, prev.offset, prev.gen, prev.state)
			}
		}
		last[k] = d
	}
	if bad > 10 {
		t.Errorf("%d messages returned twice or out of order by one member", bad)
	}
}

// Three readers of one group share six partitions while a producer
// writes. While the members are stable every message is returned exactly
// once, in partition order. A member that closes without committing what
// it fetched last loses nothing: a survivor returns those messages again,
// soon. A member that crashes (no LeaveGroup, connections cut) is replaced
// within the session timeout. A new member of the group resumes exactly at
// the committed offsets.
func TestReaderGroupIntegrationMembers(t *testing.T) {
	c := rgiCluster(t)
	const parts = 6
	topic := rgiTopic(t, c, parts)
	group := "g-" + topic
	rec := &rgiRecorder{}

	m := []*rgiMember{
		rgiStart(t, c, rec, "m0", group, topic, nil),
		rgiStart(t, c, rec, "m1", group, topic, func(cfg *ReaderConfig) { cfg.Topic, cfg.GroupTopics = topic, nil }),
		rgiStart(t, c, rec, "m2", group, topic, nil),
	}
	gen0, owned0 := rgiWaitStable(t, 30*time.Second, topic, parts, m[0].r, m[1].r, m[2].r)
	t.Logf("stable generation %d: %v", gen0, owned0)
	for i, ps := range owned0 {
		if len(ps) != 2 {
			t.Fatalf("member %d has partitions %v, want two of six", i, ps)
		}
	}

	prod := newRgiProducer(t, c, topic)
	prod.background(parts, 1, 50*time.Millisecond)
	rgiEventually(t, 30*time.Second, "every member reading", func() bool {
		return rec.count("m0") >= 60 && rec.count("m1") >= 60 && rec.count("m2") >= 60
	})

	// m0 stops committing, fetches some more, and closes.
	m[0].noCommit.Store(true)
	mark := rec.count("m0")
	rgiEventually(t, 30*time.Second, "m0 fetching without committing", func() bool { return rec.count("m0") >= mark+20 })
	m[0].halt()
	tClose := time.Now()
	stable := rec.snapshot()
	for i := 1; i < 3; i++ {
		if g, _ := rgiAssignment(m[i].r, topic); g != gen0 {
			t.Fatalf("m%d left generation %d for %d while the members were stable", i, gen0, g)
		}
	}
	m[0].r.Close()
	t.Logf("m0 closed in %v", time.Since(tClose))

	// Exactly once while stable.
	seen := map[[2]int64]string{}
	var uncommitted []rgiDelivery
	for _, d := range stable {
		k := [2]int64{int64(d.part), d.offset}
		if other, dup := seen[k]; dup {
			t.Errorf("while stable: partition %d offset %d returned by %s and %s", d.part, d.offset, other, d.member)
		}
		seen[k] = d.member
		if d.gen != gen0 {
			t.Errorf("while stable: %s returned partition %d offset %d in generation %d", d.member, d.part, d.offset, d.gen)
		}
		if d.member == "m0" && d.state == rgiNotCommitted {
			uncommitted = append(uncommitted, d)
		}
	}
	if len(uncommitted) < 20 {
		t.Fatalf("m0 returned %d messages it did not commit, want >= 20", len(uncommitted))
	}

	// The survivors take m0's partitions over: every partition of m0 is
	// read by a survivor again, starting with what m0 did not commit.
	// takeover measures, from from, when the survivors' generation owns
	// the lost partitions and when each of them was read by a survivor.
	takeover := func(from time.Time, lost []int, survivors ...*rgiMember) (assigned, read time.Duration) {
		t.Helper()
		assigned, read = -1, -1
		rgiEventually(t, rgiSession+rgiMargin+rgiReadMargin+10*time.Second, fmt.Sprintf("partitions %v taken over", lost), func() bool {
			if assigned < 0 {
				owned := map[int]bool{}
				for _, s := range survivors {
					_, ps := rgiAssignment(s.r, topic)
					for _, p := range ps {
						owned[p] = true
					}
				}
				all := true
				for _, p := range lost {
					all = all && owned[p]
				}
				if all {
					assigned = time.Since(from)
				}
			}
			first := map[int]time.Duration{}
			for _, d := range rec.snapshot() {
				if d.at.Before(from) {
					continue
				}
				for _, s := range survivors {
					if _, ok := first[d.part]; !ok && d.member == s.name {
						first[d.part] = d.at.Sub(from)
					}
				}
			}
			read = 0
			for _, p := range lost {
				f, ok := first[p]
				if !ok {
					return false
				}
				read = max(read, f)
			}
			return assigned >= 0
		})
		return assigned, read
	}
	check := func(what string, assigned, read time.Duration) {
		t.Helper()
		if assigned > rgiSession+rgiMargin {
			t.Errorf("%s: the survivors owned the partitions after %v, want <= %v", what, assigned, rgiSession+rgiMargin)
		}
		if read > rgiSession+rgiMargin+rgiReadMargin {
			t.Errorf("%s: the survivors read every partition after %v, want <= %v", what, read, rgiSession+rgiMargin+rgiReadMargin)
		}
	}
	closeAssigned, closeRead := takeover(tClose, owned0[0], m[1], m[2])
	gen1, owned1 := rgiWaitStable(t, 30*time.Second, topic, parts, m[1].r, m[2].r)
	t.Logf("TAKEOVER after m0 closed: generation %d %v; m0's partitions %v owned by survivors after %v, all read after %v",
		gen1, owned1, owned0[0], closeAssigned, closeRead)
	check("m0 closed", closeAssigned, closeRead)
	for _, u := range uncommitted {
		u := u
		rgiEventually(t, 30*time.Second, fmt.Sprintf("m0's uncommitted partition %d offset %d returned by a survivor", u.part, u.offset), func() bool {
			for _, d := range rec.snapshot() {
				if d.part == u.part && d.offset == u.offset && d.member != "m0" && d.state == rgiCommitOK {
					return true
				}
			}
			return false
		})
	}

	// m1 crashes: no LeaveGroup, no commit, its connections cut. m2 takes
	// its partitions over once the coordinator expired m1's session.
	m[1].frames.crash()
	tCrash := time.Now()
	// Not waited for: a commit m1 has in flight keeps retrying, against a
	// coordinator it cannot reach, until its session is over.
	go m[1].halt()
	crashAssigned, crashRead := takeover(tCrash, owned1[0], m[2])
	t.Logf("TAKEOVER after m1 crashed: its partitions %v owned by m2 after %v, all read after %v (session timeout %v)",
		owned1[0], crashAssigned, crashRead, rgiSession)
	check("m1 crashed", crashAssigned, crashRead)
	if g, ps := rgiAssignment(m[2].r, topic); len(ps) != parts {
		t.Errorf("m2 in generation %d has %v, want all %d partitions", g, ps, parts)
	}

	// Everything produced is returned.
	prod.stopBackground()
	ends := rgiEnds(t, c, topic, parts)
	rgiWaitCovered(t, rec, ends)
	m[2].halt()
	all := rec.snapshot()
	rgiCheckDeliveries(t, all)
	for i := range m {
		if n := m[i].errs.Load(); n != 0 {
			t.Logf("m%d: FetchMessage returned %d errors", i, n)
		}
	}
	var total int64
	for _, e := range ends {
		total += e
	}
	t.Logf("%d messages produced, %d returned", total, len(all))
	m[1].r.Close()
	m[2].r.Close()

	// The group committed exactly what it read; a new member starts there.
	committed := rgiCommitted(t, c, group, topic, parts)
	for p, end := range ends {
		if committed[p] != end {
			t.Errorf("partition %d: committed %d, end %d", p, committed[p], end)
		}
	}
	prod.produce(parts, 5)
	rec2 := &rgiRecorder{}
	m3 := rgiStart(t, c, rec2, "m3", group, topic, nil)
	rgiEventually(t, 30*time.Second, "m3 reading every partition", func() bool {
		got := map[int]bool{}
		for _, d := range rec2.snapshot() {
			got[d.part] = true
		}
		return len(got) == parts
	})
	m3.halt()
	first := map[int]int64{}
	for _, d := range rec2.snapshot() {
		if _, ok := first[d.part]; !ok {
			first[d.part] = d.offset
		}
	}
	for p := 0; p < parts; p++ {
		if first[p] != committed[p] {
			t.Errorf("the new member started partition %d at offset %d, committed %d", p, first[p], committed[p])
		}
	}
}

// ReadMessage commits what it returns: at once by default (the offset is
// committed when ReadMessage returns), every CommitInterval otherwise (a
// handful of commits for many messages, caught up within an interval, and
// flushed by Close). Either way the committed offset is exactly one past
// the last message returned, never beyond.
func TestReaderGroupIntegrationReadMessageCommits(t *testing.T) {
	c := rgiCluster(t)
	const parts, n = 2, 100
	for _, interval := range []time.Duration{0, 500 * time.Millisecond} {
		t.Run(fmt.Sprintf("CommitInterval=%v", interval), func(t *testing.T) {
			topic := rgiTopic(t, c, parts)
			group := "g-" + topic
			prod := newRgiProducer(t, c, topic)
			prod.produce(parts, n)
			frames := newRgiFrames()
			r := rgiReader(t, c, "r", group, topic, frames, func(cfg *ReaderConfig) { cfg.CommitInterval = interval })
			ctx := rgiCtx(t, 60*time.Second)

			next := map[int]int64{}
			read := func(count int) {
				t.Helper()
				for i := 0; i < count; i++ {
					m, err := r.ReadMessage(ctx)
					if err != nil {
						t.Fatalf("ReadMessage: %v", err)
					}
					if want := next[m.Partition]; m.Offset != want {
						t.Fatalf("partition %d: offset %d, want %d", m.Partition, m.Offset, want)
					}
					next[m.Partition] = m.Offset + 1
					if interval == 0 && i%25 == 0 {
						// Synchronous: committed before ReadMessage returned.
						if got := rgiCommitted(t, c, group, topic, parts)[m.Partition]; got != m.Offset+1 {
							t.Fatalf("partition %d: committed %d right after ReadMessage returned offset %d", m.Partition, got, m.Offset)
						}
					}
				}
			}
			// waitCommitted polls until the committed offsets reach next,
			// then requires them to be exactly next.
			waitCommitted := func(within time.Duration) time.Duration {
				t.Helper()
				start := time.Now()
				var got map[int]int64
				rgiEventually(t, within, "the commits catching up", func() bool {
					got = rgiCommitted(t, c, group, topic, parts)
					for p := 0; p < parts; p++ {
						if got[p] < next[p] {
							return false
						}
					}
					return true
				})
				for p := 0; p < parts; p++ {
					if got[p] != next[p] {
						t.Errorf("partition %d: committed %d, but the last message returned is %d", p, got[p], next[p]-1)
					}
				}
				return time.Since(start)
			}

			rgiWaitStable(t, 30*time.Second, topic, parts, r)
			start := time.Now()
			read(parts * n)
			readTime := time.Since(start)
			commits := frames.count(protocol.OffsetCommit, start, time.Now())
			t.Logf("%d messages read in %v with %d OffsetCommit requests", parts*n, readTime, commits)
			if interval == 0 {
				if commits < parts*n {
					t.Errorf("%d OffsetCommit requests for %d messages read with synchronous commits", commits, parts*n)
				}
				waitCommitted(0)
				return
			}
			if limit := int(readTime/interval) + 2; commits > limit {
				t.Errorf("%d OffsetCommit requests in %v with CommitInterval %v, want <= %d", commits, readTime, interval, limit)
			}
			lag := waitCommitted(2*interval + 2*time.Second)
			t.Logf("commits caught up %v after the last ReadMessage", lag)
			// Nothing more is committed while nothing is read.
			before := frames.count(protocol.OffsetCommit, time.Time{}, time.Now())
			rgiEventually(t, 5*time.Second, "two more commit intervals", func() bool { return time.Since(start) > readTime+lag+2*interval })
			if after := frames.count(protocol.OffsetCommit, time.Time{}, time.Now()); after != before {
				t.Errorf("%d OffsetCommit requests while nothing was read", after-before)
			}
			// Close flushes what was read since the last tick.
			prod.produce(parts, 10)
			read(parts * 10)
			r.Close()
			waitCommitted(0)
		})
	}
}
