package integration

// The group coordinator through broker faults on the real 3-rack cluster: a rack-b group Reader of a
// 6-partition topic while a producer (acks=all, one writer per partition) runs. Killing a broker that is
// not the coordinator causes no rebalance; freezing (SIGSTOP) the coordinator for 15 s, which also leads
// partitions, stops neither the generation nor the delivery of the partitions other brokers lead. Every
// offset is delivered once. Helpers (prefix rgi) are in helpers_group*_test.go.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

const rgcPartitions = 6

// rgcGroup returns a group id (prefix plus a counter) whose coordinator is
// not excluded, and that coordinator.
func rgcGroup(t *testing.T, c *ktesting.Cluster, prefix string, excluded int) (string, int) {
	t.Helper()
	for i := 0; i < 50; i++ {
		group := fmt.Sprintf("%s-g%d", prefix, i)
		if id := rgiCoordinatorID(t, c, group); id != excluded {
			return group, id
		}
	}
	t.Fatalf("no group of %s with a coordinator other than broker %d", prefix, excluded)
	return "", 0
}

// rgcProducer writes to each partition from a goroutine of its own (a
// frozen leader stalls only its partitions), acks=all, redialing the
// leader after failures. It records when each message was acknowledged
// and, once measuring, the longest time between two acknowledgements of
// a partition: a gap in the writes is one no reader can fill.
type rgcProducer struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	acked sync.Map // message value → time.Time of its acknowledgement

	mu        sync.Mutex
	measuring bool
	lastAck   map[int]time.Time
	maxAckGap map[int]time.Duration
}

func (p *rgcProducer) ack(part int, msgs []kafka.Message) {
	now := time.Now()
	for _, m := range msgs {
		p.acked.Store(string(m.Value), now)
	}
	p.mu.Lock()
	if p.measuring {
		if gap := now.Sub(p.lastAck[part]); gap > p.maxAckGap[part] {
			p.maxAckGap[part] = gap
		}
	}
	p.lastAck[part] = now
	p.mu.Unlock()
}

func (p *rgcProducer) measure() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for part := range p.lastAck {
		p.lastAck[part] = now
	}
	p.measuring = true
}

func (p *rgcProducer) ackGaps() map[int]time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[int]time.Duration{}
	for part, g := range p.maxAckGap {
		out[part] = g.Round(time.Millisecond)
	}
	return out
}

