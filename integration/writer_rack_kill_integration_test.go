package integration

// A rack-b Writer while the rack-b broker is killed with SIGKILL and comes back: writes go on to the other
// partitions, nothing is lost, duplicated or reordered, no error reaches the application, and the writes
// return to rack b's partitions soon after the broker leads them again.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// wkWriter writes keyless messages numbered from 0 in calls of 10, one call at a time, until stopped; the
// values name the writer (id) too. Several share a kafka.Writer, as an application's goroutines do.
type wkWriter struct {
	w    *kafka.Writer
	id   int
	mu   sync.Mutex
	next int
	errs []error
	// longest is the slowest call, and when it began.
	longest  time.Duration
	longAt   time.Time
	stop     chan struct{}
	finished chan struct{}
}

func (x *wkWriter) run(ctx context.Context) {
	defer close(x.finished)
	for {
		select {
		case <-x.stop:
			return
		default:
		}
		x.mu.Lock()
		from := x.next
		x.mu.Unlock()
		msgs := make([]kafka.Message, 10)
		for i := range msgs {
			msgs[i] = kafka.Message{Value: []byte(fmt.Sprintf("%d-%08d", x.id, from+i))}
		}
		began := time.Now()
		err := x.w.WriteMessages(ctx, msgs...)
		took := time.Since(began)
		x.mu.Lock()
		if err != nil {
			x.errs = append(x.errs, err)
		}
		if took > x.longest {
			x.longest, x.longAt = took, began
		}
		x.next += len(msgs)
		x.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
	}
}

func (x *wkWriter) written() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.next
}

