package kafka

// Close of a group Reader joins every goroutine the Reader started, the
// probes its fetchers start while they stop included.

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// probeDialer dials the fake brokers and watches the dials of one
// address: when the last one ended, and how many are running. Once slow
// is closed, a dial of that address takes until release is closed (at
// most a second), so that a probe outliving Close is still dialing when
// Close returns.
type probeDialer struct {
	addr    string
	slow    chan struct{}
	release chan struct{}

	mu       sync.Mutex
	lastEnd  time.Time
	dials    int
	inflight atomic.Int32
}

func (d *probeDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr != d.addr {
		var nd net.Dialer
		return nd.DialContext(ctx, network, addr)
	}
	d.inflight.Add(1)
	defer d.inflight.Add(-1)
	select {
	case <-d.slow:
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-d.release:
		case <-t.C:
		}
	default:
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	d.mu.Lock()
	d.lastEnd, d.dials = time.Now(), d.dials+1
	d.mu.Unlock()
	return c, err
}

func (d *probeDialer) last() (time.Time, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastEnd, d.dials
}

// holdLogger blocks the goroutine that logs a line containing match, once
// armed, until release is closed (at most 10 s); held is closed then.
type holdLogger struct {
	match   string
	armed   atomic.Bool
	once    sync.Once
	held    chan struct{}
	release <-chan struct{}
}

func (l *holdLogger) Printf(format string, args ...interface{}) {
	if !l.armed.Load() || !strings.Contains(fmt.Sprintf(format, args...), l.match) {
		return
	}
	first := false
	l.once.Do(func() { first = true; close(l.held) })
	if !first {
		return
	}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-l.release:
	case <-t.C:
	}
}

// The group fetcher decides to probe the killed follower only after Close
// cancelled the Reader: its fetch failure is logged (and held there) just
// before, and released once the group is closing (the final commit). The
// probe must still be joined: no dial of it may run once Close returned.
func TestReaderGroupCloseJoinsProbe(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true}, 1, 3)
	rtAppend(c, 0, 0, 4)
	follower := c.Broker(2)
	d := &probeDialer{addr: follower.Addr(), slow: make(chan struct{}), release: make(chan struct{})}
	committed := c.Broker(1).Await(protocol.OffsetCommit, 1)
	log := &holdLogger{match: "failed to read from broker 1", held: make(chan struct{}), release: committed}
	r := rtGroupReader(t, c, "g", func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes, cfg.Logger = "b", 1, log
		cfg.CommitInterval = time.Hour // the one commit is the final one, at Close
		cfg.ReplicaCooldown = 50 * time.Millisecond
		cfg.Dialer = &Dialer{ClientID: "reader-test", Timeout: 5 * time.Second, DialFunc: d.dial}
	})
	ctx := rtCtx(t)
	m, err := r.FetchMessage(ctx)
	require.NoError(t, err)
	require.NoError(t, r.CommitMessages(ctx, m))
	require.Equal(t, 2, r.Stats().Routing[0].Broker, "not on the rack-b follower")

	// The follower dies unnoticed: its partition moves to the leader and
	// the follower is probed from then on.
	follower.StopUnnoticed()
	rtAppend(c, 0, 4, 4)
	for i := 1; i < 8; i++ {
		_, err := r.FetchMessage(ctx)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { _, n := d.last(); return n >= 2 }, 10*time.Second, 10*time.Millisecond,
		"the follower was never dialed again after its failure")

	// The next fetch from the leader fails and its fetcher is held in the
	// log line, deciding nothing meanwhile.
	log.armed.Store(true)
	c.Broker(1).ScriptNext(protocol.Fetch, fakebroker.Step{ErrorCode: 6}) // NOT_LEADER_OR_FOLLOWER
	rtAppend(c, 0, 8, 1)
	select {
	case <-log.held:
	case <-ctx.Done():
		t.Fatal("the leader's fetch failure was never logged")
	}
	// Its decision, once released, must probe the follower: the last probe
	// said no, the next is due a second after it.
	last, _ := d.last()
	require.Eventually(t, func() bool { return time.Since(last) > 1300*time.Millisecond }, 5*time.Second, 20*time.Millisecond)
	_, before := d.last()

	close(d.slow)
	require.NoError(t, r.Close())
	running, stacks := d.inflight.Load(), goroutinesIn("(*fetcher).probe")
	close(d.release)
	require.Eventually(t, func() bool { return d.inflight.Load() == 0 }, 5*time.Second, 10*time.Millisecond)
	_, after := d.last()
	assert.Greater(t, after, before, "no probe of the follower while the Reader closed: the test proves nothing")
	assert.Zero(t, running, "a dial of the follower (a probe) was still running after Close returned")
	assert.Empty(t, stacks, "a probe goroutine survived Close")
}
