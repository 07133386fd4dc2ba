package integration

// Known kafka-go consumer-group failures, each reproduced on the real 3-rack cluster against the Reader:
// readers stalling after a broker restart, ReadMessage spinning on RebalanceInProgress, the committed
// offset running ahead of what was processed, stale queued messages after a rebalance, and messages
// skipped by a new group at LastOffset. Helpers (prefix rgi) are in helpers_group*_test.go.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// rgiWaitProgress waits until every partition has a message returned and
// committed at or after from.
func rgiWaitProgress(t *testing.T, rec *rgiRecorder, partitions int, from time.Time, within time.Duration, what string) time.Duration {
	t.Helper()
	eventually(t, within, what+": every partition read again", func() bool {
		got := map[int]bool{}
		for _, d := range rec.snapshot() {
			if !d.at.Before(from) && d.state == rgiCommitOK {
				got[d.part] = true
			}
		}
		return len(got) == partitions
	})
	return time.Since(from)
}

// (a) kafka-go readers stop or stall after a broker restart. Two readers
// share six partitions while a producer writes; the group coordinator
// (which also leads some partitions) is killed mid-stream and restarted,
// then a broker that leads partitions but does not coordinate the group.
// After each restart a preferred leader election hands partitions back to
// the restarted broker. After each kill and each restart every partition
// is read again, and in the end every message produced is returned, in
// partition order.
func TestReaderGroupIntegrationBrokerRestarts(t *testing.T) {
	c := requireRackCluster(t)
	const parts = 6
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: parts})
	group := "g-" + topic
	rec := &rgiRecorder{}
	m := []*rgiMember{
		rgiStart(t, c, rec, "a", group, topic, nil),
		rgiStart(t, c, rec, "b", group, topic, nil),
	}
	rgiWaitStable(t, 30*time.Second, topic, parts, m[0].r, m[1].r)
	prod := newRgiProducer(t, c, topic)
	prod.background(parts, 2, 50*time.Millisecond)
	rgiWaitProgress(t, rec, parts, time.Now(), 30*time.Second, "start")

	coord := rgiCoordinatorID(t, c, group)
	ktesting.KillBroker(t, coord)
	tKill := time.Now()
	d := rgiWaitProgress(t, rec, parts, tKill, 60*time.Second, fmt.Sprintf("coordinator %d killed", coord))
	t.Logf("coordinator %d killed: every partition read again after %v", coord, d)
	ktesting.RestartBroker(t, coord)
	rgiLeadBack(t, c, topic, parts, coord)
	d = rgiWaitProgress(t, rec, parts, time.Now(), 30*time.Second, fmt.Sprintf("broker %d restarted", coord))
	t.Logf("broker %d restarted and leading again: every partition read again after %v", coord, d)

	coord2 := rgiCoordinatorID(t, c, group)
	victim := -1
	for _, l := range rgiLeaders(t, c, topic, parts) {
		if l != coord2 {
			victim = l
			break
		}
	}
	if victim < 0 {
		t.Fatalf("coordinator %d leads every partition", coord2)
	}
	ktesting.KillBroker(t, victim)
	tKill = time.Now()
	d = rgiWaitProgress(t, rec, parts, tKill, 60*time.Second, fmt.Sprintf("leader %d killed", victim))
	t.Logf("partition leader %d (coordinator %d) killed: every partition read again after %v", victim, coord2, d)
	ktesting.RestartBroker(t, victim)
	rgiLeadBack(t, c, topic, parts, victim)
	d = rgiWaitProgress(t, rec, parts, time.Now(), 30*time.Second, fmt.Sprintf("broker %d restarted", victim))
	t.Logf("broker %d restarted and leading again: every partition read again after %v", victim, d)

	prod.stopBackground()
	ends := rgiEnds(t, c, topic, parts)
	rgiWaitCovered(t, rec, ends)
	m[0].halt()
	m[1].halt()
	rgiCheckDeliveries(t, rec.snapshot())
	t.Logf("producer errors %d; FetchMessage errors a=%d b=%d", prod.errs.Load(), m[0].errs.Load(), m[1].errs.Load())
}

