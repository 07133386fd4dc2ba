package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// The control connections of a cluster: one per broker, and one to a
// bootstrap address, each request under the control deadline (see
// cluster).

const (
	defaultControlTimeout = 3 * time.Second
	minControlTimeout     = time.Second
)

// controlTimeout is the deadline of one control request, dial included:
// a quarter of Dialer.Timeout, at least 1s (or Timeout itself when smaller)
// and at most 3s; 3s when Timeout is zero. Brokers answer these requests at
// once (none waits for data), so a broker silent for seconds is stalled,
// while the faults routed around (a frozen broker, a dead one until its
// leadership moves) last longer than that.
func controlTimeout(d *Dialer) time.Duration {
	if d == nil || d.Timeout <= 0 {
		return defaultControlTimeout
	}
	t := d.Timeout / 4
	if floor := min(d.Timeout, minControlTimeout); t < floor {
		t = floor
	}
	return min(t, defaultControlTimeout)
}

// withControl runs fn, a request any broker can answer, on a control
// connection: see withControlCtx. fn may use a context of its own; the
// connection is closed under it when the control deadline passes.
func (cl *cluster) withControl(ctx context.Context, fn func(*Conn) error) error {
	return cl.withControlCtx(ctx, func(_ context.Context, c *Conn) error { return fn(c) })
}

// withControlCtx runs fn on the control connection of one broker after
// another, responsive ones first (controlTargets), each attempt under the
// control deadline (the context fn gets), until one answers. Kafka errors,
// an unsupported version and the caller's own context end it at once: no
// other broker would do better. Connection failures and stalls move on to
// the next broker; a connection closed under this caller (a shared
// connection another caller's cancelled request broke) does too, without
// blaming the broker.
func (cl *cluster) withControlCtx(ctx context.Context, fn func(context.Context, *Conn) error) error {
	targets := cl.controlTargets()
	if len(targets) == 0 {
		return errors.New("no broker address configured")
	}
	failed := &brokersError{tried: len(targets)}
	for i := 0; i <= len(targets); i++ {
		if i == len(targets) && permanentFailure(failed.errs[0]) {
			break // the first broker again: it would fail the same way
		}
		err, moveOn := cl.attempt(ctx, targets[i%len(targets)], fn)
		if err == nil || !moveOn {
			return err
		}
		failed.add(err)
	}
	return failed
}

// controlTarget is a known broker (id >= 0) or a bootstrap address (id -1).
type controlTarget struct {
	id   int
	addr string
}

func (t controlTarget) String() string {
	if t.id < 0 {
		return t.addr
	}
	return fmt.Sprintf("%d at %s", t.id, t.addr)
}

// controlTargets orders the brokers a request any broker can answer is
// tried on: known brokers with an open control connection, the other known
// brokers, the bootstrap addresses, and last, whatever is remembered as
// unresponsive (the one whose stall ends first, first). A frozen broker's
// connection is not broken, so without the memory of its stall it would be
// picked again and again.
func (cl *cluster) controlTargets() []controlTarget {
	now := time.Now()
	brokers := cl.brokerList()
	cl.connMu.Lock()
	defer cl.connMu.Unlock()
	type ranked struct {
		t     controlTarget
		rank  int
		until time.Time
	}
	var all []ranked
	known := map[string]bool{}
	for _, b := range brokers {
		id := b.ID
		t := controlTarget{id, hostPort(b)}
		known[t.addr] = true
		rank := 1
		if c := cl.conns[id]; c != nil && !c.isBroken() {
			rank = 0
		}
		all = append(all, ranked{t: t, rank: rank})
	}
	for _, addr := range cl.bootstrap {
		if !known[addr] {
			known[addr] = true
			all = append(all, ranked{t: controlTarget{-1, addr}, rank: 2})
		}
	}
	for i := range all {
		if until, ok := cl.stalls.Until(all[i].t.addr, now); ok {
			all[i].rank, all[i].until = 3, until
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.rank != b.rank:
			return a.rank < b.rank
		case a.rank == 3 && !a.until.Equal(b.until):
			return a.until.Before(b.until)
		}
		return a.t.id < b.t.id // bootstrap addresses (-1) keep their order
	})
	out := make([]controlTarget, len(all))
	for i, r := range all {
		out[i] = r.t
	}
	return out
}

