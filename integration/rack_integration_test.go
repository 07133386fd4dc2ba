package integration

// Acceptance tests of rack-aware fetching (KIP-392) on the real 3-rack
// cluster. A topic of six partitions is led in racks a and c only, and the
// rack-b broker follows every partition; six Readers in rack b (one per
// partition, sharing one Dialer) read it while a producer writes to every
// partition continuously:
//
//	TestRackIntegrationSteadyState     ≥ 99 % of the bytes come from rack b (Reader stats AND socket
//	                                   counters), ≤ 1 routing change per partition at start, none after
//	TestRackIntegrationFollowerKilled  kill -9 of the rack-b broker mid-stream, then its restart
//	TestRackIntegrationFollowerPaused  SIGSTOP of the rack-b broker for 30 s, a leader moved meanwhile
//	TestRackIntegrationNoSelector      brokers without replica.selector.class (a second cluster)
//
// Every test checks the exact per-partition sequence: what the Readers
// returned is, offset by offset, what the leader's log holds at the end
// (read again with a plain Conn): nothing lost, nothing repeated, in order.
//
// The figures are logged as `RACKFIGURE name=value` (grep them from
// go test -v). The steady-state period is RACK_STEADY_STATE (a Go
// duration, default 60s); a longer soak:
//
//	RACK_STEADY_STATE=5m go test -run TestRackIntegrationSteadyState -timeout 20m ./integration
//
// The selector-less cluster of TestRackIntegrationNoSelector is started on
// ports from SECOND_CLUSTER_PORT_BASE (default: the main cluster's KAFKA_PORT_BASE - 1000, else 28090), unless the
// environment's cluster itself has no selector.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// rkPartitions, the partitions of the rack tests' topics, is in
// rack_partitions_test.go (6) or, built with -tags rackmany,
// rack_partitions_many_test.go (60).

const (
	rkRack      = "b"
	rkValueSize = 1024
)

// rkFigure logs one measured figure in the greppable report format.
func rkFigure(t *testing.T, name string, format string, args ...interface{}) {
	t.Helper()
	t.Logf("RACKFIGURE %s=%s", name, fmt.Sprintf(format, args...))
}

func rkSeconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) }

// rkEnvDuration reads a duration knob from the environment.
func rkEnvDuration(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive Go duration (60s, 5m)", name, v)
	}
	return d
}

// rkAssignments leads partitions alternately in racks a and c, the rack-b
// broker second in every replica list: [a,b,c], [c,b,a], ...
func rkAssignments(a, b, c int) []kafka.ReplicaAssignment {
	out := make([]kafka.ReplicaAssignment, rkPartitions)
	for p := range out {
		r := []int{a, b, c}
		if p%2 == 1 {
			r = []int{c, b, a}
		}
		out[p] = kafka.ReplicaAssignment{Partition: p, Replicas: r}
	}
	return out
}

// ---------------------------------------------------------------------------
// Socket-level byte counts: what the Readers' connections read, per remote
// address, counted below the client (its own accounting is not involved).

type rkSockets struct {
	mu   sync.Mutex
	read map[string]int64
}

func newRKSockets() *rkSockets { return &rkSockets{read: map[string]int64{}} }

func (s *rkSockets) dial(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &rkConn{Conn: c, addr: address, s: s}, nil
}

func (s *rkSockets) snapshot() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.read))
	for k, v := range s.read {
		out[k] = v
	}
	return out
}

type rkConn struct {
	net.Conn
	addr string
	s    *rkSockets
}

func (c *rkConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.s.mu.Lock()
		c.s.read[c.addr] += int64(n)
		c.s.mu.Unlock()
	}
	return n, err
}

// rkShare returns the bytes read from addr and from all addresses between
// two snapshots.
func rkShare(before, after map[string]int64, addr string) (fromAddr, total int64) {
	for k, v := range after {
		d := v - before[k]
		total += d
		if k == addr {
			fromAddr += d
		}
	}
	return fromAddr, total
}

// ---------------------------------------------------------------------------
// The Readers' log: every line, timed; routing changes parsed from the
// one line the fetcher writes per change.

type rkLine struct {
	at   time.Time
	text string
}

type rkLog struct {
	t      *testing.T
	prefix string
	mu     *sync.Mutex
	lines  *[]rkLine
}

func newRKLogs(t *testing.T) (info, errs *rkLog) {
	mu, lines := &sync.Mutex{}, &[]rkLine{}
	return &rkLog{t: t, prefix: "reader: ", mu: mu, lines: lines}, &rkLog{t: t, prefix: "reader error: ", mu: mu, lines: lines}
}

func (l *rkLog) Printf(format string, args ...interface{}) {
	s := fmt.Sprintf(format, args...)
	now := time.Now()
	l.mu.Lock()
	*l.lines = append(*l.lines, rkLine{at: now, text: l.prefix + s})
	l.mu.Unlock()
	// The wall-clock time lines a routing change up with the harness's own
	// timed lines (the broker faults, RF_DEBUG's monitor).
	l.t.Logf("%s %s%s", now.Format("15:04:05.000"), l.prefix, s)
}

// count returns how many lines logged in [from, to) contain every one of
// parts.
func (l *rkLog) count(from, to time.Time, parts ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ln := range *l.lines {
		if ln.at.Before(from) || !ln.at.Before(to) {
			continue
		}
		all := true
		for _, p := range parts {
			all = all && strings.Contains(ln.text, p)
		}
		if all {
			n++
		}
	}
	return n
}

