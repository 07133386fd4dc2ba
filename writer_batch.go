package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// writerCore is the state of a Writer in use: per-partition batches, one
// sender per broker, and the cluster state shared through the Transport.
//
// A partition holds an open batch, which WriteMessages appends to, and a
// queue of closed batches. Only the head of the queue is ever sent, so the
// batches of a partition are written in order and a batch being retried
// holds back the ones behind it. A partition with something to send is
// handed to the sender of its leader, which takes every partition it was
// handed since its last request and sends their heads in one produce
// request; the open batch is closed only then, so messages keep joining it
// while the previous request is in flight.
type writerCore struct {
	w       *Writer
	tc      *transportCluster
	release func()
	stats   *writerStats

	mu      sync.Mutex
	parts   map[topicPartition]*partWriter
	brokers map[int]*brokerWriter
	closing bool
	seq     uint64        // WriteMessages calls, to mark touched partitions
	touched []*partWriter // scratch of enqueue

	// Idempotent produce (writer_idempotent.go); guarded by mu, except
	// identMu, which one sender holds while asking for a producer id.
	idem        int
	ident       *producerIdent
	identStale  bool
	identGen    uint64
	identFailed time.Time
	identMu     sync.Mutex

	// The leader watch's metadata connection (writer_leader.go).
	pollMu    sync.Mutex
	pollConns map[int]*Conn // by broker id
	polled    time.Time     // when a poll last succeeded

	pending sync.WaitGroup // batches not completed yet
	workers sync.WaitGroup // goroutines of the core
	quit    chan struct{}  // closed once pending is done, to stop senders
}

func newWriterCore(w *Writer) (*writerCore, error) {
	c := &writerCore{
		w:       w,
		stats:   w.stats(),
		parts:   map[topicPartition]*partWriter{},
		brokers: map[int]*brokerWriter{},
		quit:    make(chan struct{}),
	}
	rt := w.Transport
	if rt == nil {
		rt = DefaultTransport
	}
	if t, ok := rt.(*Transport); ok {
		if t == nil {
			return nil, errors.New("kafka.(*Writer): Transport is a nil *Transport")
		}
		c.tc = t.acquire(w.Addr)
		c.release = func() { t.release(c.tc) }
		return c, nil
	}
	if rt == nil {
		return nil, errors.New("kafka.(*Writer): no Transport (DefaultTransport is nil)")
	}
	c.tc = newTransportCluster(nil, w.Addr, rt)
	c.release = c.tc.cl.close // gives back the metadata cache
	return c, nil
}

// partWriter is one partition's batches; guarded by writerCore.mu.
type partWriter struct {
	key    topicPartition
	open   *writeBatch   // accepting messages, nil when none
	queue  []*writeBatch // closed batches, oldest first
	busy   bool          // queue[0] is being sent or waits for a retry
	queued bool          // in a broker sender's ready list
	flush  bool          // open must be sent without waiting to fill up
	mark   uint64

	identGen uint64 // the producer id the sequence numbers belong to
	nextSeq  int32  // sequence number of the next batch's first record

	// hosted is the leader (and epoch) that answered a produce for the
	// partition: acks=0 produces go only to it. A leader named by the
	// metadata may not host the partition yet (a new topic) and would
	// drop an acks=0 produce, so the first produce to a new leader is
	// sent with acks=1.
	hosted leaderMark
}

// writeBatch is a batch of messages of one partition.
type writeBatch struct {
	key      topicPartition
	msgs     []Message
	bytes    int64
	created  time.Time
	timer    *time.Timer // BatchTimeout of asynchronous writers
	attempts int         // failed attempts
	moves    int         // of which abandoned for a new leader
	waits    int         // of which could not reach the leader (not counted against MaxAttempts)
	settling int         // NotLeader answers of the new leader since
	sent     bool
	done     chan struct{}

	ident *producerIdent // nil: not numbered (yet)
	seq   int32          // sequence number of msgs[0]

	err  error   // the result of every message, unless errs is set
	errs []error // per message, for a batch that was split

	// A batch the broker refused as too large is split in two children;
	// it completes when both have.
	parent   *writeBatch
	offset   int // of msgs[0] in parent.msgs
	children atomic.Int32
}

func (b *writeBatch) errAt(i int) error {
	if b.errs != nil {
		return b.errs[i]
	}
	return b.err
}