func hostPort(b Broker) string { return net.JoinHostPort(b.Host, strconv.Itoa(b.Port)) }

// attempt runs fn on the control connection to t, dialing it if needed,
// under the control deadline. A deadline that passes closes the connection
// (fn may wait on a context of its own) and marks t unresponsive. moveOn
// reports a failure of the broker or the connection, after which another
// broker may answer.
func (cl *cluster) attempt(ctx context.Context, t controlTarget, fn func(context.Context, *Conn) error) (err error, moveOn bool) {
	rctx, cancel := context.WithTimeout(ctx, cl.timeout)
	defer cancel()
	connect := func() (*Conn, error) {
		if t.id >= 0 {
			return cl.conn(rctx, t.id)
		}
		return cl.bootConn(rctx, t.addr)
	}
	kept := cl.hasConn(t)
	c, err := connect()
	var timedOut atomic.Bool
	if err == nil {
		var current atomic.Pointer[Conn]
		current.Store(c)
		stop := context.AfterFunc(rctx, func() {
			if ctx.Err() == nil {
				timedOut.Store(true)
				current.Load().Close() // interrupts fn, whatever context it waits on
			}
		})
		err = fn(rctx, c)
		if err != nil && kept && peerClosed(err) && rctx.Err() == nil {
			// A kept connection the broker had closed (it restarted):
			// the request never reached a live broker. Once more on a
			// fresh connection before taking the broker for gone.
			cl.dropConn(c)
			if c, err = connect(); err == nil {
				current.Store(c)
				err = fn(rctx, c)
			}
		}
		stop()
	}
	switch {
	case err == nil:
		cl.markResponsive(t.addr)
		return nil, false
	case ctx.Err() != nil, errors.Is(err, errClusterClosed):
		return err, false // the caller gave up or closed the client: nobody's fault
	case c == nil && permanentFailure(err):
		// No retry fixes it: refused credentials are the same at every
		// broker; another seed may be the right address.
		var kerr Error
		if errors.As(err, &kerr) {
			return err, false
		}
		cl.markUnresponsive(t.addr)
		return err, true
	case timedOut.Load() || rctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || pastDeadline(rctx):
		// (The socket deadline may fire a moment before rctx's timer.)
		if c != nil {
			cl.dropConn(c)
		}
		cl.markUnresponsive(t.addr)
		return fmt.Errorf("%w: broker %s did not answer within %v (%v)", RequestTimedOut, t, cl.timeout, err), true
	case c == nil:
		var kerr Error
		if errors.As(err, &kerr) && !errors.Is(err, RequestTimedOut) {
			return err, false // e.g. SASL refused the credentials: the same everywhere
		}
		cl.markUnresponsive(t.addr)
		return err, true
	}
	var kerr Error
	var uv *protocol.UnsupportedVersionError
	if (errors.As(err, &kerr) && !errors.Is(err, RequestTimedOut)) || errors.As(err, &uv) {
		return err, false // the broker answered: another one would say the same
	}
	cl.dropConn(c)
	if !closedUnderUs(err) {
		cl.markUnresponsive(t.addr)
	}
	return err, true
}

// hasConn reports whether a control connection to t is open.
func (cl *cluster) hasConn(t controlTarget) bool {
	cl.connMu.Lock()
	defer cl.connMu.Unlock()
	c := cl.boot
	if t.id >= 0 {
		c = cl.conns[t.id]
	} else if cl.bootAddr != t.addr {
		c = nil
	}
	return c != nil && !c.isBroken()
}

func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// closedUnderUs reports failures of a shared connection that another
// caller closed (its request was cancelled or timed out), which say
// nothing about the broker.
func closedUnderUs(err error) bool {
	return errors.Is(err, errConnBroken) || errors.Is(err, net.ErrClosed) || errors.Is(err, RequestTimedOut)
}

// markUnresponsive remembers that the broker at addr stalled or could not
// be reached.
func (cl *cluster) markUnresponsive(addr string) {
	now := time.Now()
	cl.connMu.Lock()
	cl.stalls.Mark(addr, now)
	cl.connMu.Unlock()
}

// markResponsive forgets a stall of the broker at addr once it answers.
func (cl *cluster) markResponsive(addr string) {
	cl.connMu.Lock()
	cl.stalls.Forget(addr)
	cl.connMu.Unlock()
}