// rkChangeRE matches the fetcher's routing change line.
var rkChangeRE = regexp.MustCompile(`partition (\S+)/(\d+): broker (-?\d+) \(rack (\S+)\) → broker (-?\d+) \(rack (\S+)\), (.+)$`)

type rkChange struct {
	at        time.Time
	partition int
	from, to  int
	reason    string
}

// changes returns the routing changes logged in [from, to).
func (l *rkLog) changes(from, to time.Time) []rkChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []rkChange
	for _, ln := range *l.lines {
		if ln.at.Before(from) || !ln.at.Before(to) {
			continue
		}
		m := rkChangeRE.FindStringSubmatch(ln.text)
		if m == nil {
			continue
		}
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		x, _ := strconv.Atoi(m[5])
		out = append(out, rkChange{at: ln.at, partition: p, from: f, to: x, reason: m[7]})
	}
	return out
}

// ---------------------------------------------------------------------------
// Routing seen through Reader.Stats, accumulated (Stats resets its counters
// at every call; only the monitor calls it).

type rkPartStats struct {
	same, other int64
	reroutes    map[string]int64
	broker      int
	leader      int
}

type rkMonitor struct {
	readers []*kafka.Reader
	stop    chan struct{}
	done    chan struct{}

	mu    sync.Mutex
	parts [rkPartitions]rkPartStats
	// firstSame is when a partition's first same-rack bytes were seen.
	firstSame [rkPartitions]time.Time
}

func newRKMonitor(readers []*kafka.Reader) *rkMonitor {
	m := &rkMonitor{readers: readers, stop: make(chan struct{}), done: make(chan struct{})}
	for p := range m.parts {
		m.parts[p] = rkPartStats{reroutes: map[string]int64{}, broker: -1, leader: -1}
	}
	go m.run()
	return m
}

func (m *rkMonitor) run() {
	defer close(m.done)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		m.poll()
		select {
		case <-m.stop:
			m.poll()
			return
		case <-tick.C:
		}
	}
}

func (m *rkMonitor) close() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

func (m *rkMonitor) poll() {
	now := time.Now()
	for _, r := range m.readers {
		st := r.Stats()
		m.mu.Lock()
		for _, pr := range st.Routing {
			if pr.Partition < 0 || pr.Partition >= rkPartitions {
				continue
			}
			ps := &m.parts[pr.Partition]
			ps.same += pr.SameRackBytes
			ps.other += pr.CrossRackBytes
			for k, v := range pr.Reroutes {
				ps.reroutes[string(k)] += v
			}
			ps.broker, ps.leader = pr.Broker, pr.Leader
			if pr.SameRackBytes > 0 && m.firstSame[pr.Partition].IsZero() {
				m.firstSame[pr.Partition] = now
			}
		}
		m.mu.Unlock()
	}
}

// snapshot polls once more and returns a copy of the accumulated stats.
func (m *rkMonitor) snapshot() [rkPartitions]rkPartStats {
	m.poll()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.parts
	for p := range out {
		rr := make(map[string]int64, len(out[p].reroutes))
		for k, v := range out[p].reroutes {
			rr[k] = v
		}
		out[p].reroutes = rr
	}
	return out
}

// routedTo reports whether every partition reads from broker now.
func (m *rkMonitor) routedTo(broker int) bool {
	s := m.snapshot()
	for _, ps := range s {
		if ps.broker != broker {
			return false
		}
	}
	return true
}

// routedAway reports whether no partition reads from broker now.
func (m *rkMonitor) routedAway(broker int) bool {
	s := m.snapshot()
	for _, ps := range s {
		if ps.broker == broker {
			return false
		}
	}
	return true
}

func rkSum(s [rkPartitions]rkPartStats) (same, other int64) {
	for _, ps := range s {
		same += ps.same
		other += ps.other
	}
	return same, other
}

// rkReroutes returns, per partition, the reroutes between two snapshots.
func rkReroutes(before, after [rkPartitions]rkPartStats) [rkPartitions]map[string]int64 {
	var out [rkPartitions]map[string]int64
	for p := range after {
		out[p] = map[string]int64{}
		for k, v := range after[p].reroutes {
			if d := v - before[p].reroutes[k]; d > 0 {
				out[p][k] = d
			}
		}
	}
	return out
}

