// Package fetchengine sends a Reader's fetches: one loop and one data
// connection per broker, each request carrying every partition that is
// ready to be read from that broker.
//
// The engine knows nothing of routing, offsets or the application. A
// partition's owner (the Reader's per-partition fetcher) asks for its next
// fetch at a broker with Fetch and gets that partition's part of the next
// response. Which broker a partition is read from is the owner's choice,
// made between fetches, so a partition moves between loops only between
// batches.
//
// A loop waits, before sending, for the partitions of its last response to
// come back (Fetch again) or to say they will not for now (Release): a
// partition left out of a long poll would otherwise wait for it to end.
// For the same reason a poll lasts only HeldPoll while a partition is
// expected soon (one held for its application, one left out of the
// request), and no longer than JoinSettle after a partition new to the
// broker came, since others usually follow (Readers starting, a group
// assignment). Otherwise it lasts MaxWait, and a
// partition that asks while the loop's idle long poll is in flight is
// fetched on a second connection of the loop (sidelane.go): only arriving
// partitions pay for the long poll's length.
package fetchengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"syscall"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Conn is a data connection to one broker.
type Conn interface {
	// Versions returns the broker's API versions.
	Versions() (protocol.Versions, error)
	// Fetch sends req, at the highest version both sides support, and
	// returns the decoded response. Byte fields of the response alias a
	// buffer that is never reused. A broker silent until stallBy (zero:
	// no such bound) fails the request.
	Fetch(ctx context.Context, req *protocol.FetchRequest, stallBy time.Time) (*protocol.FetchResponse, error)
	// Broken reports whether the connection can no longer be used.
	Broken() bool
	Close() error
}

// Config is what the engine needs from its Reader.
type Config struct {
	// Dial connects to a broker.
	Dial func(ctx context.Context, broker int) (Conn, error)
	// MinBytes and IsolationLevel go in every request.
	MinBytes       int32
	IsolationLevel int8
	// MaxWait returns the long poll for a partition's fetch (old brokers
	// get less: oldBrokerWait).
	MaxWait func(w Want) time.Duration
	// Budget bounds, per owner (Want.Owner: a Reader), the bytes fetched
	// and not yet handed to the application: its partitions' part of a
	// request asks for at most what is left of it after Buffered (what
	// the owner holds) and its part of the requests in flight. Zero: no
	// bound. The Reader calls RoomFreed when it hands bytes out.
	Budget   int64
	Buffered func(owner uint64) int64
	// Shared, when set, also bounds the requests' bytes: a budget shared
	// with other engines (the caller counts what it holds there).
	Shared *Budget
	// ErrorCode turns a response's error code into an error (default: a
	// plain one naming the code).
	ErrorCode func(code int16) error
	// NoSessions turns incremental fetch sessions off: every request is
	// a full fetch.
	NoSessions bool
	// Linger bounds the wait for the partitions of the last response to
	// come back before the next request (default 100 ms).
	Linger time.Duration
	// JoinSettle is how long after a partition new to a broker's loop
	// asks the loop's polls end early: others usually follow (default
	// 250 ms; negative: never).
	JoinSettle time.Duration
	// IdleTimeout closes a loop's connection after it sent nothing for
	// that long (default 2 min), before the broker drops it
	// (connections.max.idle.ms, 10 min) and the next fetch there fails
	// on a dead socket.
	IdleTimeout time.Duration
	// KeepEpoch changes whenever anything a Want.Keep depends on besides
	// the time changed (metadata, leaders' high watermarks, cooldowns); a
	// fetch kept under one epoch is asked again under the next. Nil: Keep
	// is asked after every answer.
	KeepEpoch func() uint64
}

