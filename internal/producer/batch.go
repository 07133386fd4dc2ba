package producer

import (
	"sync/atomic"
	"time"
)

// partWriter is one partition's batches; guarded by Core.mu.
type partWriter[M any] struct {
	key    TopicPartition
	open   *writeBatch[M]   // accepting messages, nil when none
	queue  []*writeBatch[M] // closed batches, oldest first
	busy   bool             // queue[0] is being sent or waits for a retry
	queued bool             // in a broker sender's ready list
	flush  bool             // open must be sent without waiting to fill up
	mark   uint64

	identGen uint64 // the producer id the sequence numbers belong to
	nextSeq  int32  // sequence number of the next batch's first record

	// hosted is the leader (and epoch) that answered a produce for the
	// partition: acks=0 produces go only to it. A leader named by the
	// metadata may not host the partition yet (a new topic) and would
	// drop an acks=0 produce, so the first produce to a new leader is
	// sent with acks=1.
	hosted leaderMark

	// unreachable: the head's last attempt got no answer from the leader,
	// and it waits to be tried again. Cleared when the head completes,
	// written or failed, so the partition is always tried again.
	unreachable bool
}

// writeBatch is a batch of messages of one partition.
type writeBatch[M any] struct {
	key      TopicPartition
	msgs     []M
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
	parent   *writeBatch[M]
	offset   int // of msgs[0] in parent.msgs
	children atomic.Int32
}

func (b *writeBatch[M]) errAt(i int) error {
	if b.errs != nil {
		return b.errs[i]
	}
	return b.err
}

// finish records the result and wakes the waiters, then the parent's.
func (b *writeBatch[M]) finish(c *Core[M], err error) {
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

// Enqueue appends msgs to the batches of their partitions, parts[i] being
// msgs[i]'s. A synchronous call marks the batches it used to be flushed,
// and gets back where each of its messages went, for Wait.
func (c *Core[M]) Enqueue(msgs []M, parts []TopicPartition, sync bool) []BatchRef[M] {
	var refs []BatchRef[M]
	if sync {
		refs = make([]BatchRef[M], len(msgs))
	}
	now := time.Now()
	// Messages without a time get now, at the millisecond precision Kafka
	// stores, so Completion reports the time that is in the log.
	stamp := time.UnixMilli(now.UnixMilli())
	maxSize, maxBytes := c.cfg.Settings.BatchSize(), c.cfg.Settings.BatchBytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	touched := c.touched[:0]
	for i := range msgs {
		pw := c.parts[parts[i]]
		if pw == nil {
			pw = &partWriter[M]{key: parts[i]}
			c.parts[parts[i]] = pw
		}
		if pw.mark != c.seq {
			pw.mark = c.seq
			touched = append(touched, pw)
		}
		b, pos := c.add(pw, &msgs[i], now, stamp, maxSize, maxBytes)
		if sync {
			refs[i] = BatchRef[M]{b, pos}
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

// add appends a copy of m, placed in pw's partition, to the open batch of
// pw, starting a new one when m would not fit; c.mu is held.
func (c *Core[M]) add(pw *partWriter[M], m *M, now, stamp time.Time, maxSize int, maxBytes int64) (*writeBatch[M], int) {
	b := c.openBatch(pw, now)
	b.msgs = append(b.msgs, *m)
	pos := len(b.msgs) - 1
	// The codec reads the batch's copy: handing it m, the caller's, would
	// move the caller's messages to the heap.
	size := c.codec.Size(&b.msgs[pos])
	if pos > 0 && b.bytes+size > maxBytes {
		// m does not fit: it starts the next batch.
		var zero M
		c.seal(pw, now)
		next := c.openBatch(pw, now)
		next.msgs = append(next.msgs, b.msgs[pos])
		b.msgs[pos] = zero
		b.msgs = b.msgs[:pos]
		b, pos = next, 0
	}
	c.codec.Place(&b.msgs[pos], pw.key, stamp)
	b.bytes += size
	if len(b.msgs) >= maxSize || b.bytes >= maxBytes {
		c.seal(pw, now)
	}
	return b, pos
}

// openBatch returns the open batch of pw, starting one when there is
// none; c.mu is held.
func (c *Core[M]) openBatch(pw *partWriter[M], now time.Time) *writeBatch[M] {
	if b := pw.open; b != nil {
		return b
	}
	b := &writeBatch[M]{key: pw.key, created: now, done: make(chan struct{})}
	c.pending.Add(1)
	if c.cfg.Settings.Async() {
		b.timer = time.AfterFunc(c.cfg.Settings.BatchTimeout(), func() { c.expire(pw, b) })
	}
	pw.open = b
	return b
}

// expire sends an asynchronous writer's batch whose BatchTimeout passed.
func (c *Core[M]) expire(pw *partWriter[M], b *writeBatch[M]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if pw.open == b {
		pw.flush = true
		c.schedule(pw)
	}
}

// seal closes the open batch to new messages and queues it; c.mu is held.
func (c *Core[M]) seal(pw *partWriter[M], now time.Time) {
	b := pw.open
	if b.timer != nil {
		b.timer.Stop()
	}
	pw.open, pw.flush = nil, false
	pw.queue = append(pw.queue, b)
	c.stats.Observe(StatBatchQueueTime, int64(now.Sub(b.created)))
}

func (c *Core[M]) sendable(pw *partWriter[M]) bool {
	return len(pw.queue) > 0 || (pw.open != nil && (pw.flush || c.closing))
}

// head returns the batch to send next for pw, closing the open batch if
// the queue is empty; c.mu is held.
func (c *Core[M]) head(pw *partWriter[M]) *writeBatch[M] {
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
func (c *Core[M]) schedule(pw *partWriter[M]) {
	if pw.busy || pw.queued || !c.sendable(pw) {
		return
	}
	leader, err := c.tc.Leader(pw.key.Topic, pw.key.Partition)
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
				c.failed(pw, b, &leaderUnreachableError{Topic: pw.key.Topic, Partition: pw.key.Partition, ID: -1, Err: err})
			}
		}()
		return
	}
	bw := c.brokers[leader.ID]
	if bw == nil {
		bw = &brokerWriter[M]{c: c, id: leader.ID, wake: make(chan struct{}, 1)}
		c.brokers[leader.ID] = bw
	}
	bw.broker = leader
	bw.handOver(pw)
}

// complete ends a batch that was sent (or could not be): Completion, then
// the next batch of the partition, then the waiters.
func (c *Core[M]) complete(pw *partWriter[M], b *writeBatch[M], err error) {
	if err != nil {
		c.holeLeft(b)
	}
	if f := c.cfg.Settings.Completion(); f != nil {
		f(b.msgs, err)
	}
	c.mu.Lock()
	if len(pw.queue) > 0 && pw.queue[0] == b {
		pw.queue[0] = nil
		pw.queue = pw.queue[1:]
	}
	if pw.unreachable {
		pw.unreachable = false
		c.unreachable--
	}
	pw.busy = false
	c.schedule(pw)
	c.mu.Unlock()
	b.finish(c, err)
}

// succeeded completes a batch the broker appended at base (-1: unknown,
// with acks=0); appendTime is the broker's time for topics using
// LogAppendTime, -1 otherwise.
func (c *Core[M]) succeeded(pw *partWriter[M], b *writeBatch[M], base, appendTime int64) {
	for i := range b.msgs {
		offset := int64(-1)
		if base >= 0 {
			offset = base + int64(i)
		}
		c.codec.Written(&b.msgs[i], offset, appendTime)
	}
	c.complete(pw, b, nil)
}