// rgiLaggard is a member of the group (a bare ConsumerGroup) that, while
// holding, rejoins only once released: it keeps a rebalance open.
type rgiLaggard struct {
	*cgiMember
	holding atomic.Bool
	release chan struct{}
}

func rgiStartLaggard(t *testing.T, c *ktesting.Cluster, group, topic string) *rgiLaggard {
	l := &rgiLaggard{release: make(chan struct{})}
	l.cgiMember = cgiRun(t, kafka.ConsumerGroupConfig{
		ID:      group,
		Brokers: c.Brokers,
		Dialer:  &kafka.Dialer{ClientID: "kafka-go-rg-laggard", Timeout: 5 * time.Second},
		Topics:  []string{topic},
		// Long enough that the coordinator waits for it while it holds.
		SessionTimeout:    20 * time.Second,
		HeartbeatInterval: rgiHeartbeat,
		RebalanceTimeout:  20 * time.Second,
		JoinGroupBackoff:  time.Second,
	}, l.hold)
	t.Cleanup(l.unhold) // before the group closes: it waits for hold
	return l
}

// hold ends a generation of the laggard: at once, or while holding once
// released (30 s at most).
func (l *rgiLaggard) hold() {
	if l.holding.Load() {
		select {
		case <-l.release:
		case <-time.After(30 * time.Second):
		}
	}
}

func (l *rgiLaggard) unhold() {
	if l.holding.CompareAndSwap(true, false) {
		close(l.release)
	}
}

func (l *rgiLaggard) generation() int32 {
	if g := l.latest(); g != nil {
		return g.ID
	}
	return -1
}

