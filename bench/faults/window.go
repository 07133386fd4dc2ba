package faults

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/rackfetch/kafka-go/bench/wire"
)

// Result is what one window measured. Times are in seconds; -1 where the
// event did not happen.
type Result struct {
	Spec
	Start       time.Time `json:"start"`
	Topic       string    `json:"topic"`
	Group       string    `json:"group"`
	Broker      int       `json:"broker"`      // the faulted broker
	Coordinator int       `json:"coordinator"` // the group's
	Leads       []int     `json:"leads"`       // partitions the faulted broker led when the fault began
	Served      []int     `json:"served"`      // partitions read from it when the fault began

	// LeftS: from the fault until no partition of Served was read from the
	// faulted broker; LeftFollowedS the same for those of Served it did not
	// lead (where a replica in another rack is the leader); LeftMost: the
	// most of Served read elsewhere at once during the fault.
	LeftS         float64 `json:"left_s"`
	LeftFollowedS float64 `json:"left_followed_s"`
	LeftMost      int     `json:"left_most"`
	// GapS: the longest time a partition went without a delivery, from the
	// fault to the window's end; GapOthersS the same over the partitions
	// the faulted broker did not lead; ProducerStallS the producer's own
	// longest time without an acknowledgement (a bound no consumer beats).
	GapS           float64 `json:"gap_s"`
	GapPartition   int     `json:"gap_partition"`
	GapOthersS     float64 `json:"gap_others_s"`
	ProducerStallS float64 `json:"producer_stall_s"`
	// WriterBackS: from the heal until every partition the faulted broker
	// led had an acknowledgement again (-1: one had none in the window).
	WriterBackS float64 `json:"writer_back_s"`
	// WriterLedPerS*: the records per second acknowledged on the partitions
	// the faulted broker led, in the steady state before the fault and
	// during it (the producer waits for each call: a slower path lowers
	// its rate rather than queueing).
	WriterLedPerSBefore float64 `json:"writer_led_per_s_before"`
	WriterLedPerSDuring float64 `json:"writer_led_per_s_during"`
	// CrossRack*: the share of the bytes the consumer's sockets read from
	// brokers outside its rack, during the fault and from the heal to the
	// window's end.
	CrossRackDuring float64 `json:"cross_rack_during"`
	BytesDuring     int64   `json:"bytes_during"`
	CrossRackAfter  float64 `json:"cross_rack_after"`
	BytesAfter      int64   `json:"bytes_after"`
	// BackS: from the heal until every partition had delivered again and
	// those of Served were read from the faulted broker again.
	BackS float64 `json:"back_s"`
	// LagAtHeal: the records acknowledged before the heal and not read
	// then; CaughtUpS: from the heal until they all were (-1: not within
	// BackLimit).
	LagAtHeal int64   `json:"lag_at_heal"`
	CaughtUpS float64 `json:"caught_up_s"`
	// Moves counts the changes of a partition's broker seen during the
	// fault and after it (routes sampled every 100 ms).
	MovesDuring int `json:"moves_during"`
	MovesAfter  int `json:"moves_after"`

	Acked         int64 `json:"acked"`
	Lost          int64 `json:"lost"`
	Dup           int   `json:"dup"`
	OutOfOrder    int   `json:"out_of_order"`
	Foreign       int   `json:"foreign"` // records the producer did not write
	ProduceErrors int   `json:"produce_errors"`
	// Rebalances counts the group generations the consumer was assigned
	// partitions in, from the fault to the window's end.
	Rebalances      int64    `json:"rebalances"`
	AppErrors       int      `json:"app_errors"`
	AppErrorSamples []string `json:"app_error_samples,omitempty"`
	// LogDuring: the consumer's first log lines from the fault to 5 s
	// after the heal.
	LogDuring []string `json:"log_during,omitempty"`

	// During the fault, per second: requests the consumer sent (all, and
	// to the faulted broker), its connections to the faulted broker, and
	// its log lines (all, and at warning or error level). RequestsBeforePerS
	// is the first figure in the 3 s of steady state before the fault.
	RequestsBeforePerS   float64 `json:"requests_before_per_s"`
	RequestsPerS         float64 `json:"requests_per_s"`
	RequestsToBrokerPerS float64 `json:"requests_to_broker_per_s"`
	DialsToBrokerPerS    float64 `json:"dials_to_broker_per_s"`
	LogLinesPerS         float64 `json:"log_lines_per_s"`
	ErrorLogLinesPerS    float64 `json:"error_log_lines_per_s"`

	// InISR: the faulted broker stayed in every partition's ISR in each of
	// ISRSamples samples taken during the fault (the fault is the client
	// path's, not replication's).
	InISR      bool `json:"in_isr"`
	ISRSamples int  `json:"isr_samples"`

	Error   string `json:"error,omitempty"`
	Cleanup string `json:"cleanup,omitempty"` // deleting the topic failed: the figures stand
}

