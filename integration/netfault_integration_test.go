package integration

// The network fault tests: faults on the path between a rack-b group
// Reader and the rack-b broker only, through the cluster's fault proxy
// (testing/netfault; a cluster started with KAFKA_NETFAULT=1, as
// `make test-netfault` and CI do). The brokers replicate over their own
// listener, so the rack-b broker stays healthy and in every ISR (asserted):
// only the client's path to it black-holes, slows or breaks, as when a
// zone's network to one broker fails. The rack-fault harness
// (rack_faults_integration_test.go) produces (acks=all, ~2400 msg/s to a
// 6-partition RF-3 topic led in racks a and c, through the brokers' own
// listener), accounts deliveries and samples the ISRs; one window per fault.
//
//	TestNetFaultRackB        a 30 s black hole both ways, then +300 ms each way for 20 s, with the bounds
//	TestNetFaultRackBPaths   lost replies, a silent peer, resets, 5 % and 20 % loss, 1 Mbit/s (15 s each):
//	                         nothing lost, out of order or returned as an error, reads back after the heal;
//	                         what the routing does reported
//
// The figures are logged as NETFAULTFIGURE lines:
//
//	go test -count=1 -v -run TestNetFault ./integration | grep NETFAULTFIGURE

import (
	"context"
	"fmt"
	"net"
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
	// nfLeaveBound: a fetch to a follower that answers nothing is given up
	// after the broker's long poll (500 ms, whatever MaxWait says) plus
	// ReplicaStallTimeout (3 s by default).
	nfLeaveBound = 4 * time.Second
	// nfBound: the longest delivery gap, and how soon reads are back on the
	// rack-b broker after its path heals.
	nfBound = 5 * time.Second
	// nfDialsPerSecond bounds the connections the Reader opens to the
	// black-holed address once it has left it (a probe per cooldown, not a
	// loop).
	nfDialsPerSecond = 1.0
	// nfBackWait is how long a window waits for reads to come back to the
	// rack-b broker once its path healed (the measurement's limit; the
	// bound is nfBound).
	nfBackWait = 60 * time.Second
)

func TestNetFaultRackB(t *testing.T) {
	n := startNFRun(t)

	bh := n.apply("blackhole", netfault.Fault{Blackhole: true}, 30*time.Second)
	lat := n.apply("latency-300ms", netfault.Fault{Delay: 300 * time.Millisecond}, 20*time.Second)
	figs := n.finish()

	assert.True(t, bh.leftOK, "reads still on broker %d after 30 s of black hole", n.b)
	assert.LessOrEqual(t, bh.left, nfLeaveBound, "reads leaving the black-holed broker")
	assert.True(t, bh.backOK, "reads not back on broker %d within %v of its path healing", n.b, nfBackWait)
	assert.LessOrEqual(t, bh.back, nfBound, "reads back on broker %d after its path healed", n.b)
	assert.LessOrEqual(t, bh.dialsPerS, nfDialsPerSecond, "connections per second to the black-holed address once left")
	assert.Less(t, figs["blackhole"].gap, nfBound, "longest delivery gap in the black hole (partition %d)", figs["blackhole"].gapP)
	assert.True(t, lat.backOK, "reads not back on broker %d within %v of the latency ending", n.b, nfBackWait)
	assert.Less(t, figs["latency-300ms"].gap, nfBound, "longest delivery gap under +300 ms (partition %d)", figs["latency-300ms"].gapP)
}

func TestNetFaultRackBPaths(t *testing.T) {
	n := startNFRun(t)
	for _, fc := range []struct {
		name  string
		fault netfault.Fault
		// slow: a path that delivers, too slowly to keep up. Reads that
		// left it must not come back while it is still slow (the probes
		// measure the path, not only reach the broker).
		slow bool
	}{
		{"oneway", netfault.Fault{DropReplies: true}, false},
		{"silent", netfault.Fault{Silent: true}, false},
		{"reset", netfault.Fault{Reset: true}, false},
		{"loss-5pct", netfault.Fault{Loss: 0.05}, false},
		{"loss-20pct", netfault.Fault{Loss: 0.2}, true},
		{"bandwidth-1mbit", netfault.Fault{Rate: 1_000_000 / 8}, true},
	} {
		o := n.apply(fc.name, fc.fault, 15*time.Second)
		assert.True(t, o.backOK, "%s: reads not back on broker %d within %v of its path healing", fc.name, n.b, nfBackWait)
		if fc.slow {
			assert.Zero(t, o.returns, "%s: reads went back to broker %d while its path was still slow", fc.name, n.b)
			assert.LessOrEqual(t, o.back, nfBound, "%s: reads back on broker %d after its path healed", fc.name, n.b)
		}
	}
	n.finish()
}

// ---------------------------------------------------------------------------

// nfRun is one rack-b group Reader reading through the fault proxy while
// the rack-fault harness produces and samples.
type nfRun struct {
	*rfHarness
	nf      *netfault.Client
	r       *kafka.Reader
	traffic *nfTraffic
	bAddr   string // the rack-b broker's address behind the proxy
	ctx     context.Context
	first   *rfWindow
	faultAt time.Time // the first fault
	stop    func()    // the producer
}