func TestWriterIntegrationRackLeaderKilled(t *testing.T) {
	c := requireRackCluster(t)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	// Partitions 1 and 4 are led in rack b and replicated in rack c; the others are led in racks a
	// and c and replicated there only, so that acks=all writes to them need no answer from broker b (with b in
	// their ISRs, every acks=all write would wait until the cluster drops it from them).
	assign := make([]kafka.ReplicaAssignment, 6)
	for p := range assign {
		assign[p] = kafka.ReplicaAssignment{Partition: p, Replicas: [][]int{{a, cc}, {b, cc}, {cc, a}}[p%3]}
	}
	// Two replicas: one in sync is enough to take writes (the cluster's default asks for two).
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: assign,
		ConfigEntries: []kafka.ConfigEntry{{ConfigName: "min.insync.replicas", ConfigValue: "1"}}})
	ctx := testContext(t, 4*time.Minute)

	spy := &apiSpy{}
	w := &kafka.Writer{
		Addr:         kafka.TCP(c.Brokers...),
		Topic:        topic,
		Rack:         "b",
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond,
		Transport:    &kafka.Transport{Dial: spy.dial},
	}
	defer w.Close()
	// Three goroutines write from the start, a fourth once the broker is dead.
	const writers = 4
	xs := make([]*wkWriter, writers)
	for i := range xs {
		xs[i] = &wkWriter{w: w, id: i, stop: make(chan struct{}), finished: make(chan struct{})}
		if i < writers-1 {
			go xs[i].run(ctx)
		}
	}
	written := func() int {
		n := 0
		for _, x := range xs {
			n += x.written()
		}
		return n
	}
	stopped := false
	stopWriting := func() {
		if !stopped {
			stopped = true
			for _, x := range xs {
				close(x.stop)
			}
			for _, x := range xs {
				<-x.finished
			}
		}
	}
	defer stopWriting()
	eventually(t, time.Minute, "the first writes", func() bool { return written() >= 300 })

	cl := &kafka.Client{Addr: kafka.TCP(c.Addr(a))}
	ktesting.KillBroker(t, b)
	killed := time.Now()
	// When the metadata names new leaders for partitions 1 and 4, watched from now on.
	replacedAt := make(chan time.Duration, 1)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			if l1, l4 := wkLeader(ctx, cl, topic, 1), wkLeader(ctx, cl, topic, 4); l1 >= 0 && l1 != b && l4 >= 0 && l4 != b {
				replacedAt <- time.Since(killed)
				return
			}
			<-tick.C
		}
	}()
	// The calls in flight wait for the partitions' new leaders (their batches may have been written:
	// they keep their partition). A call made now goes to the partitions led elsewhere.
	late := xs[writers-1]
	go late.run(ctx)
	eventually(t, time.Minute, "writes of a call made after the kill", func() bool { return late.written() >= 300 })
	lateWrote := time.Since(killed)
	var replaced time.Duration
	select {
	case replaced = <-replacedAt:
	case <-ctx.Done():
		t.Fatal("no new leaders for partitions 1 and 4")
	}
	t.Logf("WRITERKILLFIGURE a goroutine starting after the kill wrote 300 messages within %.2f s; the metadata named new leaders %.1f s after the kill",
		lateWrote.Seconds(), replaced.Seconds())
	assert.Less(t, lateWrote, replaced, "writes went on while the dead broker was still named leader")

	ktesting.RestartBroker(t, b)
	eventually(t, 2*time.Minute, "broker b back in the ISRs of partitions 1 and 4", func() bool { return wkInISRs(ctx, cl, topic, b, 1, 4) })
	admin := dialController(t, c)
	for _, p := range []int{1, 4} {
		eventually(t, time.Minute, "broker b leads partition "+strconv.Itoa(p), func() bool {
			electPreferredLeader(ctx, admin, topic, p) // ElectionNotNeeded once it leads
			return wkLeader(ctx, cl, topic, p) == b
		})
	}
	leads := time.Now()
	var back time.Duration
	eventually(t, 30*time.Second, "produce requests to broker b again", func() bool {
		for _, r := range spy.requests(apiProduce) {
			if r.addr == c.Addr(b) && r.at.After(leads) {
				back = r.at.Sub(leads)
				return true
			}
		}
		return false
	})
	var slowest *wkWriter
	for _, x := range xs {
		if slowest == nil || x.longest > slowest.longest {
			slowest = x
		}
	}
	t.Logf("WRITERKILLFIGURE writes back in rack b %.2f s after it leads again; slowest call %.1f s (began %.1f s after the kill)",
		back.Seconds(), slowest.longest.Seconds(), slowest.longAt.Sub(killed).Seconds())
	assert.LessOrEqual(t, back, 5*time.Second, "writes back in rack b after it leads again")
	atBack := written()
	eventually(t, time.Minute, "writes after the return", func() bool { return written() >= atBack+300 })
	stopWriting()
	require.NoError(t, w.Close())

	var errs []error
	totals := make([]int, writers)
	for i, x := range xs {
		errs = append(errs, x.errs...)
		totals[i] = x.next
	}
	assert.Empty(t, errs, "errors returned by WriteMessages")

	// Every message once, in the order its writer wrote it within its partition.
	seen := make([][]int, writers)
	for i := range seen {
		seen[i] = make([]int, totals[i])
	}
	total := 0
	for p := 0; p < 6; p++ {
		last := make([]int, writers)
		for i := range last {
			last[i] = -1
		}
		for _, m := range wrRead(t, c.Brokers[0], topic, p) {
			var id, n int
			_, err := fmt.Sscanf(string(m.Value), "%d-%d", &id, &n)
			require.NoError(t, err, "value %q", m.Value)
			require.True(t, id >= 0 && id < writers && n < totals[id], "a message never written: %q", m.Value)
			seen[id][n]++
			assert.Greater(t, n, last[id], "partition %d, writer %d: message %d after %d", p, id, n, last[id])
			last[id] = n
		}
	}
	lost, dup := 0, 0
	for i := range seen {
		total += totals[i]
		for _, k := range seen[i] {
			switch {
			case k == 0:
				lost++
			case k > 1:
				dup++
			}
		}
	}
	t.Logf("WRITERKILLFIGURE %d messages: %d lost, %d duplicated, %d errors", total, lost, dup, len(errs))
	assert.Zero(t, lost, "messages lost")
	assert.Zero(t, dup, "messages duplicated")
}

func wkMetadata(ctx context.Context, cl *kafka.Client, topic string) []kafka.Partition {
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 {
		return nil
	}
	return md.Topics[0].Partitions
}

// wkInISRs reports whether broker is in the ISRs of the partitions ps of topic.
func wkInISRs(ctx context.Context, cl *kafka.Client, topic string, broker int, ps ...int) bool {
	in := 0
	for _, p := range wkMetadata(ctx, cl, topic) {
		for _, r := range p.Isr {
			if r.ID == broker && slices.Contains(ps, p.ID) {
				in++
			}
		}
	}
	return in == len(ps)
}

// wkLeader returns the leader of topic/p (-1: unknown).
func wkLeader(ctx context.Context, cl *kafka.Client, topic string, p int) int {
	for _, part := range wkMetadata(ctx, cl, topic) {
		if part.ID == p {
			return part.Leader.ID
		}
	}
	return -1
}