func rgcProduce(t *testing.T, c *ktesting.Cluster, topic string) *rgcProducer {
	ctx, cancel := context.WithCancel(context.Background())
	p := &rgcProducer{cancel: cancel, lastAck: map[int]time.Time{}, maxAckGap: map[int]time.Duration{}}
	for part := 0; part < rgcPartitions; part++ {
		p.wg.Add(1)
		go func(part int) {
			defer p.wg.Done()
			d := &kafka.Dialer{ClientID: "kafka-go-rgc-producer", Timeout: 3 * time.Second}
			var conn *kafka.Conn
			seq, boot := 0, part
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for ctx.Err() == nil {
				if conn == nil {
					dctx, dcancel := context.WithTimeout(ctx, 3*time.Second)
					c2, err := d.DialLeader(dctx, "tcp", c.Brokers[boot%len(c.Brokers)], topic, part)
					dcancel()
					if err != nil {
						boot++
						select { // the next lookup after a pause
						case <-ctx.Done():
						case <-time.After(100 * time.Millisecond):
						}
						continue
					}
					conn = c2
				}
				msgs := make([]kafka.Message, 5)
				for i := range msgs {
					msgs[i].Value = []byte(fmt.Sprintf("p%d-%d", part, seq+i))
				}
				// Longer than the ISR takes to drop a frozen follower, so
				// that a healthy leader is waited for, not left.
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := conn.WriteMessages(msgs...); err != nil {
					conn.Close()
					conn = nil
					boot++
					continue
				}
				p.ack(part, msgs)
				seq += len(msgs)
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
			if conn != nil {
				conn.Close()
			}
		}(part)
	}
	t.Cleanup(p.stop)
	return p
}

func (p *rgcProducer) stop() {
	p.cancel()
	p.wg.Wait()
}

// rgcConsumer reads with FetchMessage and commits (CommitInterval), and
// checks as it goes that each partition's offsets come in order, from 0,
// each once. It keeps, per partition, the longest time between two
// deliveries since measuring started.
type rgcConsumer struct {
	r *kafka.Reader
	p *rgcProducer

	mu        sync.Mutex
	next      map[int]int64
	last      map[int]time.Time
	maxGap    map[int]time.Duration
	maxLate   map[int]time.Duration // delivery after the producer's acknowledgement
	measuring bool
	anomalies []string
	errs      []error
	done      chan struct{}
}

func rgcConsume(t *testing.T, r *kafka.Reader, p *rgcProducer) *rgcConsumer {
	cs := &rgcConsumer{r: r, p: p, next: map[int]int64{}, last: map[int]time.Time{}, maxGap: map[int]time.Duration{}, maxLate: map[int]time.Duration{}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(cs.done)
		for ctx.Err() == nil {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				if ctx.Err() == nil {
					cs.mu.Lock()
					cs.errs = append(cs.errs, err)
					cs.mu.Unlock()
				}
				continue
			}
			now := time.Now()
			cs.mu.Lock()
			if m.Offset != cs.next[m.Partition] {
				cs.anomalies = append(cs.anomalies, fmt.Sprintf("partition %d: offset %d, want %d", m.Partition, m.Offset, cs.next[m.Partition]))
			}
			if m.Offset >= cs.next[m.Partition] {
				cs.next[m.Partition] = m.Offset + 1
			}
			if cs.measuring {
				if gap := now.Sub(cs.last[m.Partition]); gap > cs.maxGap[m.Partition] {
					cs.maxGap[m.Partition] = gap
				}
				if at, ok := cs.p.acked.Load(string(m.Value)); ok {
					if late := now.Sub(at.(time.Time)); late > cs.maxLate[m.Partition] {
						cs.maxLate[m.Partition] = late
					}
				}
			}
			cs.last[m.Partition] = now
			cs.mu.Unlock()
			if err := r.CommitMessages(ctx, m); err != nil && ctx.Err() == nil {
				cs.mu.Lock()
				cs.errs = append(cs.errs, fmt.Errorf("commit: %w", err))
				cs.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-cs.done
	})
	return cs
}

// measure starts the gap measurement: the first gap counted of each
// partition starts now.
func (cs *rgcConsumer) measure() {
	cs.p.measure()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	now := time.Now()
	for p := range cs.last {
		cs.last[p] = now
	}
	cs.measuring = true
}

func (cs *rgcConsumer) delivering() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.next) == rgcPartitions
}

func (cs *rgcConsumer) reached(ends map[int]int64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for p, end := range ends {
		if cs.next[p] < end {
			return false
		}
	}
	return true
}

// rgcSetup creates the topic, a group whose coordinator is not the rack-b
// broker (the one the Reader fetches from: a fault there is the
// fetcher's business, not the group's), starts the producer and a rack-b
// group Reader, and waits until every partition is delivered.
func rgcSetup(t *testing.T) (c *ktesting.Cluster, topic string, coord int, spy *apiSpy, p *rgcProducer, cs *rgcConsumer) {
	c = requireRackCluster(t)
	ktesting.LockCluster(t)
	topic = createTopic(t, c, kafka.TopicConfig{NumPartitions: rgcPartitions})
	group, coord := rgcGroup(t, c, topic, brokerInRack(t, c, "b"))
	spy = &apiSpy{}
	p = rgcProduce(t, c, topic)
	r := rgiReader(t, c, "rack-b", group, topic, spy, func(cfg *kafka.ReaderConfig) {
		cfg.Rack = "b"
		cfg.CommitInterval = time.Second
		// The library's defaults: a 15 s freeze is within the session.
		cfg.SessionTimeout = 0
		cfg.HeartbeatInterval = 0
	})
	cs = rgcConsume(t, r, p)
	eventually(t, 60*time.Second, "every partition delivered", cs.delivering)
	return c, topic, coord, spy, p, cs
}

// rgcFinish stops the producer, waits until the reader delivered every
// offset written, and checks each offset came once, in order, with no
// error returned.
func rgcFinish(t *testing.T, c *ktesting.Cluster, topic string, p *rgcProducer, cs *rgcConsumer) {
	p.stop()
	ends := rgiEnds(t, c, topic, rgcPartitions)
	eventually(t, 60*time.Second, fmt.Sprintf("every offset up to %v delivered", ends), func() bool { return cs.reached(ends) })
	cs.mu.Lock()
	defer cs.mu.Unlock()
	require.Empty(t, cs.anomalies, "offsets delivered out of order or twice")
	require.Empty(t, cs.errs, "errors returned by FetchMessage or CommitMessages")
	t.Logf("delivered offsets: %v (ends %v)", cs.next, ends)
}