// startNFRun creates the topic, starts the producer, the monitor and the
// Reader, and returns once every partition is read from the rack-b broker.
func startNFRun(t *testing.T) *nfRun { return startNFRunOn(t, rkAssignments) }

// startNFRunOn is startNFRun on a topic placed by assign (brokers of racks
// a, b and c).
func startNFRunOn(t *testing.T, assign func(a, b, c int) []kafka.ReplicaAssignment) *nfRun {
	c, nf := ktesting.NetFault(t)
	rkRequireSelector(t, c)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	h := &rfHarness{t: t, c: c, b: b, sockets: newRKSockets(), held: newRFHeld(), down: map[int]bool{}, metaConns: map[int]*kafka.Conn{}}
	h.topic = createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: assign(a, b, cc)})
	h.info, h.errLog = newRKLogs(t)
	// A group coordinated outside rack b: the fault is the routing's, not
	// the coordinator's.
	for i := 0; h.group == ""; i++ {
		require.Less(t, i, 50, "no group id of 50 is coordinated outside rack b")
		if g := fmt.Sprintf("%s-g%d", h.topic, i); h.coordinator(g) != b {
			h.group = g
		}
	}
	n := &nfRun{rfHarness: h, nf: nf, bAddr: c.FaultAddr(b), ctx: testContext(t, 10*time.Minute)}

	monCtx, monStop := context.WithCancel(context.Background())
	monDone := make(chan struct{})
	go h.monitor(monCtx, monDone)
	t.Cleanup(func() { monStop(); <-monDone })
	n.stop = h.startProducer()
	t.Cleanup(n.stop)

	n.traffic = &nfTraffic{inner: h.sockets, dials: map[string]int64{}}
	// Bootstrapping from the proxy's addresses, the Reader is given them for
	// every broker.
	n.r = h.newReaderVia(c.FaultBrokers, n.traffic.dial)
	h.mu.Lock()
	for p := range h.runMax {
		h.runMax[p] = -1
	}
	h.reader = n.r
	h.mu.Unlock()
	runCtx, runStop := context.WithCancel(context.Background())
	var runWG sync.WaitGroup
	runWG.Add(1)
	go func() { defer runWG.Done(); h.consume(runCtx, n.r) }()
	t.Cleanup(func() {
		runStop()
		runWG.Wait()
		assert.NoError(t, n.r.Close(), "closing the Reader")
	})

	n.first = h.begin("start")
	n.first.newRun = true
	h.poll(60*time.Second, "every partition delivering", h.runDelivering)
	h.poll(60*time.Second, "every partition read from the rack-b broker", n.onB)
	n.first.gapFrom, n.first.xFrom = time.Now(), time.Now()
	return n
}

// routes returns the broker each partition is read from (-1: not read).
func (n *nfRun) routes() [rkPartitions]int {
	var out [rkPartitions]int
	for p := range out {
		out[p] = -1
	}
	for _, ps := range n.r.RoutingStats().Partitions {
		if ps.Topic == n.topic && ps.Partition >= 0 && ps.Partition < rkPartitions {
			out[ps.Partition] = ps.Broker
		}
	}
	return out
}

// onB is how many partitions are read from the rack-b broker.
func (n *nfRun) countOnB() int {
	k := 0
	for _, b := range n.routes() {
		if b == n.b {
			k++
		}
	}
	return k
}

func (n *nfRun) onB() bool { return n.countOnB() == rkPartitions }

// nfOutcome is what the Reader did in one fault window.
type nfOutcome struct {
	left      time.Duration // from the fault until no partition was read from the rack-b broker
	leftOK    bool          // that happened during the fault
	minOnB    int           // the fewest partitions on the rack-b broker during the fault
	back      time.Duration // from the heal until every partition was read there again
	backOK    bool          // within nfBackWait
	dialsPerS float64       // connections to the rack-b broker's address per second once left
	crossRack float64       // share of the socket bytes during the fault not from the rack-b broker
	// returns counts the times partitions came back to the rack-b broker
	// during the fault, after some had left it: a return to a path still
	// faulty.
	returns int
	// slowByFetch and slowByConfig count the probes that found the path
	// too slow during the fault, by what they measured it with.
	slowByFetch, slowByConfig int
}