// (b) kafka-go's ReadMessage returns RebalanceInProgress over and over
// while the group rebalances, and the application spins on it. Here a
// second reader joins while a slow member keeps the rebalance open for
// a few seconds; the first reader's application calls ReadMessage in a
// tight loop meanwhile. Its requests are counted from the bytes its
// connections write: no hot loop of commits, fetches, heartbeats or joins,
// and ReadMessage waits rather than failing; it reads again afterwards.
func TestReaderGroupIntegrationNoHotLoopOnRebalance(t *testing.T) {
	c := requireRackCluster(t)
	const parts = 2
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: parts})
	group := "g-" + topic
	prod := newRgiProducer(t, c, topic)
	prod.produce(parts, 2000)

	lag := rgiStartLaggard(t, c, group, topic)
	spy := &apiSpy{}
	a := rgiReader(t, c, "a", group, topic, spy, nil)
	eventually(t, 30*time.Second, "a and the laggard in one generation", func() bool {
		g, ps := rgiAssignment(a, topic)
		return g >= 0 && g == lag.generation() && len(ps) == 1
	})

	// The application: ReadMessage as fast as it returns.
	var (
		mu     sync.Mutex
		errs   []time.Time
		msgs   []time.Time
		stop   = make(chan struct{})
		halted = make(chan struct{})
	)
	go func() {
		defer close(halted)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			_, err := a.ReadMessage(ctx)
			cancel()
			mu.Lock()
			switch {
			case err == nil:
				msgs = append(msgs, time.Now())
			case !errors.Is(err, context.DeadlineExceeded):
				errs = append(errs, time.Now())
			}
			mu.Unlock()
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-halted
	}()
	count := func(ts *[]time.Time, from, to time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, at := range *ts {
			if !at.Before(from) && at.Before(to) {
				n++
			}
		}
		return n
	}
	eventually(t, 30*time.Second, "a reading", func() bool { return count(&msgs, time.Time{}, time.Now()) >= 50 })

	lag.holding.Store(true)
	tJoin := time.Now()
	b := rgiReader(t, c, "b", group, topic, nil, nil)
	eventually(t, 10*time.Second, "a noticing the rebalance", func() bool {
		g, _ := rgiAssignment(a, topic)
		return g < 0
	})
	tGone := time.Now()
	// The window starts when a learned of the rebalance: its heartbeat
	// that got RebalanceInProgress.
	tNoticed := spy.last(int16(protocol.Heartbeat), time.Now())
	if tNoticed.Before(tJoin) {
		t.Fatalf("no heartbeat of a since b joined")
	}
	// The rebalance stays open while the laggard holds: measure a window.
	eventually(t, 10*time.Second, "the window", func() bool { return time.Since(tNoticed) >= 4*time.Second })
	tEnd := time.Now()
	window := tEnd.Sub(tNoticed)
	if g, _ := rgiAssignment(a, topic); g >= 0 {
		t.Fatalf("the rebalance ended before the window closed (generation %d): the laggard did not hold it", g)
	}
	// b waits in JoinGroup for the laggard: Close does not wait with it.
	tClose := time.Now()
	b.Close()
	if d := time.Since(tClose); d > 3*time.Second {
		t.Errorf("closing a reader waiting in a rebalance took %v", d)
	} else {
		t.Logf("closing a reader waiting in a rebalance took %v", d)
	}
	lag.unhold()

	keys := []struct {
		name string
		key  protocol.ApiKey
		max  int
	}{
		{"Fetch", protocol.Fetch, 4},
		{"OffsetCommit", protocol.OffsetCommit, 2},
		{"Heartbeat", protocol.Heartbeat, 2},
		{"JoinGroup", protocol.JoinGroup, 2},
		{"SyncGroup", protocol.SyncGroup, 1},
		{"Metadata", protocol.Metadata, 4},
		{"FindCoordinator", protocol.FindCoordinator, 2},
	}
	total := 0
	for _, k := range keys {
		n := spy.count(int16(k.key), tNoticed, tEnd)
		total += n
		t.Logf("%s requests during the %v of rebalance: %d", k.name, window.Round(time.Millisecond), n)
		if n > k.max {
			t.Errorf("%d %s requests during %v of rebalance, want <= %d", n, k.name, window, k.max)
		}
	}
	all := spy.count(-1, tNoticed, tEnd)
	if rate := float64(all) / window.Seconds(); rate > 3 {
		t.Errorf("%d requests in %v of rebalance (%.1f/s), want <= 3/s", all, window, rate)
	}
	nerr := count(&errs, tJoin, tEnd)
	t.Logf("ReadMessage: %d errors and %d messages between the join and the window's end; %d requests in all in the window", nerr, count(&msgs, tJoin, tEnd), all)
	if nerr > 2 {
		t.Errorf("ReadMessage returned %d errors during the rebalance, want <= 2", nerr)
	}
	// One ReadMessage may have taken its message before the generation
	// ended and returned after its commit.
	if n := count(&msgs, tGone, tEnd); n > 1 {
		t.Errorf("ReadMessage returned %d messages while a had no generation", n)
	}

	// After the rebalance a reads again.
	eventually(t, 30*time.Second, "a reading after the rebalance", func() bool { return count(&msgs, tEnd, time.Now()) >= 10 })
}