func rkCount(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// ---------------------------------------------------------------------------
// The producer: one goroutine per partition writing a batch every interval
// to the partition's leader with acks=all, on a Dialer of its own (its
// bytes are not the Readers'). Values are unique: "p{p}-s{seq}-" padded.

type rkWrite struct {
	start time.Time // when the write was sent
	off   int64     // offset of its first message
	n     int
}

type rkProducer struct {
	t         *testing.T
	c         *ktesting.Cluster
	topic     string
	bootstrap string
	batch     int
	interval  time.Duration

	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	writes [rkPartitions][]rkWrite
	errs   int
}

func startRKProducer(t *testing.T, c *ktesting.Cluster, topic, bootstrap string, batch int, interval time.Duration) *rkProducer {
	ctx, cancel := context.WithCancel(context.Background())
	pr := &rkProducer{t: t, c: c, topic: topic, bootstrap: bootstrap, batch: batch, interval: interval, cancel: cancel}
	for p := 0; p < rkPartitions; p++ {
		pr.wg.Add(1)
		go pr.run(ctx, p)
	}
	t.Cleanup(pr.stop)
	return pr
}

func rkValue(p, seq int) []byte {
	v := make([]byte, rkValueSize)
	n := copy(v, fmt.Sprintf("p%d-s%08d-", p, seq))
	for i := n; i < len(v); i++ {
		v[i] = byte('a' + (seq+i)%26)
	}
	return v
}

func (pr *rkProducer) run(ctx context.Context, p int) {
	defer pr.wg.Done()
	dialer := &kafka.Dialer{ClientID: "rack-itest-producer", Timeout: 5 * time.Second}
	var conn *kafka.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	tick := time.NewTicker(pr.interval)
	defer tick.Stop()
	seq := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if conn == nil {
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			c, err := dialer.DialLeader(dctx, "tcp", pr.bootstrap, pr.topic, p)
			cancel()
			if err != nil {
				pr.failed(p, err)
				continue
			}
			conn = c
		}
		msgs := make([]kafka.Message, pr.batch)
		for i := range msgs {
			msgs[i] = kafka.Message{Value: rkValue(p, seq)}
			seq++
		}
		conn.SetDeadline(time.Now().Add(15 * time.Second))
		start := time.Now()
		_, _, off, _, err := conn.WriteCompressedMessagesAt(nil, msgs...)
		if err != nil {
			// The write may or may not have landed: the final check
			// compares the Readers with the log, not with the writes.
			pr.failed(p, err)
			conn.Close()
			conn = nil
			continue
		}
		pr.mu.Lock()
		pr.writes[p] = append(pr.writes[p], rkWrite{start: start, off: off, n: len(msgs)})
		pr.mu.Unlock()
	}
}

func (pr *rkProducer) failed(p int, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	pr.mu.Lock()
	pr.errs++
	pr.mu.Unlock()
	pr.t.Logf("producer: partition %d: %v (reconnecting)", p, err)
}

func (pr *rkProducer) stop() {
	pr.cancel()
	pr.wg.Wait()
}

// firstAfter returns, per partition, the offset of the first message of
// the first write sent at or after at (-1: none yet).
func (pr *rkProducer) firstAfter(at time.Time) [rkPartitions]int64 {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	var out [rkPartitions]int64
	for p := range out {
		out[p] = -1
		for _, w := range pr.writes[p] {
			if !w.start.Before(at) {
				out[p] = w.off
				break
			}
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// The consumers: one goroutine per Reader, recording a hash of every value
// at its offset and checking on the fly that offsets are 0, 1, 2, ...

type rkConsumer struct {
	p int

	mu         sync.Mutex
	hashes     []uint64 // by offset
	bytes      int64
	lastAt     time.Time
	errs       []string // errors FetchMessage returned
	violations []string // gaps, repeats, wrong partitions
}

func rkHash(v []byte) uint64 {
	h := fnv.New64a()
	h.Write(v)
	return h.Sum64()
}

func (c *rkConsumer) run(ctx context.Context, r *kafka.Reader) {
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return
			}
			c.mu.Lock()
			c.errs = append(c.errs, err.Error())
			c.mu.Unlock()
			continue
		}
		h := rkHash(m.Value)
		c.mu.Lock()
		next := int64(len(c.hashes))
		switch {
		case m.Partition != c.p:
			c.violations = append(c.violations, fmt.Sprintf("partition %d: got a message of partition %d", c.p, m.Partition))
		case m.Offset == next:
			c.hashes = append(c.hashes, h)
		case m.Offset < next:
			c.violations = append(c.violations, fmt.Sprintf("partition %d: offset %d returned again (next expected %d)", c.p, m.Offset, next))
		default:
			c.violations = append(c.violations, fmt.Sprintf("partition %d: offsets %d..%d skipped", c.p, next, m.Offset-1))
			for int64(len(c.hashes)) < m.Offset {
				c.hashes = append(c.hashes, 0)
			}
			c.hashes = append(c.hashes, h)
		}
		c.bytes += int64(len(m.Value))
		c.lastAt = time.Now()
		c.mu.Unlock()
	}
}

func (c *rkConsumer) delivered() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(len(c.hashes))
}

// ---------------------------------------------------------------------------
// The harness.

type rkOptions struct {
	cooldown, ttl    time.Duration         // ReplicaCooldown, RackPreferenceTTL (0: defaults)
	readBatchTimeout time.Duration         // 0: the default
	backlog          int                   // messages per partition written before the Readers start
	batch            int                   // messages per partition per producer tick
	interval         time.Duration         // producer tick
	selector         kafka.ReplicaSelector // ReaderConfig.ReplicaSelector (nil: none)
}

