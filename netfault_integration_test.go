package kafka_test

// TestNetFaultRackB: network faults on the path between a rack-b group
// Reader and the rack-b broker only, through the cluster's fault proxy
// (testing/netfault; a cluster started with KAFKA_NETFAULT=1, as
// `make test-netfault` does). The brokers replicate over their own
// listener, so the rack-b broker stays healthy and in every ISR: only the
// client's path to it black-holes or slows, as when a zone's network to
// one broker fails. The rack-fault harness (rack_faults_integration_test.go)
// produces (acks=all, ~2400 msg/s to a 6-partition RF-3 topic led in racks
// a and c), accounts deliveries and samples the routing; one window per
// fault:
//
//	blackhole  no byte either way on the rack-b broker's client path for 30 s, then healed
//	latency    300 ms added each way on that path for 20 s
//
// The figures are logged as NETFAULTFIGURE lines:
//
//	go test -count=1 -v -run TestNetFaultRackB . | grep NETFAULTFIGURE

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
	"github.com/rackfetch/kafka-go/testing/netfault"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	nfBlackhole = 30 * time.Second
	nfLatency   = 20 * time.Second
	// nfLeaveBound: a fetch to a follower that answers nothing is given up
	// after the broker's long poll (500 ms, whatever MaxWait says) plus
	// ReplicaStallTimeout (3 s by default).
	nfLeaveBound = 4 * time.Second
	// nfBackBound: reads are back on the rack-b broker this soon after its
	// path heals.
	nfBackBound = 5 * time.Second
	// nfDialsPerSecond bounds the connections the Reader opens to the
	// black-holed address once it has left it (a retry every cooldown, not
	// a loop).
	nfDialsPerSecond = 1.0
)

// nfTraffic counts the Reader's dials and socket writes per address (its
// requests: a black-holed path accepts connections and swallows writes
// until the socket buffers fill).
type nfTraffic struct {
	inner *rkSockets
	mu    sync.Mutex
	dials map[string]int64
	wr    map[string]int64
}

func (s *nfTraffic) dial(ctx context.Context, network, address string) (net.Conn, error) {
	s.mu.Lock()
	s.dials[address]++
	s.mu.Unlock()
	c, err := s.inner.dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return &nfConn{Conn: c, addr: address, s: s}, nil
}

func (s *nfTraffic) counts(addr string) (dials, writes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials[addr], s.wr[addr]
}

type nfConn struct {
	net.Conn
	addr string
	s    *nfTraffic
}

func (c *nfConn) Write(p []byte) (int, error) {
	c.s.mu.Lock()
	c.s.wr[c.addr]++
	c.s.mu.Unlock()
	return c.Conn.Write(p)
}

// routes returns the broker each partition of topic is read from (-1: not read).
func nfRoutes(r *kafka.Reader, topic string) [rkPartitions]int {
	var out [rkPartitions]int
	for p := range out {
		out[p] = -1
	}
	for _, ps := range r.RoutingStats().Partitions {
		if ps.Topic == topic && ps.Partition >= 0 && ps.Partition < rkPartitions {
			out[ps.Partition] = ps.Broker
		}
	}
	return out
}

// nfCount is how many partitions read from broker.
func nfCount(routes [rkPartitions]int, broker int) int {
	n := 0
	for _, b := range routes {
		if b == broker {
			n++
		}
	}
	return n
}

// nfWait polls cond every 50 ms until it holds or limit passes, and
// returns how long after from it held (ok false: not within limit).
func nfWait(from time.Time, limit time.Duration, cond func() bool) (time.Duration, bool) {
	deadline := from.Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return time.Since(from), true
		}
		if time.Now().After(deadline) {
			return time.Since(from), false
		}
		<-tick.C
	}
}

func nfFigure(t *testing.T, name, format string, args ...any) {
	t.Helper()
	t.Logf("NETFAULTFIGURE %s=%s", name, fmt.Sprintf(format, args...))
}