// finish records the result and wakes the waiters, then the parent's.
func (b *writeBatch) finish(c *writerCore, err error) {
	b.err = err
	close(b.done)
	if p := b.parent; p != nil {
		for j := range b.msgs {
			p.errs[b.offset+j] = b.errAt(j)
		}
		if p.children.Add(-1) == 0 {
			p.finish(c, nil)
		}
		return
	}
	c.pending.Done()
}

// batchRef locates a message of a synchronous call in its batch.
type batchRef struct {
	b   *writeBatch
	pos int
}

// enqueue appends msgs to their partitions' batches. A synchronous call
// marks the batches it used to be flushed, and gets back where each of its
// messages went.
func (c *writerCore) enqueue(msgs []Message, parts []topicPartition, sync bool) []batchRef {
	var refs []batchRef
	if sync {
		refs = make([]batchRef, len(msgs))
	}
	now := time.Now()
	// Messages without a time get now, at the millisecond precision Kafka
	// stores, so Completion reports the time that is in the log.
	stamp := time.UnixMilli(now.UnixMilli())
	maxSize, maxBytes := c.w.batchSize(), c.w.batchBytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	touched := c.touched[:0]
	for i := range msgs {
		pw := c.parts[parts[i]]
		if pw == nil {
			pw = &partWriter{key: parts[i]}
			c.parts[parts[i]] = pw
		}
		if pw.mark != c.seq {
			pw.mark = c.seq
			touched = append(touched, pw)
		}
		m := msgs[i]
		m.Topic, m.Partition = parts[i].topic, parts[i].partition
		if m.Time.IsZero() {
			m.Time = stamp
		}
		b, pos := c.add(pw, m, messageSize(&msgs[i]), now, maxSize, maxBytes)
		if sync {
			refs[i] = batchRef{b, pos}
		}
	}
	for i, pw := range touched {
		if sync {
			pw.flush = true
		}
		c.schedule(pw)
		touched[i] = nil
	}
	c.touched = touched[:0]
	return refs
}

// add appends m to the open batch of pw, starting a new one when m would
// not fit; c.mu is held.
func (c *writerCore) add(pw *partWriter, m Message, size int64, now time.Time, maxSize int, maxBytes int64) (*writeBatch, int) {
	b := pw.open
	if b != nil && b.bytes+size > maxBytes {
		c.seal(pw, now)
		b = nil
	}
	if b == nil {
		b = &writeBatch{key: pw.key, created: now, done: make(chan struct{})}
		c.pending.Add(1)
		if c.w.Async {
			b.timer = time.AfterFunc(c.w.batchTimeout(), func() { c.expire(pw, b) })
		}
		pw.open = b
	}
	b.msgs = append(b.msgs, m)
	b.bytes += size
	pos := len(b.msgs) - 1
	if len(b.msgs) >= maxSize || b.bytes >= maxBytes {
		c.seal(pw, now)
	}
	return b, pos
}

// expire sends an asynchronous writer's batch whose BatchTimeout passed.
func (c *writerCore) expire(pw *partWriter, b *writeBatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pw.open == b {
		pw.flush = true
		c.schedule(pw)
	}
}

// seal closes the open batch to new messages and queues it; c.mu is held.
func (c *writerCore) seal(pw *partWriter, now time.Time) {
	b := pw.open
	if b.timer != nil {
		b.timer.Stop()
	}
	pw.open, pw.flush = nil, false
	pw.queue = append(pw.queue, b)
	c.stats.batchQueueTime.observe(int64(now.Sub(b.created)))
}

func (c *writerCore) sendable(pw *partWriter) bool {
	return len(pw.queue) > 0 || (pw.open != nil && (pw.flush || c.closing))
}

// head returns the batch to send next for pw, closing the open batch if
// the queue is empty; c.mu is held.
func (c *writerCore) head(pw *partWriter) *writeBatch {
	if len(pw.queue) == 0 {
		if pw.open == nil || !c.sendable(pw) {
			return nil
		}
		c.seal(pw, time.Now())
	}
	return pw.queue[0]
}

