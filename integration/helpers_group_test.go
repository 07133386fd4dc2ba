package integration

// Helpers of the group Reader tests (prefix rgi): group readers with the quick timings of these tests, the
// generation and partitions each one works in (from its log), a producer writing "p{partition}-{seq}"
// through each partition's leader, and the brokers' view of leaders, end offsets, coordinator and
// committed offsets.

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
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

// The Reader's log lines that start and end its generations: it logs the
// partitions of a generation before it fetches them, and a generation's end
// once it stopped returning its messages.
var (
	rgiAssignedLine = regexp.MustCompile(`^kafka reader: group \S+ generation (\d+): assigned (.*)$`)
	rgiEndedLine    = regexp.MustCompile(`^generation (\d+) of group \S+ ended`)
)

// rgiLogger logs a Reader's lines with the time and follows its generation.
type rgiLogger struct {
	t      *testing.T
	prefix string
	quiet  atomic.Bool // set once the test is over

	mu    sync.Mutex
	gen   int32            // -1: none
	owned map[string][]int // topic → partitions of gen
}

func (l *rgiLogger) Printf(format string, args ...interface{}) {
	s := fmt.Sprintf(format, args...)
	l.follow(s)
	if !l.quiet.Load() {
		l.t.Logf("%s %s%s", time.Now().Format("15:04:05.000"), l.prefix, s)
	}
}

func (l *rgiLogger) follow(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := rgiAssignedLine.FindStringSubmatch(line); m != nil {
		id, _ := strconv.Atoi(m[1])
		owned := map[string][]int{}
		for _, tp := range strings.Split(m[2], ", ") {
			name, _, _ := strings.Cut(tp, "@")
			i := strings.LastIndexByte(name, '/')
			p, err := strconv.Atoi(name[i+1:])
			if i < 0 || err != nil {
				l.t.Errorf("unparsed partition %q in %q", tp, line)
				continue
			}
			owned[name[:i]] = append(owned[name[:i]], p)
		}
		l.gen, l.owned = int32(id), owned
		return
	}
	if m := rgiEndedLine.FindStringSubmatch(line); m != nil {
		if id, _ := strconv.Atoi(m[1]); int32(id) == l.gen {
			l.gen, l.owned = -1, nil
		}
	}
}

// rgiLogs maps each Reader rgiReader made to its logger.
var rgiLogs sync.Map

// rgiReader is a group reader of topic with the quick timings of these
// tests, its requests recorded by spy (nil: a fresh one).
func rgiReader(t *testing.T, c *ktesting.Cluster, name, group, topic string, spy *apiSpy, edit func(*kafka.ReaderConfig)) *kafka.Reader {
	if spy == nil {
		spy = &apiSpy{}
	}
	logger := &rgiLogger{t: t, prefix: name + ": ", gen: -1}
	cfg := kafka.ReaderConfig{
		Brokers:           c.Brokers,
		GroupID:           group,
		GroupTopics:       []string{topic},
		Dialer:            spy.dialer(&kafka.Dialer{ClientID: "kafka-go-rg-" + name, Timeout: 5 * time.Second}),
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
	r := kafka.NewReader(cfg)
	rgiLogs.Store(r, logger)
	t.Cleanup(func() {
		r.Close()
		logger.quiet.Store(true)
		rgiLogs.Delete(r)
	})
	return r
}

// rgiAssignment returns the generation a group reader works in (-1: none)
// and its partitions of topic, as its log says.
func rgiAssignment(r *kafka.Reader, topic string) (int32, []int) {
	v, ok := rgiLogs.Load(r)
	if !ok {
		return -1, nil
	}
	l := v.(*rgiLogger)
	l.mu.Lock()
	defer l.mu.Unlock()
	ps := append([]int(nil), l.owned[topic]...)
	sort.Ints(ps)
	return l.gen, ps
}

// rgiWaitStable waits until readers work in one generation whose
// assignments are disjoint and cover partitions 0..n-1; it returns the
// generation and each reader's partitions.
func rgiWaitStable(t *testing.T, timeout time.Duration, topic string, n int, readers ...*kafka.Reader) (int32, [][]int) {
	t.Helper()
	var id int32
	var owned [][]int
	eventually(t, timeout, "a stable generation", func() bool {
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

// rgiProducer writes messages "p{partition}-{seq}" through each partition's
// leader, redialing after errors.
type rgiProducer struct {
	t       *testing.T
	brokers []string
	topic   string
	conns   map[int]*kafka.Conn
	seq     map[int]int
	boot    int // bootstrap broker of the next leader lookup: moves on after failures

	stop chan struct{}
	done chan struct{}
	errs atomic.Int64
}

func newRgiProducer(t *testing.T, c *ktesting.Cluster, topic string) *rgiProducer {
	p := &rgiProducer{t: t, brokers: c.Brokers, topic: topic, conns: map[int]*kafka.Conn{}, seq: map[int]int{}}
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
	p.conns = map[int]*kafka.Conn{}
}

// send writes n messages to partition part once.
func (p *rgiProducer) send(part, n int) error {
	conn := p.conns[part]
	if conn == nil {
		d := &kafka.Dialer{ClientID: "kafka-go-rg-producer", Timeout: 5 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := d.DialLeader(ctx, "tcp", p.brokers[p.boot%len(p.brokers)], p.topic, part)
		cancel()
		if err != nil {
			p.boot++
			return err
		}
		p.conns[part], conn = c, c
	}
	msgs := make([]kafka.Message, n)
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
