package integration

// Integration tests of the Reader on the real 3-rack cluster: exact
// delivery, offsets, lag and stats; SetOffset/SetOffsetAt; surviving the
// partition leader's death and restart; rack-aware routing. Helpers from
// helpers_test.go and helpers_topics_test.go; the ones here are prefixed ri.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// riProduce writes values v{from}..v{from+n-1} to topic/0 through its
// leader, in chunks, each with the time given by at (nil: now).
func riProduce(t *testing.T, c *ktesting.Cluster, topic string, from, n int, at func(i int) time.Time) {
	t.Helper()
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, 0)
	defer conn.Close()
	for i := from; i < from+n; {
		var msgs []kafka.Message
		for ; i < from+n && len(msgs) < 200; i++ {
			m := kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
			if at != nil {
				m.Time = at(i)
			}
			msgs = append(msgs, m)
		}
		if _, err := conn.WriteMessages(msgs...); err != nil {
			t.Fatalf("producing to %s: %v", topic, err)
		}
	}
}

type riLogger struct {
	t      *testing.T
	mu     sync.Mutex
	lines  []string
	prefix string
}

func (l *riLogger) Printf(format string, args ...interface{}) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
	l.t.Logf("%s%s", l.prefix, s)
}

// count returns how many lines contain sub.
func (l *riLogger) count(sub string) (n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

func (l *riLogger) find(sub string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return s
		}
	}
	return ""
}

func riReader(t *testing.T, c *ktesting.Cluster, topic string, edit func(*kafka.ReaderConfig)) *kafka.Reader {
	cfg := kafka.ReaderConfig{
		Brokers:         c.Brokers,
		Topic:           topic,
		MaxWait:         500 * time.Millisecond,
		ReadBackoffMin:  50 * time.Millisecond,
		ReadBackoffMax:  500 * time.Millisecond,
		ReadLagInterval: -1,
		Dialer:          newDialer(),
		Logger:          &riLogger{t: t, prefix: "reader: "},
		ErrorLogger:     &riLogger{t: t, prefix: "reader error: "},
	}
	if edit != nil {
		edit(&cfg)
	}
	r := kafka.NewReader(cfg)
	t.Cleanup(func() { r.Close() })
	return r
}

// riExpect reads v{from}..v{from+n-1} at those offsets, exactly once and in
// order. Errors the reader returns (it retries by itself) are tolerated
// and counted.
func riExpect(t *testing.T, ctx context.Context, r *kafka.Reader, from, n int) (errs int) {
	t.Helper()
	for i := from; i < from+n; {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("waiting for offset %d: %v", i, err)
			}
			errs++
			t.Logf("FetchMessage at offset %d returned %v (the reader goes on)", i, err)
			continue
		}
		if m.Offset != int64(i) || string(m.Value) != fmt.Sprintf("v%d", i) || string(m.Key) != fmt.Sprintf("k%d", i) {
			t.Fatalf("got offset %d %q=%q, want offset %d k%d=v%d", m.Offset, m.Key, m.Value, i, i, i)
		}
		i++
	}
	return errs
}

func TestReaderIntegrationPartition(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	riProduce(t, c, topic, 0, 500, nil)
	ctx := testContext(t, 60*time.Second)

	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) { cfg.MaxBytes = 4096 })
	if lag, err := r.ReadLag(ctx); err != nil || lag != 500 {
		t.Fatalf("ReadLag before reading: %d %v", lag, err)
	}
	riExpect(t, ctx, r, 0, 300)
	if r.Offset() != 300 {
		t.Fatalf("Offset %d", r.Offset())
	}
	if lag := r.Lag(); lag != 200 {
		t.Fatalf("Lag %d, want 200", lag)
	}
	b, err := r.FetchBatch(ctx)
	if err != nil || len(b.Messages) == 0 || b.Messages[0].Offset != 300 || b.HighWaterMark != 500 {
		t.Fatalf("FetchBatch: %v %+v", err, b)
	}
	next := int(b.Messages[len(b.Messages)-1].Offset) + 1
	riExpect(t, ctx, r, next, 500-next)
	if r.Offset() != 500 || r.Lag() != 0 {
		t.Fatalf("Offset %d Lag %d at the end", r.Offset(), r.Lag())
	}
	if lag, err := r.ReadLag(ctx); err != nil || lag != 0 {
		t.Fatalf("ReadLag at the end: %d %v", lag, err)
	}
	// It keeps polling: new messages arrive.
	riProduce(t, c, topic, 500, 10, nil)
	riExpect(t, ctx, r, 500, 10)

	st := r.Stats()
	if st.Messages != 510 || st.Fetches < 4 || st.Dials < 1 || st.Errors != 0 || st.Topic != topic || st.Partition != "0" ||
		st.FetchSize.Count == 0 || st.WaitTime.Count == 0 || st.Bytes == 0 {
		t.Errorf("stats: %+v", st)
	}
	leader := dialLeader(t, newDialer(), c.Brokers[0], topic, 0).Broker().ID
	if len(st.Routing) != 1 || st.Routing[0].Broker != leader || st.Routing[0].Leader != leader {
		t.Errorf("routing: %+v, leader %d", st.Routing, leader)
	}
}