// gaps returns, per partition, the longest time between two deliveries
// and the longest a message acknowledged to the producer waited to be
// delivered, since measuring started.
func (cs *rgcConsumer) gaps() (gaps, late map[int]time.Duration) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	gaps, late = map[int]time.Duration{}, map[int]time.Duration{}
	for p, g := range cs.maxGap {
		gaps[p] = g.Round(time.Millisecond)
	}
	for p, g := range cs.maxLate {
		late[p] = g.Round(time.Millisecond)
	}
	return gaps, late
}

// A broker that is not the group's coordinator dies: no rebalance (no
// JoinGroup sent), every offset delivered once.
func TestReaderGroupNonCoordinatorKillNoRebalance(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	c, topic, coord, spy, p, cs := rgcSetup(t)
	victim := brokerInRack(t, c, "a") // neither the coordinator nor the rack-b broker
	if victim == coord {
		victim = brokerInRack(t, c, "c")
	}
	leaders := rgiLeaders(t, c, topic, rgcPartitions)
	t.Logf("coordinator: broker %d; killing broker %d; leaders %v", coord, victim, leaders)
	steady := time.Now()
	cs.measure()
	ktesting.KillBroker(t, victim)
	// The fault lasts 10 s; the reader keeps working meanwhile.
	faultEnd := time.Now().Add(10 * time.Second)
	eventually(t, 20*time.Second, "the fault's duration", func() bool { return time.Now().After(faultEnd) })
	rgcFinish(t, c, topic, p, cs)
	joins := spy.count(int16(protocol.JoinGroup), steady, time.Now())
	gaps, late := cs.gaps()
	t.Logf("JoinGroup requests after the kill: %d; per partition: longest gap between deliveries %v, longest delivery after the producer's ack %v, longest gap between the producer's acks %v",
		joins, gaps, late, p.ackGaps())
	require.Equal(t, 0, joins, "rebalances caused by the death of broker %d, not the coordinator", victim)
}

// The coordinator, which also leads partitions, is frozen for 15 s: the
// generation goes on (no JoinGroup), and the partitions other brokers lead
// are delivered with no gap over 5 s.
func TestReaderGroupFrozenCoordinatorKeepsDelivering(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	c, topic, coord, spy, p, cs := rgcSetup(t)
	leaders := rgiLeaders(t, c, topic, rgcPartitions)
	var others, led []int
	for part, l := range leaders {
		if l == coord {
			led = append(led, part)
		} else {
			others = append(others, part)
		}
	}
	sort.Ints(others)
	sort.Ints(led)
	t.Logf("coordinator: broker %d, leading %v; leaders %v", coord, led, leaders)
	steady := time.Now()
	cs.measure()
	ktesting.PauseBroker(t, coord)
	pausedAt := time.Now()
	eventually(t, 30*time.Second, "the 15 s freeze", func() bool { return time.Since(pausedAt) >= 15*time.Second })
	ktesting.ResumeBroker(t, coord)
	t.Logf("broker %d frozen for %v", coord, time.Since(pausedAt).Round(time.Millisecond))
	rgcFinish(t, c, topic, p, cs)
	joins := spy.count(int16(protocol.JoinGroup), steady, time.Now())
	gaps, late := cs.gaps()
	ackGaps := p.ackGaps()
	t.Logf("JoinGroup requests after the freeze: %d; per partition: longest gap between deliveries %v, longest delivery after the producer's ack %v, longest gap between the producer's acks %v (partitions led by the frozen broker: %v)",
		joins, gaps, late, ackGaps, led)
	require.Equal(t, 0, joins, "the frozen coordinator ended the generation")
	for _, part := range others {
		// A gap in the writes (acks=all waits until the frozen broker
		// leaves the ISR) is no reader's to fill: what the reader owes is
		// delivering each written message within 5 s, and no gap
		// between deliveries longer than 5 s beyond the writes' own.
		require.LessOrEqual(t, late[part], 5*time.Second, "partition %d (leader %d): a written message waited to be delivered", part, leaders[part])
		require.LessOrEqual(t, gaps[part], max(5*time.Second, ackGaps[part]+time.Second), "partition %d (leader %d) went without deliveries", part, leaders[part])
	}
}