// Want is one partition's part of the next fetch.
type Want struct {
	Topic       string
	TopicID     [16]byte // zero: unknown, the request names topics (v12-)
	Partition   int32
	Offset      int64
	LeaderEpoch int32
	MaxBytes    int32
	Rack        string // the client's rack, "" for none
	Follower    bool   // the broker is not the partition's leader
	// Drained: the partition's previous fetch from this broker returned
	// no records (the broker had nothing past Offset then).
	Drained bool
	// Owner tells apart the callers of an engine shared by several Readers:
	// two owners may read the same partition (they go in separate requests).
	Owner uint64
	// Timeout is how long past the long poll the response may take.
	Timeout time.Duration
	// StallTimeout, when set, is how long past the long poll the broker
	// may stay silent before the request fails (a follower that stalls is
	// left for the leader early).
	StallTimeout time.Duration
	// DialTimeout bounds connecting to the broker.
	DialTimeout time.Duration
	// Keep, when set, lets the fetch go on waiting across answers that
	// leave the partition out of the broker's incremental fetch session
	// (no records, the same watermarks, no error, no replica named) until
	// the time it returns (the zero time: answer now): the caller has
	// nothing to decide on such an answer, and an idle partition then
	// costs it no wakeup per long poll. Until then, and while
	// Config.KeepEpoch stays the same, the engine keeps the fetch without
	// asking again. It calls Keep with its lock held while the caller
	// waits in Fetch.
	Keep func() (until time.Time)
}

// Result is a partition's part of a response.
type Result struct {
	// Partition aliases the response; nil when Err is set.
	Partition *protocol.FetchResponsePartition
	Throttle  time.Duration
	// MaxWait is the long poll the request asked for.
	MaxWait time.Duration
	// Data says some partition of the response had records: an empty
	// answer for this one is then no sign that the broker skipped the
	// long poll.
	Data bool
	// MaxBytes is the partition's max bytes the request asked for (Want's,
	// or less: capPartitions); Full says the response's records reached the
	// request's max bytes. Only these limits let a broker end a
	// partition's data inside a batch: any other cut batch is malformed.
	MaxBytes int32
	Full     bool
	Err      error
	// DialFailed says Err is a failure to connect to the broker.
	DialFailed bool
}

// ErrClosed is returned by Fetch once the engine is closed.
var ErrClosed = errors.New("fetchengine: closed")

// ErrSuperseded answers a Fetch whose partition (same owner) asked again
// before it was sent: a slot has one waiter, and a waiter it drops is
// answered, never left waiting. The caller's fetch did not happen; if it
// is still the partition's fetcher, it asks again.
var ErrSuperseded = errors.New("fetchengine: superseded by a later fetch of the same partition")

// key names a partition on the wire and in the fetch session.
type key struct {
	topic     string
	partition int32
}

// slot is one owner's partition: what waits, is out or is held.
type slot struct {
	owner uint64
	key
}

func slotOf(w Want) slot { return slot{w.Owner, key{w.Topic, w.Partition}} }

// waiter is one partition's pending Fetch call.
type waiter struct {
	want Want
	// maxBytes is the partition's max bytes in the request being built:
	// want.MaxBytes, or less when its owner's grant is less (request).
	maxBytes int32
	done     chan Result // buffered: the loop never blocks on it
	// abandoned: the caller's context ended (guarded by Engine.mu).
	abandoned bool
	// keptUntil and keptEpoch: what the waiter's Keep last said, under
	// which KeepEpoch (guarded by Engine.mu).
	keptUntil time.Time
	keptEpoch uint64
}

// Engine runs one loop per broker.
type Engine struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	loops  map[int]*loop
	// back: the loop whose last response a partition was in, until it
	// asks again or releases.
	back map[slot]*loop
	// heldAt: the loop a held partition (Hold) will come back to.
	heldAt map[slot]*loop
	stats  Stats
	// inflight is what the requests in flight may bring, per owner.
	inflight map[uint64]int64
	// roomWait is closed by RoomFreed and when a request ends.
	roomWait chan struct{}
	now      func() time.Time // time.Now; tests move it
}

// New starts an engine; Close stops it.
func New(cfg Config) *Engine {
	if cfg.Linger <= 0 {
		cfg.Linger = 100 * time.Millisecond
	}
	if cfg.ErrorCode == nil {
		cfg.ErrorCode = func(code int16) error { return fmt.Errorf("kafka error %d", code) }
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	if cfg.JoinSettle == 0 {
		cfg.JoinSettle = 250 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Engine{cfg: cfg, ctx: ctx, cancel: cancel, loops: map[int]*loop{}, back: map[slot]*loop{}, heldAt: map[slot]*loop{},
		inflight: map[uint64]int64{}, now: time.Now}
}

// Close stops every loop and closes their connections.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	for _, l := range e.loops {
		l.failPending(ErrClosed)
	}
	e.mu.Unlock()
	e.cancel()
	e.wg.Wait()
}