// (c) kafka-go commits past what the application committed around a
// rebalance. A reader fetches everything but commits only some messages;
// a second reader joins. The committed offsets are exactly what
// CommitMessages committed; the second reader starts its partitions
// there, while the first one goes on after what it returned in the
// partitions it kept (one Reader never returns a message twice).
func TestReaderGroupIntegrationCommittedNeverAhead(t *testing.T) {
	c := requireRackCluster(t)
	const parts, n = 4, 100
	for _, interval := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run(fmt.Sprintf("CommitInterval=%v", interval), func(t *testing.T) {
			topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: parts})
			group := "g-" + topic
			prod := newRgiProducer(t, c, topic)
			prod.produce(parts, n)
			edit := func(cfg *kafka.ReaderConfig) { cfg.CommitInterval = interval }
			a := rgiReader(t, c, "a", group, topic, nil, edit)
			ctx := testContext(t, 60*time.Second)

			// Fetch everything; commit offset 10(p+1) of partition p, by
			// passing message 10(p+1)-1 (and a few before it, out of order).
			want := map[int]int64{}
			keep := map[int]kafka.Message{}
			for fetched := 0; fetched < parts*n; fetched++ {
				m, err := a.FetchMessage(ctx)
				if err != nil {
					t.Fatalf("FetchMessage: %v", err)
				}
				k := int64(10 * (m.Partition + 1))
				switch m.Offset {
				case k - 1:
					want[m.Partition] = k
					if err := a.CommitMessages(ctx, m, keep[m.Partition]); err != nil {
						t.Fatalf("CommitMessages: %v", err)
					}
				case k - 3:
					keep[m.Partition] = m
				}
			}
			if len(want) != parts {
				t.Fatalf("committed %v", want)
			}

			rec := &rgiRecorder{}
			tJoin := time.Now()
			// b does not commit: the committed offsets stay the
			// application's of a.
			b := rgiNewMember(t, c, "b", group, topic, edit)
			b.noCommit.Store(true)
			b.run(rec)
			_, owned := rgiWaitStable(t, 30*time.Second, topic, parts, a, b.r)
			if len(owned[1]) == 0 {
				t.Fatalf("b got no partition: %v", owned)
			}
			got := rgiCommitted(t, c, group, topic, parts)
			for p := 0; p < parts; p++ {
				if got[p] != want[p] {
					t.Errorf("partition %d: committed %d after the rebalance, the application committed %d", p, got[p], want[p])
				}
			}
			// b starts its partitions at the committed offsets.
			for _, p := range owned[1] {
				p := p
				eventually(t, 30*time.Second, fmt.Sprintf("b reading partition %d", p), func() bool {
					for _, d := range rec.snapshot() {
						if d.part == p {
							if d.offset != want[p] {
								t.Fatalf("b started partition %d at %d, committed %d", p, d.offset, want[p])
							}
							return true
						}
					}
					return false
				})
			}
			// a goes on after what it returned: the next message of each
			// of its partitions is the one produced now.
			prod.produce(parts, 1)
			first := map[int]int64{}
			for len(first) < len(owned[0]) {
				m, err := a.FetchMessage(ctx)
				if err != nil {
					t.Fatalf("FetchMessage after the rebalance: %v", err)
				}
				if _, ok := first[m.Partition]; !ok {
					first[m.Partition] = m.Offset
				}
			}
			for p, off := range first {
				if off != n {
					t.Errorf("a went on in partition %d at offset %d after the rebalance, want %d (it had returned up to %d)", p, off, n, n-1)
				}
			}
			t.Logf("rebalance and restart checked %v after b joined", time.Since(tJoin))
		})
	}
}