func TestNetFaultRackB(t *testing.T) {
	c, nf := ktesting.NetFault(t)
	rkRequireSelector(t, c)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	bAddr := c.FaultAddr(b)
	ctx := testContext(t, 5*time.Minute)

	h := &rfHarness{t: t, c: c, b: b, sockets: newRKSockets(), held: newRFHeld(), down: map[int]bool{}, metaConns: map[int]*kafka.Conn{}}
	h.topic = createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: rkAssignments(a, b, cc)})
	h.info, h.errLog = newRKLogs(t)
	// A group coordinated outside rack b: the fault is the routing's, not
	// the coordinator's.
	for i := 0; h.group == ""; i++ {
		require.Less(t, i, 50, "no group id of 50 is coordinated outside rack b")
		if g := fmt.Sprintf("%s-g%d", h.topic, i); h.coordinator(g) != b {
			h.group = g
		}
	}

	monCtx, monStop := context.WithCancel(context.Background())
	monDone := make(chan struct{})
	go h.monitor(monCtx, monDone)
	defer func() { monStop(); <-monDone }()
	stopProducer := h.startProducer()
	defer stopProducer()

	traffic := &nfTraffic{inner: h.sockets, dials: map[string]int64{}, wr: map[string]int64{}}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        c.FaultBrokers, // every broker's address is then the proxy's
		GroupID:        h.group,
		Topic:          h.topic,
		Rack:           rkRack,
		Dialer:         &kafka.Dialer{ClientID: "netfault-reader", Timeout: 10 * time.Second, DialFunc: traffic.dial},
		CommitInterval: time.Second,
		StartOffset:    kafka.FirstOffset,
		Logger:         rfQuiet{h.info},
		ErrorLogger:    h.errLog,
	})
	h.mu.Lock()
	for p := range h.runMax {
		h.runMax[p] = -1
	}
	h.reader = r
	h.mu.Unlock()
	runCtx, runStop := context.WithCancel(context.Background())
	var runWG sync.WaitGroup
	runWG.Add(1)
	go func() { defer runWG.Done(); h.consume(runCtx, r) }()
	defer func() {
		runStop()
		runWG.Wait()
		assert.NoError(t, r.Close(), "closing the Reader")
	}()

	onB := func() bool { return nfCount(nfRoutes(r, h.topic), b) == rkPartitions }
	ws := h.begin("start")
	ws.newRun = true
	h.poll(60*time.Second, "every partition delivering", h.runDelivering)
	h.poll(60*time.Second, "every partition read from the rack-b broker", onB)
	ws.gapFrom, ws.xFrom = time.Now(), time.Now()

	// --- black hole both ways on the rack-b broker's client path.
	wb := h.begin("blackhole")
	st0 := h.proxyStats(ctx, nf, b)
	reroutes0 := r.RoutingStats().Reroutes
	faultAt := time.Now()
	require.NoError(t, nf.Set(ctx, b, netfault.Fault{Blackhole: true, For: 2 * nfBlackhole})) // For: a safety net
	left, leftOK := nfWait(faultAt, nfBlackhole-time.Second, func() bool { return nfCount(nfRoutes(r, h.topic), b) == 0 })
	leftAt := time.Now()
	d0, w0 := traffic.counts(bAddr)
	st1 := h.proxyStats(ctx, nf, b)
	h.hold(time.Until(faultAt.Add(nfBlackhole)))
	d1, w1 := traffic.counts(bAddr)
	st2 := h.proxyStats(ctx, nf, b)
	require.NoError(t, nf.Clear(ctx, b))
	healedAt := time.Now()
	wb.restored = healedAt
	back, backOK := nfWait(healedAt, 60*time.Second, onB)
	reroutes1 := r.RoutingStats().Reroutes
	afterLeft := healedAt.Sub(leftAt).Seconds()

	// --- 300 ms each way on the same path.
	wl := h.begin("latency")
	k0, rs0 := h.sockets.snapshot(), r.RoutingStats()
	require.NoError(t, nf.Set(ctx, b, netfault.Fault{Delay: 300 * time.Millisecond, For: 2 * nfLatency}))
	minOnB := rkPartitions
	h.pollFor(nfLatency, func() { minOnB = min(minOnB, nfCount(nfRoutes(r, h.topic), b)) })
	k1, rs1 := h.sockets.snapshot(), r.RoutingStats()
	endOnB := nfCount(nfRoutes(r, h.topic), b)
	require.NoError(t, nf.Clear(ctx, b))
	wl.restored = time.Now()
	latBack, latBackOK := nfWait(wl.restored, 60*time.Second, onB)

	// --- the end: every acknowledged message read.
	h.mu.Lock()
	h.prodStopped = time.Now()
	h.mu.Unlock()
	stopProducer()
	h.poll(60*time.Second, "every acknowledged message read", h.allAckedRead)
	h.mu.Lock()
	h.windows[len(h.windows)-1].end = time.Now()
	h.mu.Unlock()

	samples := h.samplesCopy()
	nfFigure(t, "blackhole_left_s", "%s (all %d partitions off broker %d: %v)", rkSeconds(left), rkPartitions, b, leftOK)
	nfFigure(t, "blackhole_back_after_heal_s", "%s (all back: %v)", rkSeconds(back), backOK)
	nfFigure(t, "blackhole_dials_to_b_per_s", "%.2f (%d in %.1f s after leaving)", float64(d1-d0)/afterLeft, d1-d0, afterLeft)
	nfFigure(t, "blackhole_writes_to_b_per_s", "%.2f (%d)", float64(w1-w0)/afterLeft, w1-w0)
	nfFigure(t, "blackhole_proxy_accepted", "%d before leaving, %d after (in %.1f s)", st1.Accepted-st0.Accepted, st2.Accepted-st1.Accepted, afterLeft)
	nfFigure(t, "blackhole_reroutes", "%v", rrDiff(reroutes0, reroutes1))
	fromB, total := rkShare(k0, k1, bAddr)
	nfFigure(t, "latency_min_partitions_on_b", "%d of %d (at the end %d)", minOnB, rkPartitions, endOnB)
	nfFigure(t, "latency_cross_rack_share_socket", "%.4f (%d bytes)", rfCross(fromB, total), total)
	nfFigure(t, "latency_cross_rack_share_stats", "%.4f", rfCross(rs1.SameRackBytes-rs0.SameRackBytes, rs1.Bytes-rs0.Bytes))
	nfFigure(t, "latency_reroutes", "%v", rrDiff(rs0.Reroutes, rs1.Reroutes))
	nfFigure(t, "latency_back_after_heal_s", "%s (all back: %v)", rkSeconds(latBack), latBackOK)

	for _, w := range h.windows {
		f := h.figures(w, samples, nil)
		nfFigure(t, w.name, "lost=%d ooo=%d dup=%d fetch_err=%d commit_err=%d acked=%d gap_s=%s(p%d) raw_gap_s=%s",
			f.lost, f.ooo, f.dup, f.fetchErr, f.commErr, f.acked, rkSeconds(f.gap), f.gapP, rkSeconds(f.rawGap))
		assert.Zero(t, f.lost, "%s: acknowledged messages never read", w.name)
		assert.Zero(t, f.ooo, "%s: messages out of order", w.name)
		assert.Zero(t, f.dup, "%s: messages returned twice", w.name)
		assert.Zero(t, f.fetchErr, "%s: errors returned by FetchMessage", w.name)
		assert.Zero(t, f.commErr, "%s: errors returned by CommitMessages", w.name)
		if w != ws {
			assert.Less(t, f.gap, nfBackBound, "%s: longest delivery gap (partition %d)", w.name, f.gapP)
		}
	}
	// The fault is the network's: the rack-b broker stays in every ISR.
	for _, s := range samples {
		if s.known && !s.at.Before(faultAt) && s.at.Before(wl.restored) {
			require.True(t, h.inISR(s), "at %s broker %d left an ISR during a client-path fault: replication was hit", s.at.Format("15:04:05.000"), b)
		}
	}
	assert.True(t, leftOK, "reads still on broker %d %v into the black hole", b, left)
	assert.LessOrEqual(t, left, nfLeaveBound, "reads leaving the black-holed broker")
	assert.True(t, backOK, "reads not back on broker %d within 60 s of its path healing", b)
	assert.LessOrEqual(t, back, nfBackBound, "reads back on broker %d after its path healed", b)
	assert.LessOrEqual(t, float64(d1-d0)/afterLeft, nfDialsPerSecond, "connections per second to the black-holed address once left")
	assert.True(t, latBackOK, "reads not back on broker %d within 60 s of the latency ending", b)
}