// apply puts fault f on the rack-b broker's client path for d (the proxy
// clears it itself after 2d should the test stop first), then clears it,
// and waits for reads to come back to the rack-b broker.
func (n *nfRun) apply(name string, f netfault.Fault, d time.Duration) nfOutcome {
	n.t.Helper()
	w := n.begin(name)
	var o nfOutcome
	o.minOnB = rkPartitions
	rr0, k0 := n.r.RoutingStats().Reroutes, n.sockets.snapshot()
	f.For = 2 * d
	at := time.Now()
	if n.faultAt.IsZero() {
		n.faultAt = at
	}
	require.NoError(n.t, n.nf.Set(n.ctx, n.b, f), "setting %s on broker %d's path", name, n.b)
	var leftAt time.Time
	var dialsAtLeft int64
	prev := rkPartitions
	n.pollFor(d, func() {
		k := n.countOnB()
		if k > prev {
			o.returns++
		}
		prev = k
		o.minOnB = min(o.minOnB, k)
		if k == 0 && !o.leftOK {
			o.left, o.leftOK, leftAt = time.Since(at), true, time.Now()
			dialsAtLeft = n.traffic.count(n.bAddr)
		}
	})
	k1 := n.sockets.snapshot()
	dials := n.traffic.count(n.bAddr)
	o.slowByFetch = n.info.count(at, time.Now(), "stays left", "Fetch")
	o.slowByConfig = n.info.count(at, time.Now(), "stays left", "DescribeConfigs")
	require.NoError(n.t, n.nf.Clear(n.ctx, n.b), "clearing broker %d's path", n.b)
	healed := time.Now()
	w.restored = healed
	o.back, o.backOK = nfWaitFor(healed, nfBackWait, n.onB)
	if o.leftOK {
		o.dialsPerS = float64(dials-dialsAtLeft) / healed.Sub(leftAt).Seconds()
	}
	fromB, total := rkShare(k0, k1, n.bAddr)
	o.crossRack = rfCross(fromB, total)
	left := "-"
	if o.leftOK {
		left = rkSeconds(o.left)
	}
	n.t.Logf("NETFAULTFIGURE %s fault=%q left_s=%s min_partitions_on_b=%d cross_rack_share_socket=%.4f(%d bytes) dials_to_b_per_s_after_left=%.2f returns_during_fault=%d back_after_heal_s=%s(ok=%v) slow_probes_fetch=%d slow_probes_config=%d reroutes=%v",
		name, f.String(), left, o.minOnB, o.crossRack, total, o.dialsPerS, o.returns, rkSeconds(o.back), o.backOK, o.slowByFetch, o.slowByConfig, rrDiff(rr0, n.r.RoutingStats().Reroutes))
	return o
}

// finish stops the producer, waits until every acknowledged message was
// read, and asserts per window: nothing lost, out of order or repeated, no
// error returned to the application, and the rack-b broker in every ISR
// throughout the faults. It returns the windows' figures by name.
func (n *nfRun) finish() map[string]rfFigures {
	t := n.t
	t.Helper()
	n.mu.Lock()
	n.prodStopped = time.Now()
	n.mu.Unlock()
	n.stop()
	n.poll(60*time.Second, "every acknowledged message read", n.allAckedRead)
	n.mu.Lock()
	last := n.windows[len(n.windows)-1]
	last.end = time.Now()
	n.mu.Unlock()

	samples := n.samplesCopy()
	out := map[string]rfFigures{}
	for _, w := range n.windows {
		f := n.figures(w, samples, nil)
		out[w.name] = f
		t.Logf("NETFAULTFIGURE %s lost=%d ooo=%d dup=%d fetch_err=%d commit_err=%d acked=%d gap_s=%s(p%d)",
			w.name, f.lost, f.ooo, f.dup, f.fetchErr, f.commErr, f.acked, rkSeconds(f.gap), f.gapP)
		assert.Zero(t, f.lost, "%s: acknowledged messages never read", w.name)
		assert.Zero(t, f.ooo, "%s: messages out of order", w.name)
		assert.Zero(t, f.dup, "%s: messages returned twice", w.name)
		assert.Zero(t, f.fetchErr, "%s: errors returned by FetchMessage", w.name)
		assert.Zero(t, f.commErr, "%s: errors returned by CommitMessages", w.name)
	}
	// The faults are the network's: the rack-b broker stays in every ISR.
	for _, s := range samples {
		if s.known && !s.at.Before(n.faultAt) && s.at.Before(last.restored) {
			require.True(t, n.inISR(s), "at %s broker %d left an ISR during a client-path fault: replication was hit", s.at.Format("15:04:05.000"), n.b)
		}
	}
	return out
}

// nfWaitFor polls cond every 50 ms until it holds or limit passes, and
// returns how long after from it held (false: not within limit).
func nfWaitFor(from time.Time, limit time.Duration, cond func() bool) (time.Duration, bool) {
	deadline := from.Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return time.Since(from), false
		}
		<-tick.C
	}
	return time.Since(from), true
}

// nfTraffic counts the Reader's dials per address.
type nfTraffic struct {
	inner *rkSockets
	mu    sync.Mutex
	dials map[string]int64
}

func (s *nfTraffic) dial(ctx context.Context, network, address string) (net.Conn, error) {
	s.mu.Lock()
	s.dials[address]++
	s.mu.Unlock()
	return s.inner.dial(ctx, network, address)
}

func (s *nfTraffic) count(addr string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials[addr]
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

func rrDiff(before, after map[kafka.RerouteReason]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[fmt.Sprint(k)] = d
		}
	}
	return out
}