type rkHarness struct {
	t        *testing.T
	c        *ktesting.Cluster
	topic    string
	leaders  [rkPartitions]int
	follower int // the rack-b broker
	bootAddr string

	sockets   *rkSockets
	info      *rkLog
	errLog    *rkLog
	readers   []*kafka.Reader
	consumers []*rkConsumer
	mon       *rkMonitor
	prod      *rkProducer
	start     time.Time

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newRKHarness creates the topic, writes the backlog, starts the producer,
// the six Readers, their consumers and the stats monitor.
func newRKHarness(t *testing.T, c *ktesting.Cluster, opts rkOptions) *rkHarness {
	t.Helper()
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	h := &rkHarness{t: t, c: c, follower: b, bootAddr: c.Addr(a), sockets: newRKSockets()}
	h.topic = createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: rkAssignments(a, b, cc)})
	for p := 0; p < rkPartitions; p++ {
		h.leaders[p] = a
		if p%2 == 1 {
			h.leaders[p] = cc
		}
	}
	if opts.batch == 0 {
		opts.batch = 10
	}
	if opts.interval == 0 {
		opts.interval = 100 * time.Millisecond
	}
	if opts.backlog > 0 {
		h.writeBacklog(opts.backlog)
	}
	h.prod = startRKProducer(t, c, h.topic, h.bootAddr, opts.batch, opts.interval)

	h.info, h.errLog = newRKLogs(t)
	dialer := &kafka.Dialer{ClientID: "rack-itest-reader", Timeout: 5 * time.Second, DialFunc: h.sockets.dial}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.start = time.Now()
	for p := 0; p < rkPartitions; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:           c.Brokers,
			Topic:             h.topic,
			Partition:         p,
			Rack:              rkRack,
			Dialer:            dialer,
			MaxWait:           500 * time.Millisecond,
			ReadBatchTimeout:  opts.readBatchTimeout,
			ReadBackoffMin:    50 * time.Millisecond,
			ReadBackoffMax:    500 * time.Millisecond,
			ReadLagInterval:   -1,
			ReplicaCooldown:   opts.cooldown,
			RackPreferenceTTL: opts.ttl,
			ReplicaSelector:   opts.selector,
			Logger:            h.info,
			ErrorLogger:       h.errLog,
		})
		h.readers = append(h.readers, r)
		cons := &rkConsumer{p: p}
		h.consumers = append(h.consumers, cons)
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			cons.run(ctx, r)
		}()
	}
	h.mon = newRKMonitor(h.readers)
	t.Cleanup(h.close)
	return h
}

func (h *rkHarness) close() {
	h.cancel()
	h.wg.Wait()
	h.mon.close()
	for _, r := range h.readers {
		r.Close()
	}
}

// writeBacklog writes n messages per partition before the Readers start.
func (h *rkHarness) writeBacklog(n int) {
	h.t.Helper()
	for p := 0; p < rkPartitions; p++ {
		conn := dialLeader(h.t, newDialer(), h.bootAddr, h.topic, p)
		for i := 0; i < n; {
			var msgs []kafka.Message
			for ; i < n && len(msgs) < 200; i++ {
				msgs = append(msgs, kafka.Message{Value: rkValue(p, 1_000_000_000+i)})
			}
			// A freshly started cluster may not have its full ISR yet
			// (NotEnoughReplicas): retry temporary errors for a while.
			deadline := time.Now().Add(30 * time.Second)
			for attempt := 1; ; attempt++ {
				_, err := conn.WriteMessages(msgs...)
				if err == nil {
					break
				}
				var kerr kafka.Error
				if !errors.As(err, &kerr) || !kerr.Temporary() || time.Now().After(deadline) {
					h.t.Fatalf("backlog of partition %d: %v", p, err)
				}
				time.Sleep(time.Duration(attempt) * 100 * time.Millisecond) // a retry backoff
				conn.Close()
				conn = dialLeader(h.t, newDialer(), h.bootAddr, h.topic, p)
			}
		}
		conn.Close()
	}
}

// poll waits until cond holds, polling; it fails the test after timeout.
// It returns how long it took.
func (h *rkHarness) poll(timeout time.Duration, what string, cond func() bool) time.Duration {
	h.t.Helper()
	start := time.Now()
	eventually(h.t, timeout, what, func() bool {
		h.failFast()
		return cond()
	})
	return time.Since(start)
}

// failFast stops the test at the first ordering violation.
func (h *rkHarness) failFast() {
	h.t.Helper()
	for _, c := range h.consumers {
		c.mu.Lock()
		v := append([]string(nil), c.violations...)
		c.mu.Unlock()
		if len(v) > 0 {
			h.t.Fatalf("delivery violations: %v", v)
		}
	}
}

// hold keeps the stream running for d (a test period, not a wait for a
// condition), checking the delivery invariants meanwhile.
func (h *rkHarness) hold(d time.Duration) {
	h.t.Helper()
	end := time.Now().Add(d)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(end) {
		h.failFast()
		<-tick.C
	}
}

// caughtUp reports whether every consumer has delivered up to want[p].
func (h *rkHarness) caughtUp(want [rkPartitions]int64) bool {
	for p, c := range h.consumers {
		if c.delivered() < want[p] {
			return false
		}
	}
	return true
}

// deliveredPast waits until every partition has delivered a message
// produced at or after at, and returns how long after at that was.
func (h *rkHarness) deliveredPast(at time.Time, timeout time.Duration, what string) time.Duration {
	h.t.Helper()
	h.poll(timeout, what, func() bool {
		first := h.prod.firstAfter(at)
		for p, c := range h.consumers {
			if first[p] < 0 || c.delivered() <= first[p] {
				return false
			}
		}
		return true
	})
	return time.Since(at)
}

// finish stops the producer, waits until the Readers have returned the
// whole log, and checks it offset by offset against the log read again from
// the leaders with a plain Conn.
func (h *rkHarness) finish() {
	h.t.Helper()
	h.prod.stop()
	for round := 0; ; round++ {
		var logs [rkPartitions][]uint64
		var want [rkPartitions]int64
		for p := 0; p < rkPartitions; p++ {
			logs[p] = h.readLog(p)
			want[p] = int64(len(logs[p]))
		}
		h.poll(90*time.Second, "the Readers returning the whole log", func() bool { return h.caughtUp(want) })
		more := false
		for p, c := range h.consumers {
			c.mu.Lock()
			got := append([]uint64(nil), c.hashes...)
			errs := len(c.errs)
			c.mu.Unlock()
			if int64(len(got)) > want[p] {
				more = true // a write that failed at the producer landed late: read the log again
				continue
			}
			for i := range logs[p] {
				if got[i] != logs[p][i] {
					h.t.Fatalf("partition %d offset %d: the Reader returned another value than the log holds", p, i)
				}
			}
			h.t.Logf("partition %d: %d messages, exactly the log, in order (%d errors returned by FetchMessage)", p, len(got), errs)
		}
		h.failFast()
		if !more {
			return
		}
		if round == 3 {
			h.t.Fatalf("the Readers keep returning more than the log holds")
		}
	}
}