// startProducer writes to every partition (h.produce) through a Writer on
// the brokers' own listener, outside the fault proxy; the returned func
// stops it (once).
func (h *rfHarness) startProducer() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &kafka.Writer{
		Addr:         kafka.TCP(h.c.Brokers...),
		Topic:        h.topic,
		RequiredAcks: kafka.RequireAll,
		Transport:    &kafka.Transport{Dial: h.held.dial},
		Balancer: kafka.BalancerFunc(func(m kafka.Message, ps ...int) int {
			p, _ := strconv.Atoi(string(m.Key))
			return p
		}),
	}
	var wg sync.WaitGroup
	for p := 0; p < rkPartitions; p++ {
		wg.Add(1)
		go func(p int) { defer wg.Done(); h.produce(ctx, w, p) }(p)
	}
	var once sync.Once
	return func() {
		once.Do(func() { cancel(); wg.Wait(); w.Close() })
	}
}

// allAckedRead: every message the producer had acknowledged was read.
func (h *rfHarness) allAckedRead() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for p := range h.acks {
		for _, a := range h.acks[p] {
			for s := a.seq0; s < a.seq0+int64(a.n); s++ {
				if !h.readSeq[p].has(s) {
					return false
				}
			}
		}
	}
	return true
}

// pollFor keeps the stream running for d (a fault's duration), calling f
// every 100 ms.
func (h *rfHarness) pollFor(d time.Duration, f func()) {
	end := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(end) {
		f()
		<-tick.C
	}
}

func (h *rfHarness) proxyStats(ctx context.Context, nf *netfault.Client, id int) netfault.Stats {
	h.t.Helper()
	st, err := nf.Status(ctx)
	require.NoError(h.t, err, "the fault proxy's status")
	for _, s := range st {
		if s.ID == id {
			return s.Stats
		}
	}
	h.t.Fatalf("the fault proxy has no broker %d", id)
	return netfault.Stats{}
}

func rrDiff(before, after map[kafka.RerouteReason]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[fmt.Sprint(k)] = d
		}
	}
	return out
}