// bootConn returns the control connection to the bootstrap address addr.
// One bootstrap connection is kept, to the address that answered last.
func (cl *cluster) bootConn(ctx context.Context, addr string) (*Conn, error) {
	cl.connMu.Lock()
	if cl.closed {
		cl.connMu.Unlock()
		return nil, errClusterClosed
	}
	if c := cl.boot; c != nil && cl.bootAddr == addr && !c.isBroken() {
		cl.connMu.Unlock()
		return c, nil
	}
	cl.connMu.Unlock()
	c, err := cl.dialer.connect(ctx, "tcp", addr, ConnConfig{Broker: -1})
	if err != nil {
		return nil, err
	}
	cl.connMu.Lock()
	defer cl.connMu.Unlock()
	if cl.closed {
		c.Close()
		return nil, errClusterClosed
	}
	if cl.boot != nil {
		cl.boot.Close()
	}
	cl.boot, cl.bootAddr = c, addr
	return c, nil
}

// conn returns the control connection to broker id, dialing it if needed
// (ctx bounds the dial, ApiVersions and SASL exchange).
func (cl *cluster) conn(ctx context.Context, id int) (*Conn, error) {
	for {
		cl.connMu.Lock()
		if cl.closed {
			cl.connMu.Unlock()
			return nil, errClusterClosed
		}
		if c := cl.conns[id]; c != nil && !c.isBroken() {
			cl.connMu.Unlock()
			return c, nil
		}
		// One dial per broker at a time: many partitions starting at once
		// would otherwise open a connection each and keep one.
		wait := cl.dialing[id]
		if wait == nil {
			break // cl.connMu still held
		}
		cl.connMu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	b, ok := cl.broker(id)
	if !ok {
		cl.connMu.Unlock()
		return nil, fmt.Errorf("broker %d is not in the cluster metadata", id)
	}
	done := make(chan struct{})
	if cl.dialing == nil {
		cl.dialing = map[int]chan struct{}{}
	}
	cl.dialing[id] = done
	cl.connMu.Unlock()
	c, err := cl.dialer.connect(ctx, "tcp", hostPort(b), ConnConfig{Broker: b.ID, Rack: b.Rack})
	cl.connMu.Lock()
	defer cl.connMu.Unlock()
	delete(cl.dialing, id)
	close(done)
	if err != nil {
		return nil, err
	}
	if cl.closed {
		c.Close()
		return nil, errClusterClosed
	}
	if old := cl.conns[id]; old != nil {
		old.Close()
	}
	cl.conns[id] = c
	return c, nil
}

// dropConn closes a control connection after a failure so the next use
// redials.
func (cl *cluster) dropConn(c *Conn) {
	cl.connMu.Lock()
	for id, x := range cl.conns {
		if x == c {
			delete(cl.conns, id)
		}
	}
	if cl.boot == c {
		cl.boot = nil
	}
	cl.connMu.Unlock()
	c.Close()
}

// leaderConn returns the control connection to a partition's leader,
// refreshing metadata when the partition is unknown. The dial is under
// the control deadline.
func (cl *cluster) leaderConn(ctx context.Context, topic string, partition int) (*Conn, Partition, error) {
	p, err := cl.leader(ctx, topic, partition)
	if err != nil {
		return nil, p, err
	}
	dctx, cancel := context.WithTimeout(ctx, cl.timeout)
	defer cancel()
	c, err := cl.conn(dctx, p.Leader.ID)
	if err != nil && ctx.Err() == nil {
		cl.markUnresponsive(hostPort(p.Leader))
	}
	return c, p, err
}

// atLeader runs fn, a request only the partition's leader can answer, on
// the control connection to the leader under the control deadline (dial
// included). It makes one attempt: a leader that does not answer in time
// fails it with RequestTimedOut (and is remembered as unresponsive), so
// that the caller re-reads metadata, which names the new leader once one
// is elected, and retries.
func (cl *cluster) atLeader(ctx context.Context, topic string, partition int, fn func(context.Context, *Conn, Partition) error) error {
	p, err := cl.leader(ctx, topic, partition)
	if err != nil {
		return err
	}
	err, _ = cl.attempt(ctx, controlTarget{p.Leader.ID, hostPort(p.Leader)}, func(ctx context.Context, c *Conn) error {
		return fn(ctx, c, p)
	})
	return err
}