// readLog returns the hashes of every value of partition p, read from its
// leader with a plain Conn (no rack, no Reader). Right after a fault the
// leader may not be settled: a dial fails while it moves, a new leader
// answers OFFSET_NOT_AVAILABLE until its high watermark catches up, and
// metadata from a broker that has not heard of the new leader epoch yet
// gets the fetch refused (FENCED_LEADER_EPOCH, seen on Kafka 2.8). Each is
// retried on a new connection, from the first offset not yet read.
func (h *rkHarness) readLog(p int) []uint64 {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []uint64
	for {
		err := h.readLogFrom(ctx, p, &out)
		if err == nil {
			return out
		}
		// An error that is not a broker's answer is the leader moving or
		// restarting: retried too.
		var kerr kafka.Error
		if errors.As(err, &kerr) && !kerr.Temporary() {
			h.t.Fatalf("reading partition %d from its leader: %v", p, err)
		}
		select {
		case <-ctx.Done():
			h.t.Fatalf("reading partition %d from its leader: %v", p, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readLogFrom appends to *out the hashes of partition p's values from
// offset len(*out) to the leader's last offset, on a new connection.
func (h *rkHarness) readLogFrom(ctx context.Context, p int, out *[]uint64) error {
	conn, err := newDialer().DialLeader(ctx, "tcp", h.bootAddr, h.topic, p)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	last, err := conn.ReadLastOffset()
	if err != nil {
		return fmt.Errorf("last offset: %w", err)
	}
	if *out == nil {
		*out = make([]uint64, 0, last)
	}
	if _, err := conn.Seek(int64(len(*out)), kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
		return err
	}
	for int64(len(*out)) < last {
		b := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 4 << 20, MaxWait: time.Second})
		for {
			m, err := b.ReadMessage()
			if err != nil {
				break
			}
			if m.Offset != int64(len(*out)) {
				h.t.Fatalf("partition %d: the log has offset %d where %d was expected", p, m.Offset, len(*out))
			}
			*out = append(*out, rkHash(m.Value))
		}
		if err := b.Close(); err != nil {
			return err
		}
	}
	return nil
}

// figures logs the byte shares between two points, from the Readers' stats
// and from the sockets, and returns them (share of bytes from rack b).
func (h *rkHarness) shares(name string, s0, s1 [rkPartitions]rkPartStats, k0, k1 map[string]int64) (statsShare, sockShare float64) {
	h.t.Helper()
	same0, other0 := rkSum(s0)
	same1, other1 := rkSum(s1)
	same, other := same1-same0, other1-other0
	fromB, total := rkShare(k0, k1, h.c.Addr(h.follower))
	if same+other > 0 {
		statsShare = float64(same) / float64(same+other)
	}
	if total > 0 {
		sockShare = float64(fromB) / float64(total)
	}
	h.t.Logf("%s: stats %d same-rack / %d other-rack bytes; sockets %d of %d bytes from broker %d (rack b): %v",
		name, same, other, fromB, total, h.follower, k1)
	rkFigure(h.t, name+"_same_rack_share_stats", "%.5f", statsShare)
	rkFigure(h.t, name+"_same_rack_share_socket", "%.5f", sockShare)
	rkFigure(h.t, name+"_cross_rack_share_stats", "%.5f", 1-statsShare)
	rkFigure(h.t, name+"_cross_rack_share_socket", "%.5f", 1-sockShare)
	rkFigure(h.t, name+"_bytes_socket", "%d", total)
	return statsShare, sockShare
}

// checkLogMatchesStats: one log line per routing change, as many as the
// stats count, for every partition.
func (h *rkHarness) checkLogMatchesStats(from, to time.Time, s0, s1 [rkPartitions]rkPartStats) {
	h.t.Helper()
	rr := rkReroutes(s0, s1)
	var lines [rkPartitions]int64
	for _, ch := range h.info.changes(from, to) {
		lines[ch.partition]++
	}
	for p := range rr {
		if lines[p] != rkCount(rr[p]) {
			h.t.Errorf("partition %d: %d routing change lines logged, stats count %d changes (%v)", p, lines[p], rkCount(rr[p]), rr[p])
		}
	}
}

func rkRequireSelector(t *testing.T, c *ktesting.Cluster) {
	t.Helper()
	if !c.HasSelector() {
		t.Skip("the brokers have no replica.selector.class (KAFKA_SELECTOR=none)")
	}
}

// ---------------------------------------------------------------------------

// Bytes stay in the rack, routing settles once and then holds.
func TestRackIntegrationSteadyState(t *testing.T) {
	c := requireRackCluster(t)
	rkRequireSelector(t, c)
	steady := rkEnvDuration(t, "RACK_STEADY_STATE", 60*time.Second)
	h := newRKHarness(t, c, rkOptions{backlog: 1000})
	k0, s0 := h.sockets.snapshot(), h.mon.snapshot()

	// Start: every partition moves to the rack-b replica, once.
	toAll := h.poll(60*time.Second, "every partition reading from the rack-b broker", func() bool { return h.mon.routedTo(h.follower) })
	var first time.Time
	h.mon.mu.Lock()
	for _, at := range h.mon.firstSame {
		if !at.IsZero() && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	h.mon.mu.Unlock()
	h.poll(60*time.Second, "the backlog read", func() bool {
		return h.caughtUp([rkPartitions]int64{1000, 1000, 1000, 1000, 1000, 1000})
	})
	k1, s1 := h.sockets.snapshot(), h.mon.snapshot()
	rkFigure(t, "time_to_first_follower_fetch_s", "%s", rkSeconds(first.Sub(h.start)))
	rkFigure(t, "time_to_all_partitions_on_follower_s", "%s", rkSeconds(toAll))
	rr := rkReroutes(s0, s1)
	maxStart := int64(0)
	for p := range rr {
		n := rkCount(rr[p])
		maxStart = max(maxStart, n)
		if n > 1 {
			t.Errorf("partition %d: %d routing changes at start (%v), want at most 1", p, n, rr[p])
		}
	}
	rkFigure(t, "start_routing_changes_max_per_partition", "%d", maxStart)
	h.shares("start", s0, s1, k0, k1)

	// Steady state: producing and consuming, no routing change at all
	// (a preference renewal at RackPreferenceTTL, 5 min by default, is
	// the only change allowed, and only in a soak longer than the TTL).
	t.Logf("steady state for %v (RACK_STEADY_STATE)", steady)
	h.hold(steady)
	k2, s2 := h.sockets.snapshot(), h.mon.snapshot()
	rr = rkReroutes(s1, s2)
	renewals := int64(2 * (steady / (5 * time.Minute)))
	var total int64
	for p := range rr {
		n := rkCount(rr[p])
		total += n
		other := n - rr[p][string(kafka.RerouteTTL)] - rr[p][string(kafka.ReroutePreferredReplica)]
		if other > 0 || n > renewals {
			t.Errorf("partition %d: routing changes in steady state: %v (allowed: %d TTL renewals)", p, rr[p], renewals)
		}
	}
	rkFigure(t, "steady_state_s", "%s", rkSeconds(steady))
	rkFigure(t, "steady_state_routing_changes", "%d", total)
	stStats, stSock := h.shares("steady", s1, s2, k1, k2)
	if !h.mon.routedTo(h.follower) {
		t.Errorf("after the steady state not every partition reads from broker %d: %+v", h.follower, h.mon.snapshot())
	}

	h.finish()
	k3, s3 := h.sockets.snapshot(), h.mon.snapshot()
	allStats, allSock := h.shares("total", s0, s3, k0, k3)
	h.checkLogMatchesStats(h.start, time.Now(), s0, s3)
	for name, v := range map[string]float64{"steady stats": stStats, "steady sockets": stSock, "total stats": allStats, "total sockets": allSock} {
		if v < 0.99 {
			t.Errorf("%s: same-rack share %.5f < 0.99", name, v)
		}
	}
	if n := h.appErrors(); n > 0 {
		t.Errorf("FetchMessage returned %d errors", n)
	}
}

// failovers returns, per partition, when reads first left broker after
// since ("follower failed" or another reason) and when they first came back.
func (h *rkHarness) failovers(broker int, since time.Time) (left, back [rkPartitions]time.Time) {
	for _, ch := range h.info.changes(since, time.Now().Add(time.Hour)) {
		p := ch.partition
		switch {
		case ch.from == broker && left[p].IsZero():
			left[p] = ch.at
		case ch.to == broker && !left[p].IsZero() && back[p].IsZero():
			back[p] = ch.at
		}
	}
	return left, back
}

// started waits until every partition reads from the rack-b broker and
// the backlog is read.
func (h *rkHarness) started(backlog int64) {
	h.t.Helper()
	h.poll(60*time.Second, "every partition reading from the rack-b broker", func() bool { return h.mon.routedTo(h.follower) })
	h.poll(60*time.Second, "the backlog read", func() bool {
		return h.caughtUp([rkPartitions]int64{backlog, backlog, backlog, backlog, backlog, backlog})
	})
}

// outOfISR reports whether broker is in no ISR of the topic, as the
// rack-a broker sees it.
func (h *rkHarness) outOfISR(broker int) bool {
	ps, err := partitionsOn(h.bootAddr, h.topic)
	if err != nil || len(ps) != rkPartitions {
		return false
	}
	for _, p := range ps {
		if hasBroker(p.Isr, broker) {
			return false
		}
	}
	return true
}

// inEveryISR reports whether broker is in every ISR of the topic, as the
// rack-a broker sees it.
func (h *rkHarness) inEveryISR(broker int) bool {
	ps, err := partitionsOn(h.bootAddr, h.topic)
	if err != nil || len(ps) != rkPartitions {
		return false
	}
	for _, p := range ps {
		if !hasBroker(p.Isr, broker) {
			return false
		}
	}
	return true
}

func (h *rkHarness) appErrors() int {
	n := 0
	for _, cons := range h.consumers {
		cons.mu.Lock()
		n += len(cons.errs)
		cons.mu.Unlock()
	}
	return n
}

// The rack-b broker is killed (SIGKILL) mid-stream: reads go back to the
// leaders at once and continue within seconds, nothing lost or repeated;
// the dead broker is probed at most twice per partition (cooldowns of 2 s,
// then 4 s, while the leaders still name it, until it leaves the ISR);
// once restarted, reads return to it within 5 s of its rejoining the ISR.
func TestRackIntegrationFollowerKilled(t *testing.T) {
	c := requireRackCluster(t)
	rkRequireSelector(t, c)
	const cooldown = 5 * time.Second
	h := newRKHarness(t, c, rkOptions{backlog: 300, cooldown: cooldown, ttl: 5 * time.Second})
	h.started(300)
	s0 := h.mon.snapshot()

	killAt := time.Now()
	ktesting.KillBroker(t, h.follower)
	killedAt := time.Now() // the tool returns once the process is gone
	h.poll(30*time.Second, "every partition away from the killed broker", func() bool { return h.mon.routedAway(h.follower) })
	away := time.Since(killAt)
	// Messages written once the broker is dead: they commit only when the
	// leaders have dropped it from their ISR (replica.lag.time.max.ms).
	recovered := h.deliveredPast(killedAt, 20*time.Second, "every partition returning messages produced after the kill")
	rkFigure(t, "kill_route_away_s", "%s", rkSeconds(away))
	rkFigure(t, "kill_recovery_s", "%s", rkSeconds(recovered))

	// Dead for several cooldowns, out of every ISR: everything is read
	// from the leaders.
	h.poll(30*time.Second, "the killed broker out of every ISR", func() bool { return h.outOfISR(h.follower) })
	k0 := h.sockets.snapshot()
	h.hold(time.Until(killAt.Add(4 * cooldown)))
	k1 := h.sockets.snapshot()
	if fromB, total := rkShare(k0, k1, c.Addr(h.follower)); fromB != 0 || total == 0 {
		t.Errorf("while broker %d was dead: %d of %d bytes read from it", h.follower, fromB, total)
	}
	retries := 0
	for _, ch := range h.info.changes(killAt, time.Now()) {
		if ch.to == h.follower {
			retries++
		}
	}
	rkFigure(t, "kill_leases_of_dead_broker", "%d", retries)
	if retries > 2*rkPartitions {
		t.Errorf("the dead broker was tried %d times by %d partitions: cooldowns do not grow", retries, rkPartitions)
	}

	restartAt := time.Now()
	ktesting.RestartBroker(t, h.follower)
	rkFigure(t, "kill_restart_tool_s", "%s", rkSeconds(time.Since(restartAt)))
	h.poll(120*time.Second, "the restarted broker in every ISR", func() bool { return h.inEveryISR(h.follower) })
	rejoinedAt := time.Now()
	h.poll(120*time.Second, "every partition reading from the restarted broker", func() bool { return h.mon.routedTo(h.follower) })
	backAt := time.Now()
	// From the start of the restart: the JVM's start-up is included.
	rkFigure(t, "kill_return_after_restart_s", "%s", rkSeconds(backAt.Sub(restartAt)))
	rkFigure(t, "kill_return_after_isr_rejoin_s", "%s", rkSeconds(backAt.Sub(rejoinedAt)))
	if back := backAt.Sub(rejoinedAt); back > 5*time.Second {
		t.Errorf("every partition back on broker %d %v after it rejoined every ISR, want <= 5s", h.follower, back)
	}
	left, returned := h.failovers(h.follower, killAt)
	for p := range left {
		if left[p].IsZero() || returned[p].IsZero() {
			t.Errorf("partition %d: no failover and return logged (left %v, back %v)", p, left[p], returned[p])
		}
	}
	t.Logf("broker %d was dead for %v", h.follower, restartAt.Sub(killAt))

	h.finish()
	s1 := h.mon.snapshot()
	h.checkLogMatchesStats(killAt, time.Now(), s0, s1)
	rkFigure(t, "kill_app_errors", "%d", h.appErrors())
	t.Logf("routing changes from the kill on: %v", rkReroutes(s0, s1))
}

// The rack-b broker is stopped (SIGSTOP) for 30 s while reading; meanwhile
// partition 0's leadership moves from rack a to rack c, and the stopped
// broker falls out of every ISR. Reading continues within seconds of the
// pause; nothing lost or repeated; after SIGCONT reads return to it.
func TestRackIntegrationFollowerPaused(t *testing.T) {
	c := requireRackCluster(t)
	rkRequireSelector(t, c)
	const pause = 30 * time.Second
	a, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "c")
	// ReadBatchTimeout stays at its default (10 s): what takes the partitions off the frozen follower is
	// ReplicaStallTimeout (default 3 s past MaxWait).
	h := newRKHarness(t, c, rkOptions{backlog: 300, cooldown: 5 * time.Second, ttl: 5 * time.Second})
	h.started(300)
	s0 := h.mon.snapshot()

	pausedAt := time.Now()
	ktesting.PauseBroker(t, h.follower)
	stoppedAt := time.Now()
	h.poll(30*time.Second, "every partition away from the paused broker", func() bool { return h.mon.routedAway(h.follower) })
	away := time.Since(pausedAt)
	recovered := h.deliveredPast(stoppedAt, 20*time.Second, "every partition returning messages produced after the pause")
	rkFigure(t, "pause_route_away_s", "%s", rkSeconds(away))
	rkFigure(t, "pause_recovery_s", "%s", rkSeconds(recovered))

	// Partition 0 (led in rack a): replicas reordered to [c, b, a], then a
	// preferred leader election moves its leadership to rack c.
	ctx := testContext(t, 60*time.Second)
	admin := dialController(t, c) // a ZooKeeper cluster reassigns and elects only at its controller
	var err error
	h.poll(30*time.Second, "partition 0's replicas reordered", func() bool {
		err = reorderReplicas(ctx, admin, h.topic, 0, []int{cc, h.follower, a})
		if err != nil {
			t.Logf("reordering replicas: %v", err)
		}
		return err == nil
	})
	// With the follower paused, a KRaft controller was seen to apply the
	// reorder (and so the election) only once the paused broker had left the
	// ISR (replica.lag.time.max.ms, 30 s): wait up to the whole pause, and some.
	h.poll(pause+15*time.Second, "partition 0 led in rack c", func() bool {
		err = electPreferredLeader(ctx, admin, h.topic, 0)
		if err != nil && !errors.Is(err, kafka.ElectionNotNeeded) {
			t.Logf("electing the preferred leader: %v", err)
		}
		ps, perr := partitionsOn(c.Addr(a), h.topic)
		return perr == nil && len(ps) == rkPartitions && ps[0].Leader.ID == cc
	})
	movedAt := time.Now()
	moved := h.deliveredPast(movedAt, 20*time.Second, "every partition returning messages produced after the leader move")
	rkFigure(t, "pause_leader_move_recovery_s", "%s", rkSeconds(moved))
	h.poll(30*time.Second, "partition 0 read from its new leader", func() bool {
		for _, ch := range h.info.changes(pausedAt, time.Now()) {
			if ch.partition == 0 && ch.to == cc && ch.reason == "leader changed" {
				return true
			}
		}
		return false
	})
	h.poll(pause, "the paused broker out of every ISR", func() bool { return h.outOfISR(h.follower) })
	h.hold(time.Until(pausedAt.Add(pause)))
	ktesting.ResumeBroker(t, h.follower)
	resumedAt := time.Now()
	h.poll(120*time.Second, "every partition reading from the resumed broker", func() bool { return h.mon.routedTo(h.follower) })
	_, returned := h.failovers(h.follower, pausedAt)
	var backs []string
	var lastBack time.Time
	for p, at := range returned {
		if at.IsZero() {
			t.Errorf("partition %d: no return to broker %d logged", p, h.follower)
			continue
		}
		backs = append(backs, fmt.Sprintf("p%d=%s", p, rkSeconds(at.Sub(resumedAt))))
		if at.After(lastBack) {
			lastBack = at
		}
	}
	t.Logf("returns after the resume (s): %s", strings.Join(backs, " "))
	rkFigure(t, "pause_return_after_resume_s", "%s", rkSeconds(lastBack.Sub(resumedAt)))
	t.Logf("paused for %v", resumedAt.Sub(pausedAt))

	h.finish()
	s1 := h.mon.snapshot()
	h.checkLogMatchesStats(pausedAt, time.Now(), s0, s1)
	rkFigure(t, "pause_app_errors", "%d", h.appErrors())
	t.Logf("routing changes from the pause on: %v", rkReroutes(s0, s1))
}

// Brokers without a replica selector never name a preferred replica: the
// rack-b Readers read everything from the leaders (racks a and c) and never
// return an error.
func TestRackIntegrationNoSelector(t *testing.T) {
	c := requireRackCluster(t)
	if c.HasSelector() {
		if c.Tool == "" {
			t.Skip("the cluster has a replica selector, and without its tool (KAFKA_CLUSTER_TOOL) no selector-less one can be started")
		}
		c = ktesting.StartCluster(t, ktesting.ClusterOptions{Selector: "none", PortBase: secondClusterPortBase(t)})
	}
	h := newRKHarness(t, c, rkOptions{backlog: 300})
	k0, s0 := h.sockets.snapshot(), h.mon.snapshot()
	h.poll(60*time.Second, "the backlog read", func() bool {
		return h.caughtUp([rkPartitions]int64{300, 300, 300, 300, 300, 300})
	})
	h.hold(10 * time.Second)
	h.finish()
	k1, s1 := h.sockets.snapshot(), h.mon.snapshot()
	stats, sock := h.shares("noselector", s0, s1, k0, k1)
	if stats != 0 {
		t.Errorf("%.5f of the bytes read from rack b per the stats; the brokers name no replica", stats)
	}
	if sock > 0.01 {
		t.Errorf("%.5f of the socket bytes from the rack-b broker (metadata only expected)", sock)
	}
	for p, rr := range rkReroutes(s0, s1) {
		if len(rr) > 0 {
			t.Errorf("partition %d: routing changes %v", p, rr)
		}
		if b := s1[p].broker; b != h.leaders[p] {
			t.Errorf("partition %d read from broker %d, its leader is %d", p, b, h.leaders[p])
		}
	}
	if n := h.appErrors(); n > 0 {
		t.Errorf("FetchMessage returned %d errors", n)
	}
	h.errLog.mu.Lock()
	checks := 0
	for _, ln := range *h.errLog.lines {
		if strings.Contains(ln.text, "rack-aware fetching is inactive (no replica selector)") {
			checks++ // the rack check saying why, at most once per Reader
			continue
		}
		if strings.HasPrefix(ln.text, h.errLog.prefix) {
			t.Errorf("error logged: %s", ln.text)
		}
	}
	h.errLog.mu.Unlock()
	if checks > rkPartitions {
		t.Errorf("the rack check logged %d times for %d Readers", checks, rkPartitions)
	}
}