// Stats counts what the engine sent.
type Stats struct {
	Conns       int   // data connections open
	Requests    int64 // Fetch requests answered
	Incremental int64 // of which in an incremental fetch session
	Partitions  int64 // partitions answered over all requests
	Kept        int64 // answers a caller was spared: its fetch went on waiting (Want.Keep)
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.stats
	st.Conns = 0
	for _, l := range e.loops {
		for _, ln := range []*lane{&l.main, &l.side} {
			if ln.hasConn {
				st.Conns++
			}
		}
	}
	return st
}

// Conns returns the number of open data connections.
func (e *Engine) Conns() int { return e.Stats().Conns }

// RoomFreed wakes loops waiting for the budget (Config.Room).
func (e *Engine) RoomFreed() {
	e.mu.Lock()
	if e.roomWait != nil {
		close(e.roomWait)
		e.roomWait = nil
	}
	e.mu.Unlock()
}

// Fetch adds the partition to the next fetch of broker and returns its
// part of the response. It returns ctx's error when ctx ends first; the
// partition's data in a response that arrives later is dropped, so the
// caller fetches the same offset again. A Fetch of the same owner's
// partition that is still waiting to be sent is answered ErrSuperseded.
func (e *Engine) Fetch(ctx context.Context, broker int, w Want) Result {
	if err := ctx.Err(); err != nil {
		// A caller already stopped takes no one's place.
		return Result{Err: err}
	}
	k := slotOf(w)
	wt := &waiter{want: w, done: make(chan Result, 1)}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return Result{Err: ErrClosed}
	}
	e.comeBack(k)
	l := e.loops[broker]
	if l == nil {
		l = newLoop(e, broker)
		e.loops[broker] = l
		e.wg.Add(2)
		go l.main.run()
		go l.side.run()
	}
	if _, seen := l.ends[k.key]; !seen {
		l.joined = e.now()
	}
	if old := l.pending[k]; old != nil {
		old.done <- Result{Err: ErrSuperseded}
	}
	l.pending[k] = wt
	l.signal()
	e.mu.Unlock()

	select {
	case r := <-wt.done:
		return r
	case <-ctx.Done():
		e.mu.Lock()
		if l.pending[k] == wt {
			delete(l.pending, k)
		}
		// In flight: the loop finds the waiter abandoned and drops the
		// data.
		wt.abandoned = true
		e.mu.Unlock()
		return Result{Err: ctx.Err()}
	}
}

// Waiting reports whether a fetch of owner's partition waits at some
// broker to be sent.
func (e *Engine) Waiting(owner uint64, topic string, partition int32) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.loops {
		if l.pending[slot{owner, key{topic, partition}}] != nil {
			return true
		}
	}
	return false
}

// Release says the partition will not ask for a fetch soon (it backs off,
// waits for the application, or moves): its broker's loop stops waiting
// for it.
func (e *Engine) Release(owner uint64, topic string, partition int32) {
	e.mu.Lock()
	e.comeBack(slot{owner, key{topic, partition}})
	e.mu.Unlock()
}

// Hold says the partition waits for its application to take what it
// fetched while its broker has more for it: it will ask again soon, and
// meanwhile the broker's loop sends no long poll (HeldPoll at most), which
// would keep the partition's next fetch waiting for records of the others.
func (e *Engine) Hold(owner uint64, topic string, partition int32) {
	k := slot{owner, key{topic, partition}}
	e.mu.Lock()
	l := e.back[k]
	e.comeBack(k)
	if l != nil {
		l.held[k] = true
		e.heldAt[k] = l
	}
	e.mu.Unlock()
}

// HeldPoll bounds the long poll of a loop while a partition is expected to
// ask soon (held, left out, or new partitions arriving): its next fetch
// waits at most that long for the request in flight.
const HeldPoll = 20 * time.Millisecond

// comeBack ends the wait of the loop whose last response had k, and k's
// hold; e.mu held.
func (e *Engine) comeBack(k slot) {
	if l := e.heldAt[k]; l != nil {
		delete(e.heldAt, k)
		delete(l.held, k)
	}
	if l := e.back[k]; l != nil {
		delete(e.back, k)
		delete(l.out, k)
		l.signal()
	}
}

