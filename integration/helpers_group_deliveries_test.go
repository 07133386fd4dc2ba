package integration

// The deliveries of the group Reader tests (prefix rgi): members reading with FetchMessage and committing
// each message, a recorder of every message returned with its generation and commit state, and the checks
// on what the members returned.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

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
	r        *kafka.Reader
	spy      *apiSpy
	noCommit atomic.Bool
	stop     chan struct{}
	done     chan struct{}
	errs     atomic.Int64 // errors FetchMessage returned (not timeouts)
}

func rgiStart(t *testing.T, c *ktesting.Cluster, rec *rgiRecorder, name, group, topic string, edit func(*kafka.ReaderConfig)) *rgiMember {
	m := rgiNewMember(t, c, name, group, topic, edit)
	m.run(rec)
	return m
}

// rgiNewMember makes a member whose loop is not running yet.
func rgiNewMember(t *testing.T, c *ktesting.Cluster, name, group, topic string, edit func(*kafka.ReaderConfig)) *rgiMember {
	m := &rgiMember{t: t, name: name, topic: topic, spy: &apiSpy{}, stop: make(chan struct{}), done: make(chan struct{})}
	m.r = rgiReader(t, c, name, group, topic, m.spy, edit)
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