func TestReaderIntegrationSetOffset(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	riProduce(t, c, topic, 0, 100, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) })
	ctx := testContext(t, 60*time.Second)

	r := riReader(t, c, topic, nil)
	if err := r.SetOffset(40); err != nil {
		t.Fatal(err)
	}
	riExpect(t, ctx, r, 40, 5)
	if err := r.SetOffsetAt(ctx, base.Add(70*time.Second)); err != nil {
		t.Fatal(err)
	}
	if r.Offset() != 70 {
		t.Fatalf("Offset after SetOffsetAt %d, want 70", r.Offset())
	}
	riExpect(t, ctx, r, 70, 30)
	r.SetOffset(kafka.FirstOffset)
	riExpect(t, ctx, r, 0, 3)
	if err := r.SetOffsetAt(ctx, time.Now().Add(time.Hour)); err != nil || r.Offset() != 100 {
		t.Fatalf("SetOffsetAt(future): %v, Offset %d", err, r.Offset())
	}
	r.SetOffset(kafka.LastOffset)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := r.FetchMessage(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("at LastOffset: %v", err)
	}
	riProduce(t, c, topic, 100, 1, nil)
	riExpect(t, ctx, r, 100, 1)
}

// The partition leader is killed mid-stream and restarted: the reader moves
// to the new leader and keeps reading, nothing lost, nothing repeated, and
// it still reads what is produced after the restart.
func TestReaderIntegrationLeaderRestart(t *testing.T) {
	c := requireRackCluster(t)
	leader := brokerInRack(t, c, "a")
	b, cc := brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{leader, b, cc}}}})
	riProduce(t, c, topic, 0, 3000, nil)
	ctx := testContext(t, 150*time.Second)

	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) { cfg.MaxBytes = 8192 })
	riExpect(t, ctx, r, 0, 1000)
	ktesting.KillBroker(t, leader)
	errs := riExpect(t, ctx, r, 1000, 2000)
	ktesting.RestartBroker(t, leader)
	riProduce(t, c, topic, 3000, 200, nil)
	errs += riExpect(t, ctx, r, 3000, 200)
	t.Logf("errors returned to the application: %d", errs)
	if errs != 0 {
		t.Errorf("%d errors returned to the application while a leader could be reached (retried and logged)", errs)
	}

	st := r.Stats()
	if st.Routing[0].Broker == leader && st.Routing[0].Leader != leader {
		t.Errorf("routing: %+v", st.Routing)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if m, err := r.FetchMessage(short); err == nil {
		t.Fatalf("an extra message: offset %d %q", m.Offset, m.Value)
	}
}