// loop sends the fetches of one broker: its main lane long-polls in a
// fetch session, its side lane fetches the partitions that arrive while
// the main lane's idle long poll is in flight (sidelane.go).
type loop struct {
	e      *Engine
	broker int

	// Guarded by e.mu:
	pending map[slot]*waiter
	out     map[slot]bool // in the last response, not back yet
	held    map[slot]bool // held (Engine.Hold): back soon, with records to read
	ends    map[key]int64 // each partition's readable end in its last answer here
	joined  time.Time     // when a partition new to the loop (not in ends) last asked
	// idleUntil: when the main lane's long poll in flight ends, if it is
	// idle (sidelane.go); zero otherwise.
	idleUntil time.Time

	main, side lane
}

// lane is one connection of a loop and the requests sent on it, one at a
// time.
type lane struct {
	l    *loop
	side bool
	wake chan struct{}

	// Guarded by e.mu:
	// starved: the request in flight left owners out for room; they
	// will ask soon.
	starved bool
	hasConn bool
	busy    bool // a request is in flight

	conn Conn // the lane's own
	sess session

	// take's working space, kept from one request to the next: at idle
	// every long poll takes every partition of the broker again, and
	// building these anew each time was most of an idle consumer's CPU.
	// Used by the lane's goroutine only, between requests.
	scratch takeScratch
}

type takeScratch struct {
	in      map[key]bool
	wants   map[uint64]int64
	granted map[uint64]bool
	owners  []uint64
	cands   []*waiter
	batch   []*waiter
	res     []reservation
}

// reset empties the working space for a take.
func (t *takeScratch) reset() {
	if t.in == nil {
		t.in, t.wants, t.granted = map[key]bool{}, map[uint64]int64{}, map[uint64]bool{}
	}
	clear(t.in)
	clear(t.wants)
	clear(t.granted)
	clear(t.cands) // no waiter kept alive by the working space
	clear(t.batch)
	t.owners, t.cands, t.batch, t.res = t.owners[:0], t.cands[:0], t.batch[:0], t.res[:0]
}

func newLoop(e *Engine, broker int) *loop {
	l := &loop{e: e, broker: broker, pending: map[slot]*waiter{}, out: map[slot]bool{},
		held: map[slot]bool{}, ends: map[key]int64{}}
	l.main = lane{l: l, wake: make(chan struct{}, 1)}
	l.side = lane{l: l, side: true, wake: make(chan struct{}, 1)}
	return l
}

// signal wakes both lanes.
func (l *loop) signal() {
	for _, ln := range []*lane{&l.main, &l.side} {
		select {
		case ln.wake <- struct{}{}:
		default:
		}
	}
}

// busy reports whether a request of l is in flight; e.mu held.
func (l *loop) busy() bool { return l.main.busy || l.side.busy }

// failPending answers every pending waiter with err; e.mu held.
func (l *loop) failPending(err error) {
	for k, w := range l.pending {
		w.done <- Result{Err: err}
		delete(l.pending, k)
	}
}

func (ln *lane) run() {
	defer ln.l.e.wg.Done()
	defer func() {
		if ln.conn != nil {
			ln.conn.Close()
		}
	}()
	for {
		batch, reserved, ok := ln.next()
		if !ok {
			return
		}
		ln.fetch(batch, reserved)
	}
}

// reservation is what one owner's partitions of a request may bring.
type reservation struct {
	owner uint64
	bytes int64
	// own is what the owner's own budget granted, before the process's
	// shared budget had its say: what its partitions may bring
	// (capPartitions).
	own int64
}