// (d) kafka-go returns messages it queued before a rebalance, of
// partitions it no longer owns. A reader with a large queue (thousands of
// messages of every partition fetched ahead) reads slowly; a second one
// joins and takes half the partitions. After the first one's new
// generation started it never returns a message of a partition it lost;
// the two never return the same message; together they return every one.
func TestReaderGroupIntegrationNoStaleMessagesAfterRebalance(t *testing.T) {
	c := requireRackCluster(t)
	const parts, n = 4, 750
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: parts})
	group := "g-" + topic
	prod := newRgiProducer(t, c, topic)
	prod.produce(parts, n)

	edit := func(cfg *kafka.ReaderConfig) { cfg.QueueCapacity = 5000 }
	rec := &rgiRecorder{}
	a := rgiStart(t, c, rec, "a", group, topic, edit)
	gen0, _ := rgiWaitStable(t, 30*time.Second, topic, parts, a.r)
	eventually(t, 30*time.Second, "a's queue filling up", func() bool { return a.r.Stats().QueueLength >= 2000 })
	queued := a.r.Stats().QueueLength

	b := rgiStart(t, c, rec, "b", group, topic, edit)
	gen1, owned := rgiWaitStable(t, 30*time.Second, topic, parts, a.r, b.r)
	t.Logf("a had %d messages queued in generation %d; generation %d: a %v, b %v", queued, gen0, gen1, owned[0], owned[1])
	if len(owned[1]) == 0 {
		t.Fatalf("b got no partition")
	}
	ends := map[int]int64{}
	for p := 0; p < parts; p++ {
		ends[p] = n
	}
	rgiWaitCovered(t, rec, ends)
	a.halt()
	b.halt()

	mine := map[int]bool{}
	for _, p := range owned[0] {
		mine[p] = true
	}
	all := rec.snapshot()
	rgiCheckDeliveries(t, all)
	by := map[[2]int64]string{}
	stale := 0
	for _, d := range all {
		if d.member == "a" && d.before >= gen1 && !mine[d.part] {
			stale++
			if stale <= 5 {
				t.Errorf("a returned partition %d offset %d in generation %d, which gave the partition to b", d.part, d.offset, d.before)
			}
		}
		k := [2]int64{int64(d.part), d.offset}
		if other, dup := by[k]; dup && d.state == rgiCommitOK {
			t.Errorf("partition %d offset %d returned by %s and %s", d.part, d.offset, other, d.member)
		}
		if d.state == rgiCommitOK {
			by[k] = d.member
		}
	}
	if stale > 0 {
		t.Errorf("%d stale messages returned by a", stale)
	}
}

// (e) kafka-go loses messages when a new group starting at LastOffset
// rebalances before its first commit: the next owner of a partition
// resolves "last" again, later. Here the first member joins (nothing
// committed by the application), messages are produced, the first member
// fetches some without committing, and a second member joins: every
// message produced after the first join is returned, none before it, and
// the group ends up committing all of them.
func TestReaderGroupIntegrationLastOffsetNoLoss(t *testing.T) {
	c := requireRackCluster(t)
	const parts, old, fresh = 3, 10, 20
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: parts})
	group := "g-" + topic
	prod := newRgiProducer(t, c, topic)
	prod.produce(parts, old)

	edit := func(cfg *kafka.ReaderConfig) { cfg.StartOffset = kafka.LastOffset }
	a := rgiReader(t, c, "a", group, topic, nil, edit)
	rgiWaitStable(t, 30*time.Second, topic, parts, a)
	prod.produce(parts, fresh)
	ctx := testContext(t, 60*time.Second)
	rec := &rgiRecorder{}
	for i := 0; i < 5; i++ {
		m, err := a.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("FetchMessage: %v", err)
		}
		rec.add(&rgiDelivery{member: "a", part: m.Partition, offset: m.Offset, value: string(m.Value), at: time.Now(), state: rgiNotCommitted})
	}

	b := rgiStart(t, c, rec, "b", group, topic, edit)
	rgiWaitStable(t, 30*time.Second, topic, parts, a, b.r)
	am := &rgiMember{t: t, name: "a", topic: topic, r: a, spy: &apiSpy{}, stop: make(chan struct{}), done: make(chan struct{})}
	am.run(rec)

	eventually(t, 30*time.Second, "every message produced after the join returned", func() bool {
		got := map[[2]int64]bool{}
		for _, d := range rec.snapshot() {
			got[[2]int64{int64(d.part), d.offset}] = true
		}
		for p := 0; p < parts; p++ {
			for o := int64(old); o < old+fresh; o++ {
				if !got[[2]int64{int64(p), o}] {
					return false
				}
			}
		}
		return true
	})
	am.halt()
	b.halt()
	for _, d := range rec.snapshot() {
		if d.offset < old {
			t.Errorf("%s returned partition %d offset %d, produced before the group started", d.member, d.part, d.offset)
		}
	}
	got := rgiCommitted(t, c, group, topic, parts)
	for p := 0; p < parts; p++ {
		if got[p] != old+fresh {
			t.Errorf("partition %d: committed %d, want %d", p, got[p], old+fresh)
		}
	}
}