// With Rack "b" — set on the ReaderConfig or only on the Dialer, as
// kafka-go programs do — a partition led in rack a is read from the rack-b
// replica: Stats shows it, and at least 99 % of the fetched bytes stay in
// the rack.
func TestReaderIntegrationRack(t *testing.T) {
	c := requireRackCluster(t)
	if !c.HasSelector() {
		t.Skip("the brokers have no replica.selector.class")
	}
	for _, tc := range []struct {
		name string
		set  func(*kafka.ReaderConfig)
	}{
		{"ReaderConfig.Rack", func(cfg *kafka.ReaderConfig) { cfg.Rack = "b" }},
		{"Dialer.RackID", func(cfg *kafka.ReaderConfig) {
			d := newDialer()
			d.RackID = "b"
			cfg.Dialer = d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { riRack(t, c, tc.set) })
	}
}

func riRack(t *testing.T, c *ktesting.Cluster, setRack func(*kafka.ReaderConfig)) {
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	riProduce(t, c, topic, 0, 3000, nil)
	ctx := testContext(t, 60*time.Second)

	log := &riLogger{t: t, prefix: "reader: "}
	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
		setRack(cfg)
		cfg.MaxBytes = 16 << 10
		cfg.Logger = log
	})
	riExpect(t, ctx, r, 0, 3000)
	st := r.Stats()
	if len(st.Routing) != 1 {
		t.Fatalf("routing: %+v", st.Routing)
	}
	rt := st.Routing[0]
	t.Logf("routing: %+v, same-rack share %.4f", rt, rt.SameRackRatio())
	if rt.Broker != b || rt.BrokerRack != "b" || rt.Leader != a || rt.Reroutes[kafka.ReroutePreferredReplica] < 1 {
		t.Errorf("routing: %+v, want broker %d (rack b), leader %d", rt, b, a)
	}
	if rt.SameRackRatio() < 0.99 {
		t.Errorf("same-rack share %.4f < 0.99", rt.SameRackRatio())
	}
	if log.find(fmt.Sprintf("broker %d (rack a) → broker %d (rack b), preferred replica", a, b)) == "" {
		t.Errorf("no reroute line")
	}
	// New messages are read from the follower too.
	riProduce(t, c, topic, 3000, 100, nil)
	riExpect(t, ctx, r, 3000, 100)
	if rt := r.Stats().Routing[0]; rt.Broker != b || rt.CrossRackBytes > rt.SameRackBytes/100 {
		t.Errorf("after new messages: %+v", rt)
	}
}

// riProduceTo writes n messages "p{p}-{i}" to partition p of topic.
func riProduceTo(t *testing.T, c *ktesting.Cluster, topic string, p, n int) {
	t.Helper()
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, p)
	defer conn.Close()
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: []byte(fmt.Sprintf("p%d-%d", p, i))}
	}
	if _, err := conn.WriteMessages(msgs...); err != nil {
		t.Fatalf("producing to %s/%d: %v", topic, p, err)
	}
}

// A group of two readers (one in rack b) shares three partitions: every
// message is returned once, in partition order; a reader that joins later
// starts after what the group committed.
func TestReaderIntegrationGroup(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 3})
	for p := 0; p < 3; p++ {
		riProduceTo(t, c, topic, p, 100)
	}
	group := "g-" + topic
	ctx := testContext(t, 90*time.Second)
	newGroupReader := func(rack string) *kafka.Reader {
		return riReader(t, c, topic, func(cfg *kafka.ReaderConfig) {
			cfg.Topic, cfg.GroupTopics = "", []string{topic}
			cfg.GroupID, cfg.Rack = group, rack
			cfg.HeartbeatInterval = 500 * time.Millisecond
			cfg.JoinGroupBackoff = 500 * time.Millisecond
			cfg.SessionTimeout = 10 * time.Second
			cfg.RebalanceTimeout = 10 * time.Second
		})
	}
	r1, r2 := newGroupReader(""), newGroupReader("b")
	var mu sync.Mutex
	seen := map[[2]int64]bool{}
	next := map[int]int64{}
	read := func(r *kafka.Reader) {
		for {
			mu.Lock()
			done := len(seen) == 300
			mu.Unlock()
			if done {
				return
			}
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			m, err := r.ReadMessage(short)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			mu.Lock()
			k := [2]int64{int64(m.Partition), m.Offset}
			if seen[k] {
				t.Errorf("partition %d offset %d returned twice", m.Partition, m.Offset)
			}
			if want, ok := next[m.Partition]; ok && m.Offset < want {
				t.Errorf("partition %d: offset %d after %d", m.Partition, m.Offset, want-1)
			}
			if string(m.Value) != fmt.Sprintf("p%d-%d", m.Partition, m.Offset) {
				t.Errorf("partition %d offset %d: %q", m.Partition, m.Offset, m.Value)
			}
			seen[k], next[m.Partition] = true, m.Offset+1
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	for _, r := range []*kafka.Reader{r1, r2} {
		wg.Add(1)
		go func(r *kafka.Reader) { defer wg.Done(); read(r) }(r)
	}
	wg.Wait()
	if len(seen) != 300 {
		t.Fatalf("%d of 300 messages returned", len(seen))
	}
	r1.Close()
	r2.Close()

	for p := 0; p < 3; p++ {
		riProduceTo(t, c, topic, p, 101) // offsets 100..200 are "p{p}-0".."p{p}-100"
	}
	r3 := newGroupReader("")
	for i := 0; i < 3; i++ {
		m, err := r3.FetchMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Offset < 100 {
			t.Fatalf("the group restarted at partition %d offset %d, before what it committed", m.Partition, m.Offset)
		}
	}
}