// next waits until there is something to fetch, the partitions of the
// last response are back (or Linger passed) and the budget has room, then
// takes the pending waiters of one rack setting whose owners have room and
// reserves the bytes the request may bring. The side lane only takes
// while the main lane's idle long poll has a while to go. ok is false
// when the engine is closed.
func (ln *lane) next() (batch []*waiter, reserved []reservation, ok bool) {
	l := ln.l
	e := l.e
	var linger, idle <-chan time.Time
	for {
		var roomWait <-chan struct{}
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, nil, false
		}
		switch {
		case len(l.pending) == 0 || (ln.side && !l.arrivalsGoSide()):
			if idle == nil && ln.conn != nil {
				idle = time.After(ln.idleTimeout())
			}
		case !ln.side && len(l.out) > 0:
			if linger == nil {
				linger = time.After(e.cfg.Linger)
			}
		default:
			batch, reserved, roomWait = ln.take()
			if len(batch) == 0 {
				break
			}
			ln.busy = true
			e.mu.Unlock()
			return batch, reserved, true
		}
		e.mu.Unlock()
		select {
		case <-ln.wake:
		case <-roomWait:
		case <-linger:
			// Those not back by now are left out.
			e.mu.Lock()
			for k := range l.out {
				delete(l.out, k)
				if e.back[k] == l {
					delete(e.back, k)
				}
			}
			e.mu.Unlock()
			linger = nil
		case <-idle:
			idle = nil
			e.mu.Lock()
			quiet := len(l.pending) == 0 || (ln.side && !l.arrivalsGoSide())
			e.mu.Unlock()
			if quiet {
				ln.closeConn()
			}
		case <-e.ctx.Done():
			return nil, nil, false
		}
	}
}

// take moves the next request's waiters out of pending: one rack setting,
// a partition once (two owners of it wait for the next request), and only
// owners with room in the budgets, for whom it reserves what their
// partitions may bring. With none, it returns what to wait for; when some
// owners are left out for room, the request polls short (starved), so
// that they are asked soon after their room comes back. e.mu held.
func (ln *lane) take() (batch []*waiter, reserved []reservation, wait <-chan struct{}) {
	l := ln.l
	e := l.e
	t := &ln.scratch
	t.reset()
	rack := ""
	first := true
	for _, w := range l.pending {
		if first {
			rack, first = w.want.Rack, false
		}
		if k := slotOf(w.want).key; w.want.Rack == rack && !t.in[k] {
			t.in[k] = true
			t.cands = append(t.cands, w)
			if _, seen := t.wants[w.want.Owner]; !seen {
				t.owners = append(t.owners, w.want.Owner)
			}
			t.wants[w.want.Owner] += l.need(w.want)
		}
	}
	ln.starved = false
	for _, o := range t.owners {
		got := e.room(l, o)
		if got <= 0 {
			ln.starved = true
			if e.roomWait == nil {
				e.roomWait = make(chan struct{})
			}
			wait = e.roomWait
			continue
		}
		got = min(got, max(t.wants[o], 1))
		own := got
		if e.cfg.Shared != nil {
			var sharedWait <-chan struct{}
			if got, sharedWait = e.cfg.Shared.reserve(got, e.held(o)); got == 0 {
				// Every Reader of the process holds its share: wait
				// for one to hand bytes out.
				ln.starved = true
				wait = sharedWait
				continue
			}
		}
		e.inflight[o] += got
		t.res = append(t.res, reservation{o, got, own})
		t.granted[o] = true
	}
	for _, w := range t.cands {
		if t.granted[w.want.Owner] {
			t.batch = append(t.batch, w)
			delete(l.pending, slotOf(w.want))
		}
	}
	return t.batch, t.res, wait
}

// caughtUpBytes is what the next fetch of a partition that has read its
// broker's end reserves of the budget (MaxBytes if less, MinBytes if
// more): a long poll brings what arrives while it waits, and the next fetch
// at once whatever more there is. Reserving MaxBytes for every such
// partition let long polls at idle brokers hold the whole budget while the
// broker with records waited for them to end.
const caughtUpBytes = 1 << 20

// need returns what w's fetch reserves of the budget; e.mu held.
func (l *loop) need(w Want) int64 {
	n := int64(max(w.MaxBytes, 0))
	if end, ok := l.ends[key{w.Topic, w.Partition}]; ok && w.Offset >= end {
		n = min(n, max(caughtUpBytes, int64(l.e.cfg.MinBytes)))
	}
	return n
}

// room returns how many bytes owner's part of l's next request may bring:
// the budget less what owner holds and what its part of the requests in
// flight may bring, and no more
// than an even share of the budget among the loops with work, so that a
// long poll at one broker never holds the whole budget. Zero (wait) when
// less than a quarter of the budget is free, so that fetches stay large,
// unless nothing is held at all. e.mu held.
func (e *Engine) room(l *loop, owner uint64) int64 {
	if e.cfg.Budget <= 0 {
		return math.MaxInt32
	}
	held := e.held(owner)
	room := e.cfg.Budget - held
	if held > 0 && room < e.cfg.Budget/4 {
		return 0
	}
	active := 1 // l
	for _, o := range e.loops {
		if o != l && (o.busy() || len(o.pending) > 0 || len(o.out) > 0 || len(o.held) > 0) {
			active++
		}
	}
	return min(max(room, 1), e.cfg.Budget/int64(active), math.MaxInt32)
}