// Run measures one window on a topic and group of its own. The fault is
// cleared before Run returns, whatever happens.
func Run(ctx context.Context, c *Cluster, s Spec) Result {
	res := Result{Spec: s, Start: time.Now().UTC(), LeftS: -1, LeftFollowedS: -1, BackS: -1, CaughtUpS: -1, GapPartition: -1, WriterBackS: -1}
	if err := run(ctx, c, s, &res); err != nil {
		res.Error = err.Error()
	}
	return res
}

func run(ctx context.Context, c *Cluster, s Spec, res *Result) error {
	f, err := FaultByName(s.Fault)
	if err != nil {
		return err
	}
	if err := CheckTarget(s.Target); err != nil {
		return err
	}
	start := consumers[s.Client]
	if start == nil {
		return CheckClient(s.Client)
	}
	target, err := c.InRack(targetRack[s.Target])
	if err != nil {
		return err
	}
	home, err := c.InRack(s.Rack)
	if err != nil {
		return err
	}
	coord, err := c.InRack(coordinatorRack)
	if err != nil {
		return err
	}
	res.Broker, res.Coordinator = target, coord
	res.Topic = fmt.Sprintf("bench-faults-%s-%s-%s-%d", s.Client, s.Target, s.Fault, time.Now().UnixNano())
	if err := c.CreateTopic(ctx, res.Topic); err != nil {
		return err
	}
	defer func() {
		if err := c.DeleteTopic(res.Topic); err != nil {
			res.Cleanup = err.Error()
		}
	}()
	if res.Group, err = c.GroupCoordinatedBy(ctx, res.Topic, coord); err != nil {
		return err
	}

	rec := newRecord()
	producerBrokers := c.Brokers
	if s.WriterFaulted {
		producerBrokers = c.FaultBrokers
	}
	producerClient := "rackfetch"
	if s.WriterFaulted {
		producerClient = s.Client
	}
	stopProducer, err := startProducer(producerClient, producerBrokers, res.Topic, s.Rate, rec)
	if err != nil {
		return fmt.Errorf("starting the producer: %w", err)
	}
	defer stopProducer()
	w, logs := wire.New(), &logCount{}
	cons, err := start(consumerConfig{brokers: c.FaultBrokers, topic: res.Topic, group: res.Group, rack: s.Rack,
		wire: w, rec: rec, logs: logs})
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			cons.close()
		}
	}()

	// Steady state first: every partition delivering, every one read in
	// the consumer's rack.
	t0 := time.Now()
	if err := poll(ctx, 90*time.Second, "every partition delivering and read from broker "+fmt.Sprint(home), func() bool {
		return rec.everyPartitionSince(t0) && allOn(cons.routes(), home)
	}); err != nil {
		return err
	}
	steadyAt, ws := time.Now(), w.Snapshot()
	if err := hold(ctx, 3*time.Second); err != nil {
		return err
	}
	res.RequestsBeforePerS = float64(w.Snapshot().Sub(ws).Total().Requests) / time.Since(steadyAt).Seconds()
	st, err := c.topicState(ctx, res.Topic)
	if err != nil {
		return err
	}
	res.Leads = brokerPartitions(st.leader, target)
	res.Served = brokerPartitions(cons.routes(), target)

	// The fault. The proxy clears it itself should this process die.
	isr := startISRSampler(c, res.Topic, target)
	w0, lines0, errs0, gens0 := w.Snapshot(), logs.lines.Load(), logs.errs.Load(), logs.assigned.Load()
	fault := f.Fault
	fault.For = 2*s.For + 30*time.Second
	faultAt := time.Now()
	if err := control(func(cctx context.Context) error { return c.NF.Set(cctx, target, fault) }); err != nil {
		isr.stop()
		return fmt.Errorf("setting %s on broker %d's path: %w", s.Fault, target, err)
	}
	healed := false
	heal := func() error {
		if healed {
			return nil
		}
		healed = true
		return control(func(cctx context.Context) error { return c.NF.Clear(cctx, target) })
	}
	defer heal()

	followed := without(res.Served, res.Leads)
	mv := newMoves(cons.routes())
	err = pollUntil(ctx, faultAt.Add(s.For), func() bool {
		routes := cons.routes()
		res.MovesDuring += mv.update(routes)
		off, offFollowed := 0, 0
		for _, p := range res.Served {
			if r, ok := routes[p]; ok && r >= 0 && r != target {
				off++
				if !slices.Contains(res.Leads, p) {
					offFollowed++
				}
			}
		}
		res.LeftMost = max(res.LeftMost, off)
		if off == len(res.Served) && off > 0 && res.LeftS < 0 {
			res.LeftS = time.Since(faultAt).Seconds()
		}
		if offFollowed == len(followed) && offFollowed > 0 && res.LeftFollowedS < 0 {
			res.LeftFollowedS = time.Since(faultAt).Seconds()
		}
		return false
	})
	w1, lines1, errs1 := w.Snapshot(), logs.lines.Load(), logs.errs.Load()
	during := time.Since(faultAt).Seconds()
	if herr := heal(); herr != nil {
		isr.stop()
		return fmt.Errorf("clearing broker %d's path: %w", target, herr)
	}
	healAt := time.Now()
	heads := rec.ackedHeads()
	res.LagAtHeal = rec.behind(heads)
	res.InISR, res.ISRSamples = isr.stop()
	if err != nil {
		return err
	}

	// After the heal: until reads are back (or BackLimit), and at least After.
	err = pollUntil(ctx, healAt.Add(BackLimit), func() bool {
		routes := cons.routes()
		res.MovesAfter += mv.update(routes)
		if res.BackS < 0 && back(routes, rec, res.Served, target, healAt) {
			res.BackS = time.Since(healAt).Seconds()
		}
		if res.CaughtUpS < 0 && rec.behind(heads) == 0 {
			res.CaughtUpS = time.Since(healAt).Seconds()
		}
		return res.BackS >= 0 && res.CaughtUpS >= 0 && !time.Now().Before(healAt.Add(s.After))
	})
	if err != nil {
		return err
	}
	w2, end := w.Snapshot(), time.Now()
	res.Rebalances = logs.assigned.Load() - gens0

	stopProducer()
	// What was acknowledged is read within 30 s, or counted lost.
	_ = poll(ctx, 30*time.Second, "every acknowledged record read", func() bool { lost, _ := rec.lost(); return lost == 0 })
	closed = true
	if err := cons.close(); err != nil {
		rec.appError(err)
	}

	all := make([]int, Partitions)
	for p := range all {
		all[p] = p
	}
	gap, gapP := rec.longestGap(all, faultAt, end)
	res.GapS, res.GapPartition = gap.Seconds(), gapP
	others, _ := rec.longestGap(without(all, res.Leads), faultAt, end)
	res.GapOthersS = others.Seconds()
	res.ProducerStallS = rec.longestStall(faultAt, end).Seconds()
	res.WriterBackS = rec.firstAckAfter(res.Leads, healAt)
	res.WriterLedPerSBefore = rec.ackedPerS(res.Leads, steadyAt, faultAt)
	res.WriterLedPerSDuring = rec.ackedPerS(res.Leads, faultAt, healAt)
	racks := c.addrRacks()
	res.CrossRackDuring, res.BytesDuring = crossRack(w1.Sub(w0), racks, s.Rack)
	res.CrossRackAfter, res.BytesAfter = crossRack(w2.Sub(w1), racks, s.Rack)
	res.Lost, res.Acked = rec.lost()
	rec.mu.Lock()
	res.Dup, res.OutOfOrder, res.Foreign, res.ProduceErrors = rec.dup, rec.ooo, rec.foreign, rec.prodErrs
	rec.mu.Unlock()
	res.AppErrors, res.AppErrorSamples = rec.appErrors()
	res.LogDuring = logs.between(faultAt, healAt.Add(5*time.Second), 30)
	d := w1.Sub(w0)
	res.RequestsPerS = float64(d.Total().Requests) / during
	res.RequestsToBrokerPerS = float64(d[c.FaultAddr(target)].Requests) / during
	res.DialsToBrokerPerS = float64(d[c.FaultAddr(target)].Dials) / during
	res.LogLinesPerS = float64(lines1-lines0) / during
	res.ErrorLogLinesPerS = float64(errs1-errs0) / during
	return nil
}