// schedule hands pw to the sender of its leader if it has something to
// send and nothing in flight; c.mu is held.
func (c *writerCore) schedule(pw *partWriter) {
	if pw.busy || pw.queued || !c.sendable(pw) {
		return
	}
	leader, err := c.tc.leader(pw.key.topic, pw.key.partition)
	if err != nil {
		// No leader known: the head fails this attempt, which refreshes
		// the metadata before the next.
		pw.busy = true
		c.workers.Add(1)
		go func() {
			defer c.workers.Done()
			c.mu.Lock()
			b := c.head(pw)
			if b == nil {
				pw.busy = false
			}
			c.mu.Unlock()
			if b != nil {
				c.failed(pw, b, &leaderUnreachableError{Topic: pw.key.topic, Partition: pw.key.partition, ID: -1, Err: err})
			}
		}()
		return
	}
	bw := c.brokers[leader.ID]
	if bw == nil {
		bw = &brokerWriter{c: c, id: leader.ID, wake: make(chan struct{}, 1), builder: protocol.NewRecordBatchBuilder()}
		c.brokers[leader.ID] = bw
		c.workers.Add(1)
		go bw.run()
	}
	bw.broker = leader
	pw.queued = true
	bw.ready = append(bw.ready, pw)
	select {
	case bw.wake <- struct{}{}:
	default:
	}
}

// complete ends a batch that was sent (or could not be): Completion, then
// the next batch of the partition, then the waiters.
func (c *writerCore) complete(pw *partWriter, b *writeBatch, err error) {
	if err != nil {
		c.holeLeft(b)
	}
	if f := c.w.Completion; f != nil {
		f(b.msgs, err)
	}
	c.mu.Lock()
	if len(pw.queue) > 0 && pw.queue[0] == b {
		pw.queue[0] = nil
		pw.queue = pw.queue[1:]
	}
	pw.busy = false
	c.schedule(pw)
	c.mu.Unlock()
	b.finish(c, err)
}

// succeeded completes a batch the broker appended at base (-1: unknown,
// with acks=0); appendTime is the broker's time for topics using
// LogAppendTime, -1 otherwise.
func (c *writerCore) succeeded(pw *partWriter, b *writeBatch, base, appendTime int64) {
	for i := range b.msgs {
		m := &b.msgs[i]
		m.Offset = -1
		if base >= 0 {
			m.Offset = base + int64(i)
		}
		if appendTime >= 0 {
			m.Time = time.UnixMilli(appendTime)
		}
	}
	c.complete(pw, b, nil)
}

// failed handles a failed attempt to write b: split it when the broker
// found it too large, retry it after a backoff and a metadata refresh when
// the error may go away, complete it with the error otherwise.
func (c *writerCore) failed(pw *partWriter, b *writeBatch, err error) {
	w := c.w
	key := pw.key
	b.attempts++
	c.mu.Lock()
	pw.hosted = leaderMark{} // whatever failed, confirm the leader again
	c.mu.Unlock()
	c.stats.errors.observe(1)
	w.withErrorLogger(func(l Logger) {
		l.Printf("error writing %d messages to %s (partition %d, attempt %d): %s", len(b.msgs), key.topic, key.partition, b.attempts, err)
	})
	retriable := retriableWriteError(err)
	if sequenceRefused(err) && b.ident != nil {
		c.renumber(b)
		retriable = true
	}
	if errors.Is(err, MessageSizeTooLarge) {
		if len(b.msgs) > 1 {
			c.split(pw, b)
			return
		}
		c.complete(pw, b, MessageTooLargeError{Message: b.msgs[0]})
		return
	}
	var unreachable *leaderUnreachableError
	if errors.As(err, &unreachable) {
		b.waits++
	}
	if !retriable || c.tc.context().Err() != nil || b.attempts-b.waits >= w.maxAttempts() ||
		(unreachable != nil && time.Since(b.created) >= w.deliveryTimeout()) {
		c.complete(pw, b, err)
		return
	}
	c.stats.retries.observe(1)
	var moved *leaderMovedError
	if errors.As(err, &moved) {
		b.moves++
	}
	// Leaving a frozen leader is no reason to wait longer at the next.
	delay := backoff(max(1, b.attempts-b.moves-b.settling), w.writeBackoffMin(), w.writeBackoffMax())
	if b.moves > 0 && b.settling < 3 && errors.Is(err, NotLeaderForPartition) {
		// The new leader has not applied its election yet (its metadata
		// named it a moment ago): it will within milliseconds.
		b.settling++
		delay = w.writeBackoffMin()
	}
	if moved != nil {
		// The leader watch just read the metadata that names the new
		// leader: go there now.
		delay = 0
	}
	w.withLogger(func(l Logger) {
		l.Printf("backing off %s writing %d messages to %s (partition: %d)", delay, len(b.msgs), key.topic, key.partition)
	})
	since := time.Now()
	c.workers.Add(1)
	time.AfterFunc(delay, func() {
		defer c.workers.Done()
		// Leader re-discovery: the error may mean the leader moved.
		if moved == nil {
			c.rediscover(key.topic, since)
		}
		c.mu.Lock()
		pw.busy = false
		c.schedule(pw)
		c.mu.Unlock()
	})
}