// held returns what owner holds and its requests may bring; e.mu held.
func (e *Engine) held(owner uint64) int64 {
	n := e.inflight[owner]
	if e.cfg.Buffered != nil {
		n += e.cfg.Buffered(owner)
	}
	return n
}

// unreserve gives back what a request reserved; e.mu held.
func (e *Engine) unreserve(reserved []reservation) {
	for _, r := range reserved {
		if e.inflight[r.owner] -= r.bytes; e.inflight[r.owner] == 0 {
			delete(e.inflight, r.owner)
		}
	}
	if e.roomWait != nil {
		close(e.roomWait)
		e.roomWait = nil
	}
}

// fetch sends one request for batch, which may bring reserved bytes, and
// hands out the response.
func (ln *lane) fetch(batch []*waiter, reserved []reservation) {
	l := ln.l
	e := l.e
	var total int64
	for _, r := range reserved {
		total += r.bytes
	}
	defer func() {
		e.mu.Lock()
		e.unreserve(reserved)
		ln.busy = false
		if !ln.side {
			l.idleUntil = time.Time{}
		}
		e.mu.Unlock()
		if e.cfg.Shared != nil {
			e.cfg.Shared.Release(total)
		}
	}()
	if ln.conn != nil && ln.conn.Broken() {
		ln.closeConn()
	}
	fresh := ln.conn == nil // dialed for this request
	if fresh && !ln.dial(batch) {
		return
	}
	vs, err := ln.conn.Versions()
	if err != nil {
		ln.closeConn()
		ln.answer(batch, nil, Result{Err: err})
		return
	}

	// The side lane's fetches are short-lived and sessionless.
	useSession := !ln.side && !e.cfg.NoSessions && vs[protocol.Fetch].Max >= 7
	if vs[protocol.Fetch].Max >= 13 {
		// Sessions name topics one way for their whole life: by id
		// from v13, which needs every id.
		for _, w := range batch {
			useSession = useSession && w.want.TopicID != [16]byte{}
		}
	}
	for attempt := 0; ; attempt++ {
		req, listed, wait, timeout, stall := ln.request(batch, reserved, vs, total, useSession)
		ctx, cancel := context.WithTimeout(e.ctx, wait+timeout)
		var stallBy time.Time
		if stall > 0 {
			stallBy = time.Now().Add(wait + stall)
		}
		resp, err := ln.conn.Fetch(ctx, req, stallBy)
		cancel()
		if err != nil {
			ln.sess.reset()
			if ln.conn.Broken() {
				ln.closeConn()
			}
			if !fresh && ln.conn == nil && closedByPeer(err) && e.ctx.Err() == nil {
				// The broker closed a connection that served before: a
				// broker that closes one (idle, or for reasons of its own)
				// is not a broker that failed. Ask once more on a new
				// connection; a dead broker refuses it (DialFailed).
				fresh = true
				if !ln.dial(batch) {
					return
				}
				continue
			}
			ln.answer(batch, nil, Result{Err: err, MaxWait: wait})
			return
		}
		if resp.ErrorCode != 0 {
			incremental := req.SessionEpoch > 0
			ln.sess.reset()
			if isSessionError(resp.ErrorCode) && attempt == 0 {
				continue // start over with a full fetch
			}
			if incremental && attempt == 0 {
				continue // the error may be the session's: retry in full
			}
			ln.answer(batch, nil, Result{Err: fmt.Errorf("fetching from broker %d: %w", l.broker, e.cfg.ErrorCode(resp.ErrorCode)), MaxWait: wait})
			return
		}
		ln.sess.update(req, resp, listed)
		e.mu.Lock()
		e.stats.Requests++
		if req.SessionEpoch > 0 {
			e.stats.Incremental++
		}
		e.stats.Partitions += int64(len(batch))
		e.mu.Unlock()
		n := recordBytes(resp)
		ln.answer(batch, resp, Result{Throttle: time.Duration(resp.ThrottleTimeMs) * time.Millisecond, MaxWait: wait,
			Data: n > 0, Full: n >= int64(req.MaxBytes)})
		return
	}
}