// control runs a call to the fault proxy with a deadline of its own: a
// fault is cleared even when the run's context has ended.
func control(call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return call(ctx)
}

// allOn: every partition is read from broker id.
func allOn(routes map[int]int, id int) bool {
	for p := 0; p < Partitions; p++ {
		if routes[p] != id {
			return false
		}
	}
	return true
}

// brokerPartitions lists the partitions whose entry is broker id.
func brokerPartitions(m map[int]int, id int) []int {
	var out []int
	for p, b := range m {
		if b == id && p >= 0 && p < Partitions {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

func without(all, drop []int) []int {
	skip := map[int]bool{}
	for _, p := range drop {
		skip[p] = true
	}
	var out []int
	for _, p := range all {
		if !skip[p] {
			out = append(out, p)
		}
	}
	return out
}

// back: every partition delivered after healAt, and those served by the
// faulted broker before the fault are read from it again.
func back(routes map[int]int, rec *record, served []int, target int, healAt time.Time) bool {
	for _, p := range served {
		if routes[p] != target {
			return false
		}
	}
	for p := 0; p < Partitions; p++ {
		if !rec.lastDelivery(p).After(healAt) {
			return false
		}
	}
	return true
}

// moves counts the changes of each partition's broker between samples
// (a partition not being read in between is no move).
type moves struct{ last map[int]int }

func newMoves(routes map[int]int) *moves {
	m := &moves{last: map[int]int{}}
	m.update(routes)
	return m
}

func (m *moves) update(routes map[int]int) int {
	n := 0
	for p, b := range routes {
		if b < 0 {
			continue
		}
		if prev, ok := m.last[p]; ok && prev != b {
			n++
		}
		m.last[p] = b
	}
	return n
}

// addrRacks maps the proxy's addresses, which the consumers dial, to racks.
func (c *Cluster) addrRacks() map[string]string {
	m := map[string]string{}
	for i, id := range c.IDs {
		m[c.FaultBrokers[i]] = c.Racks[id]
	}
	return m
}

// crossRack returns the share of the bytes read from addresses outside
// rack (an address of unknown rack counts as outside) and the bytes read.
func crossRack(d wire.Snapshot, racks map[string]string, rack string) (float64, int64) {
	var in, total int64
	for addr, a := range d {
		total += a.BytesRead
		if racks[addr] == rack {
			in += a.BytesRead
		}
	}
	if total == 0 {
		return 0, 0
	}
	return 1 - float64(in)/float64(total), total
}

// hold keeps the window running for d (a measuring period, not a wait for
// a condition).
func hold(ctx context.Context, d time.Duration) error {
	return pollUntil(ctx, time.Now().Add(d), func() bool { return false })
}

// pollUntil calls f every 100 ms until it returns true or deadline passes;
// it fails only when ctx ends.
func pollUntil(ctx context.Context, deadline time.Time, f func() bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if f() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// isrSampler checks every second, through the brokers' own listeners,
// that a broker is in every partition's ISR.
type isrSampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	ok     bool
	n      int
}

func startISRSampler(c *Cluster, topic string, id int) *isrSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &isrSampler{cancel: cancel, done: make(chan struct{}), ok: true}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if st, err := c.topicState(ctx, topic); err == nil && len(st.inISR) == Partitions {
				s.n++
				for p := range st.inISR {
					s.ok = s.ok && st.inISR[p][id]
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and reports whether the broker was in every ISR
// in every sample, and how many samples were taken.
func (s *isrSampler) stop() (bool, int) {
	s.cancel()
	<-s.done
	return s.ok && s.n > 0, s.n
}