// split replaces b, at the head of pw's queue, by its two halves.
func (c *writerCore) split(pw *partWriter, b *writeBatch) {
	half := len(b.msgs) / 2
	b.errs = make([]error, len(b.msgs))
	b.children.Store(2)
	mk := func(msgs []Message, offset int) *writeBatch {
		nb := &writeBatch{key: b.key, msgs: msgs, created: b.created, sent: true, done: make(chan struct{}), parent: b, offset: offset}
		// The broker wrote none of b: the halves keep its numbers.
		if b.ident != nil {
			nb.ident, nb.seq = b.ident, addSeq(b.seq, offset)
		}
		for i := range msgs {
			nb.bytes += messageSize(&msgs[i])
		}
		return nb
	}
	first, second := mk(b.msgs[:half:half], 0), mk(b.msgs[half:], half)
	c.w.withLogger(func(l Logger) {
		l.Printf("splitting a batch of %d messages to %s (partition: %d) the broker found too large", len(b.msgs), b.key.topic, b.key.partition)
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	rest := append([]*writeBatch{first, second}, pw.queue[1:]...)
	pw.queue = rest
	pw.busy = false
	c.schedule(pw)
}

// close flushes every partition and waits for all batches, then stops the
// senders and gives the cluster state back.
func (c *writerCore) close() {
	c.mu.Lock()
	c.closing = true
	for _, pw := range c.parts {
		c.schedule(pw)
	}
	c.mu.Unlock()
	c.pending.Wait()
	close(c.quit)
	c.workers.Wait()
	c.closePoll()
	c.release()
}

// waitBatches waits for the batches of a synchronous call and collects the
// errors of its messages.
func waitBatches(ctx context.Context, refs []batchRef) error {
	var last *writeBatch
	for _, r := range refs {
		if r.b == last {
			continue
		}
		last = r.b
		select {
		case <-r.b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var werr WriteErrors
	for i, r := range refs {
		if err := r.b.errAt(r.pos); err != nil {
			if werr == nil {
				werr = make(WriteErrors, len(refs))
			}
			werr[i] = err
		}
	}
	if werr != nil {
		return werr
	}
	return nil
}

// errEncode marks batches that could not be encoded (compression): not
// worth retrying.
var errEncode = errors.New("kafka: encoding a record batch")

// retriableWriteError reports whether a failed produce may succeed later:
// temporary Kafka errors, and network errors (the broker may be restarting,
// or its leadership moving).
func retriableWriteError(err error) bool {
	if permanentFailure(err) {
		return false // credentials, TLS, an address that is no broker
	}
	var kerr Error
	if errors.As(err, &kerr) {
		return kerr.Temporary()
	}
	var uv *protocol.UnsupportedVersionError
	switch {
	case errors.As(err, &uv), errors.Is(err, context.Canceled), errors.Is(err, errClusterClosed), errors.Is(err, errEncode):
		return false
	}
	return true
}

// brokerWriter sends the produce requests of one Writer to one broker, one
// at a time, on a connection of its own.
type brokerWriter struct {
	c      *writerCore
	id     int
	broker Broker        // guarded by c.mu
	ready  []*partWriter // guarded by c.mu
	wake   chan struct{} // a partition was added to ready
	items  []sendItem    // scratch
	spare  []*partWriter // scratch

	conn     *Conn // owned by run
	connAddr string
	lastUsed time.Time
	builder  *protocol.RecordBatchBuilder
	buf      []byte
}

type sendItem struct {
	pw         *partWriter
	b          *writeBatch
	mark       leaderMark // the leader the request goes to
	start, end int        // of the encoded batch in buf; end 0: not sent
}

func (bw *brokerWriter) run() {
	c := bw.c
	defer c.workers.Done()
	defer func() {
		if bw.conn != nil {
			bw.conn.Close()
		}
	}()
	for {
		select {
		case <-bw.wake:
		case <-c.quit:
			return
		}
		c.refreshIdent()
		c.mu.Lock()
		take := bw.ready
		bw.ready = bw.spare[:0]
		items := bw.items[:0]
		for _, pw := range take {
			pw.queued = false
			// Leadership may have moved since pw was handed over.
			if l, err := c.tc.leader(pw.key.topic, pw.key.partition); err != nil || l.ID != bw.id {
				c.schedule(pw)
				continue
			}
			if b := c.head(pw); b != nil {
				c.number(pw, b)
				pw.busy = true
				items = append(items, sendItem{pw: pw, b: b, mark: c.leaderMark(pw.key)})
			}
		}
		broker := bw.broker
		c.mu.Unlock()
		clear(take)
		bw.spare = take[:0]
		if len(items) > 0 {
			bw.send(broker, items)
		}
		clear(items)
		bw.items = items[:0]
	}
}

// send writes the batches of items in one produce request and hands each
// partition's result over.
func (bw *brokerWriter) send(broker Broker, items []sendItem) {
	c, w := bw.c, bw.c.w
	now := time.Now()
	bw.buf = bw.buf[:0]
	for i := range items {
		it := &items[i]
		b := it.b
		if !b.sent {
			b.sent = true
			c.stats.batchTime.observe(int64(now.Sub(b.created)))
		}
		bb := bw.builder
		bb.Reset()
		bb.Compression = w.Compression
		setProducer(bb, b)
		for j := range b.msgs {
			m := &b.msgs[j]
			bb.Add(protocol.Record{Timestamp: m.Time.UnixMilli(), Key: m.Key, Value: m.Value, Headers: m.Headers})
		}
		start := len(bw.buf)
		buf, err := bb.AppendTo(bw.buf)
		if err != nil {
			c.stats.errors.observe(1)
			c.complete(it.pw, b, fmt.Errorf("%w of %d messages for %s/%d: %w", errEncode, len(b.msgs), b.key.topic, b.key.partition, err))
			continue
		}
		bw.buf = buf
		it.start, it.end = start, len(buf)
		w.withLogger(func(l Logger) {
			l.Printf("writing %d messages to %s (partition: %d)", len(b.msgs), b.key.topic, b.key.partition)
		})
	}
	acks := w.RequiredAcks
	if acks == RequireNone && bw.unconfirmed(items) {
		acks = RequireOne
	}
	req := &protocol.ProduceRequest{Acks: int16(acks), TimeoutMs: int32(w.writeTimeout() / time.Millisecond)}
	for i := range items {
		it := &items[i]
		if it.end == 0 {
			continue
		}
		var t *protocol.ProduceRequestTopic
		for k := range req.Topics {
			if req.Topics[k].Name == it.b.key.topic {
				t = &req.Topics[k]
				break
			}
		}
		if t == nil {
			req.Topics = append(req.Topics, protocol.ProduceRequestTopic{Name: it.b.key.topic})
			t = &req.Topics[len(req.Topics)-1]
		}
		t.Partitions = append(t.Partitions, protocol.ProduceRequestPartition{Index: int32(it.b.key.partition), Records: bw.buf[it.start:it.end]})
	}
	if len(req.Topics) == 0 {
		return
	}

	base, abandon := context.WithCancelCause(c.tc.context())
	ctx, cancel := context.WithTimeout(base, w.writeTimeout()+w.readTimeout())
	stopWatch := c.watchLeaders(ctx, abandon, broker, items)
	start := time.Now()
	resp, err := bw.roundTrip(ctx, broker, req)
	stopWatch()
	cancel()
	var moved *leaderMovedError
	if err != nil && errors.As(context.Cause(base), &moved) {
		err = fmt.Errorf("producing to broker %d: %w (request abandoned: %v)", broker.ID, moved, err)
	}
	abandon(nil)
	c.stats.writes.observe(1)
	c.stats.writeTime.observe(int64(time.Since(start)))
	for i := range items {
		if it := &items[i]; it.end != 0 {
			c.stats.messages.observe(int64(len(it.b.msgs)))
			c.stats.bytes.observe(it.b.bytes)
			c.stats.batchSize.observe(int64(len(it.b.msgs)))
			c.stats.batchSizeBytes.observe(it.b.bytes)
		}
	}
	if resp != nil {
		c.stats.waitTime.observe(int64(time.Duration(resp.ThrottleTimeMs) * time.Millisecond))
	}
	for i := range items {
		it := &items[i]
		if it.end == 0 {
			continue
		}
		switch {
		case err != nil:
			c.failed(it.pw, it.b, err)
		case resp == nil: // acks=0: no answer
			c.succeeded(it.pw, it.b, -1, -1)
		default:
			p := findProduceResult(resp, it.b.key)
			switch {
			case p == nil:
				c.failed(it.pw, it.b, fmt.Errorf("producing to %s on broker %d: the partition is missing from the response", it.b.key, broker.ID))
			case p.ErrorCode == int16(DuplicateSequenceNumber):
				// Written before, by an attempt whose answer was lost.
				c.succeeded(it.pw, it.b, -1, -1)
			case p.ErrorCode != 0:
				c.failed(it.pw, it.b, fmt.Errorf("producing to %s on broker %d: %w", it.b.key, broker.ID, produceError(p)))
			default:
				if req.Acks != int16(w.RequiredAcks) {
					c.mu.Lock()
					it.pw.hosted = it.mark
					c.mu.Unlock()
				}
				c.succeeded(it.pw, it.b, p.BaseOffset, p.LogAppendTimeMs)
			}
		}
	}
}

func findProduceResult(resp *protocol.ProduceResponse, key topicPartition) *protocol.ProduceResponsePartition {
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Name != key.topic {
			continue
		}
		for j := range t.Partitions {
			if int(t.Partitions[j].Index) == key.partition {
				return &t.Partitions[j]
			}
		}
	}
	return nil
}

// produceError is a partition's error with the broker's messages.
func produceError(p *protocol.ProduceResponsePartition) error {
	msg := deref(p.ErrorMessage)
	if len(p.RecordErrors) > 0 {
		var parts []string
		if msg != "" {
			parts = append(parts, msg)
		}
		for _, re := range p.RecordErrors {
			s := "record " + strconv.Itoa(int(re.BatchIndex))
			if m := deref(re.BatchIndexErrorMessage); m != "" {
				s += ": " + m
			}
			parts = append(parts, s)
		}
		msg = strings.Join(parts, "; ")
	}
	return makeError(p.ErrorCode, msg)
}

// roundTrip sends req to the broker on the sender's connection (dialed or
// redialed as needed), or through a custom RoundTripper. A nil response
// with a nil error is the answer to acks=0.
func (bw *brokerWriter) roundTrip(ctx context.Context, b Broker, req *protocol.ProduceRequest) (*protocol.ProduceResponse, error) {
	c := bw.c
	addr := net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
	var resp protocol.Response
	var err error
	if rt := c.tc.rt; rt != nil {
		resp, err = rt.RoundTrip(ctx, TCP(addr), req)
	} else {
		idle := c.tc.t.idleTimeout()
		if bw.conn != nil && (bw.conn.isBroken() || bw.connAddr != addr || time.Since(bw.lastUsed) > idle) {
			bw.conn.Close()
			bw.conn = nil
		}
		if bw.conn == nil {
			conn, err := c.tc.dialProduce(ctx, b)
			if err != nil {
				return nil, &leaderUnreachableError{ID: b.ID, Addr: addr, Err: err}
			}
			bw.conn, bw.connAddr = conn, addr
		}
		bw.lastUsed = time.Now()
		resp, err = sendRequest(ctx, bw.conn, req)
		if err == nil && req.Acks == 0 {
			err = confirmAcksNone(ctx, bw.conn)
		}
		if err != nil && bw.conn.isBroken() {
			bw.conn.Close()
			bw.conn = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("producing to broker %d (%s): %w", b.ID, addr, err)
	}
	if resp == nil {
		if req.Acks != 0 {
			return nil, fmt.Errorf("producing to broker %d (%s): no response", b.ID, addr)
		}
		return nil, nil
	}
	pr, ok := resp.(*protocol.ProduceResponse)
	if !ok {
		return nil, fmt.Errorf("producing to broker %d (%s): the RoundTripper returned %T", b.ID, addr, resp)
	}
	return pr, nil
}

// unconfirmed reports whether a partition of items goes to a leader that
// has not answered a produce for it yet; the request then asks for acks=1
// (see partWriter.hosted).
func (bw *brokerWriter) unconfirmed(items []sendItem) bool {
	c := bw.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range items {
		if it := &items[i]; it.end != 0 && it.pw.hosted != it.mark {
			return true
		}
	}
	return false
}