// recordBytes is the bytes of records of every partition of resp.
func recordBytes(resp *protocol.FetchResponse) int64 {
	var n int64
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			n += int64(len(resp.Topics[i].Partitions[j].Records))
		}
	}
	return n
}

// request builds the fetch of batch: the shortest long poll and timeouts
// its partitions ask for, and at most the budget's room in bytes.
func (ln *lane) request(batch []*waiter, reserved []reservation, vs protocol.Versions, maxBytes int64, useSession bool) (req *protocol.FetchRequest, listed []*waiter, wait, timeout, stall time.Duration) {
	l := ln.l
	e := l.e
	capPartitions(batch, reserved)
	req = &protocol.FetchRequest{
		ReplicaID:      -1,
		ReplicaEpoch:   -1,
		MinBytes:       e.cfg.MinBytes,
		MaxBytes:       int32(maxBytes),
		IsolationLevel: e.cfg.IsolationLevel,
		SessionEpoch:   -1, // no fetch session: every fetch is a full one
		RackID:         batch[0].want.Rack,
	}
	wait = time.Duration(math.MaxInt64)
	for i, w := range batch {
		wait = min(wait, e.cfg.MaxWait(w.want), oldBrokerWait(vs, w.want))
		if i == 0 || w.want.Timeout < timeout {
			timeout = w.want.Timeout
		}
		if s := w.want.StallTimeout; s > 0 && (stall == 0 || s < stall) {
			stall = s
		}
	}
	e.mu.Lock()
	if len(l.held) > 0 || ln.starved || len(l.pending) > 0 {
		// Partitions wait for this request: poll short.
		wait = min(wait, HeldPoll)
	} else if left := l.joined.Add(e.cfg.JoinSettle).Sub(e.now()); left > 0 {
		// Partitions new to the broker may still come (Readers starting,
		// a group assignment): poll until they would have, in one request
		// rather than a HeldPoll at a time; one arriving meanwhile waits
		// for its end.
		wait = min(wait, max(left, HeldPoll))
	}
	wait = ln.sideWait(batch, wait)
	e.mu.Unlock()
	listed = ln.sess.build(req, batch, useSession)
	topics := map[string]int{}
	for _, w := range listed {
		t, ok := topics[w.want.Topic]
		if !ok {
			t = len(req.Topics)
			topics[w.want.Topic] = t
			req.Topics = append(req.Topics, protocol.FetchRequestTopic{Topic: w.want.Topic, TopicID: w.want.TopicID})
		}
		req.Topics[t].Partitions = append(req.Topics[t].Partitions, protocol.FetchRequestPartition{
			Partition:          w.want.Partition,
			CurrentLeaderEpoch: w.want.LeaderEpoch,
			FetchOffset:        w.want.Offset,
			LastFetchedEpoch:   -1,
			LogStartOffset:     -1,
			PartitionMaxBytes:  w.maxBytes,
		})
	}
	req.MaxWaitMs = protocol.Millis(wait)
	return req, listed, wait, timeout, stall
}

// capPartitions sets each waiter's max bytes: its MaxBytes, and in a
// request for several owners no more than its share of what its owner's
// own budget granted. The request's MaxBytes is the sum of the grants, and
// a broker fills it partition by partition in request order: uncapped, an
// owner's partition listed first could take what another owner was
// granted, and fetch past its own budget. (The process's shared budget
// needs no cap: the request's MaxBytes bounds the total it reserved, and
// capping by its cuts made fetches of 300 Readers small and slow.)
func capPartitions(batch []*waiter, reserved []reservation) {
	for _, w := range batch {
		w.maxBytes = w.want.MaxBytes
	}
	if len(reserved) < 2 {
		return
	}
	count := make(map[uint64]int64, len(reserved))
	for _, w := range batch {
		count[w.want.Owner]++
	}
	share := make(map[uint64]int32, len(reserved))
	for _, r := range reserved {
		share[r.owner] = int32(min(max(r.own/max(count[r.owner], 1), 1), math.MaxInt32))
	}
	for _, w := range batch {
		if s, ok := share[w.want.Owner]; ok {
			w.maxBytes = min(w.maxBytes, s)
		}
	}
}

// answer hands each waiter of batch its partition of resp (or base's error
// when resp is nil) and remembers who must come back.
func (ln *lane) answer(batch []*waiter, resp *protocol.FetchResponse, base Result) {
	l := ln.l
	e := l.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if !ln.side {
		// Partitions answered ask again soon: for the next main request.
		l.idleUntil = time.Time{}
	}
	now, epoch := e.now(), uint64(0)
	if e.cfg.KeepEpoch != nil {
		epoch = e.cfg.KeepEpoch()
	}
	for _, w := range batch {
		if w.abandoned {
			continue
		}
		r := base
		r.MaxBytes = w.maxBytes
		s := slotOf(w.want)
		k := s.key
		if resp != nil {
			r.Partition = find(resp, w.want)
			if r.Partition == nil && ln.keeps(w, base, now, epoch) {
				// No news for it: it waits for the next request,
				// drained now (the broker had nothing past its offset).
				w.want.Drained = true
				l.pending[s] = w
				e.stats.Kept++
				continue
			}
			if r.Partition != nil {
				ln.sess.saw(k, r.Partition)
			} else if ln.sess.incremental() {
				r.Partition = ln.sess.unchanged(k)
			}
			if r.Partition == nil {
				r.Err = fmt.Errorf("fetching %s/%d from broker %d: partition missing from the response", w.want.Topic, w.want.Partition, l.broker)
			} else {
				end := r.Partition.HighWatermark
				if e.cfg.IsolationLevel == 1 && r.Partition.LastStableOffset >= 0 {
					end = r.Partition.LastStableOffset
				}
				l.ends[k] = end
			}
		}
		if r.Err == nil {
			l.out[s] = true
			e.back[s] = l
		}
		w.done <- r
	}
}

// keeps reports whether w, which the incremental response just answered
// left out, goes on waiting instead of being answered empty (Want.Keep):
// not on a throttled answer (the caller backs off), nor when a newer fetch
// of the partition waits already. Within what Keep last said, under the
// same KeepEpoch, it does not ask again: at idle every long poll leaves
// out every partition, and asking each caller after each poll was most of
// an idle consumer's CPU. e.mu held.
func (ln *lane) keeps(w *waiter, base Result, now time.Time, epoch uint64) bool {
	k := slotOf(w.want)
	if w.want.Keep == nil || base.Err != nil || base.Throttle != 0 || !ln.sess.incremental() ||
		ln.l.pending[k] != nil || !ln.sess.has(k.key) {
		return false
	}
	if ln.l.e.cfg.KeepEpoch != nil && w.keptEpoch == epoch && now.Before(w.keptUntil) {
		return true
	}
	until := w.want.Keep()
	if !now.Before(until) {
		return false
	}
	w.keptUntil, w.keptEpoch = until, epoch
	return true
}

func find(resp *protocol.FetchResponse, w Want) *protocol.FetchResponsePartition {
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Topic != w.Topic && (w.TopicID == [16]byte{} || t.TopicID != w.TopicID) {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].PartitionIndex == w.Partition {
				return &t.Partitions[j]
			}
		}
	}
	return nil
}

// dial connects the lane to its broker, within the shortest DialTimeout of
// batch; on failure it answers batch (DialFailed) and reports false.
func (ln *lane) dial(batch []*waiter) bool {
	e := ln.l.e
	limit := time.Duration(0)
	for _, w := range batch {
		if d := w.want.DialTimeout; d > 0 && (limit == 0 || d < limit) {
			limit = d
		}
	}
	ctx, cancel := e.ctx, context.CancelFunc(func() {})
	if limit > 0 {
		ctx, cancel = context.WithTimeout(e.ctx, limit)
	}
	c, err := e.cfg.Dial(ctx, ln.l.broker)
	cancel()
	if err != nil {
		ln.answer(batch, nil, Result{Err: err, DialFailed: true})
		return false
	}
	ln.conn = c
	e.mu.Lock()
	ln.hasConn = true
	e.mu.Unlock()
	return true
}

// closedByPeer reports whether err says the broker closed or reset the
// connection (not a timeout, not an answer).
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (ln *lane) closeConn() {
	if ln.conn == nil {
		return
	}
	ln.conn.Close()
	ln.conn = nil
	ln.l.e.mu.Lock()
	ln.hasConn = false
	ln.l.e.mu.Unlock()
}
