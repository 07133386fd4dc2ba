package producer

import (
	"errors"
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
)

// ErrEncode marks batches that could not be encoded (compression): not
// worth retrying.
var ErrEncode = errors.New("kafka: encoding a record batch")

// leaderUnreachableError is an attempt that could not reach the partition's
// leader: its dial failed, or no leader is known. The Writer retries it
// without counting it against MaxAttempts, within DeliveryTimeout.
type leaderUnreachableError struct {
	Topic     string // empty when the leader is known (ID, Addr)
	Partition int
	ID        int // -1: no leader known
	Addr      string
	Err       error
}

func (e *leaderUnreachableError) Error() string {
	if e.ID < 0 {
		return fmt.Sprintf("finding the leader of %s partition %d: %v", e.Topic, e.Partition, e.Err)
	}
	return fmt.Sprintf("connecting to broker %d (%s): %v", e.ID, e.Addr, e.Err)
}

func (e *leaderUnreachableError) Unwrap() error { return e.Err }

// failed handles a failed attempt to write b: split it when the broker
// found it too large, retry it after a backoff and a metadata refresh when
// the error may go away, complete it with the error otherwise.
func (c *Core[M]) failed(pw *partWriter[M], b *writeBatch[M], err error) {
	cfg := &c.cfg
	key := pw.key
	b.attempts++
	var unreachable *leaderUnreachableError
	isUnreachable := errors.As(err, &unreachable)
	c.mu.Lock()
	pw.hosted = leaderMark{} // whatever failed, confirm the leader again
	if isUnreachable {
		c.markUnreachable(pw)
	}
	c.mu.Unlock()
	c.stats.Observe(StatErrors, 1)
	cfg.withErrorLogger(func(l Logger) {
		l.Printf("error writing %d messages to %s (partition %d, attempt %d): %s", len(b.msgs), key.Topic, key.Partition, b.attempts, err)
	})
	retriable := cfg.Errors.Retriable(err)
	if c.sequenceRefused(err) && b.ident != nil {
		c.renumber(b)
		retriable = true
	}
	if errors.Is(err, cfg.Errors.Code(codeMessageSizeTooLarge)) {
		if len(b.msgs) > 1 {
			c.split(pw, b)
			return
		}
		c.complete(pw, b, cfg.Errors.TooLarge(&b.msgs[0]))
		return
	}
	if isUnreachable {
		b.waits++
	}
	if !retriable || c.tc.Context().Err() != nil || b.attempts-b.waits >= cfg.Settings.MaxAttempts() ||
		(unreachable != nil && time.Since(b.created) >= cfg.Settings.DeliveryTimeout()) {
		c.complete(pw, b, err)
		return
	}
	c.stats.Observe(StatRetries, 1)
	var moved *leaderMovedError
	if errors.As(err, &moved) {
		b.moves++
	}
	// Leaving a frozen leader is no reason to wait longer at the next.
	delay := retry.Backoff(max(1, b.attempts-b.moves-b.settling), cfg.Settings.WriteBackoffMin(), cfg.Settings.WriteBackoffMax())
	if b.moves > 0 && b.settling < 3 && errors.Is(err, cfg.Errors.Code(codeNotLeaderForPartition)) {
		// The new leader has not applied its election yet (its metadata
		// named it a moment ago): it will within milliseconds.
		b.settling++
		delay = cfg.Settings.WriteBackoffMin()
	}
	if moved != nil {
		// The leader watch just read the metadata that names the new
		// leader: go there now.
		delay = 0
	}
	cfg.withLogger(func(l Logger) {
		l.Printf("backing off %s writing %d messages to %s (partition: %d)", delay, len(b.msgs), key.Topic, key.Partition)
	})
	since := time.Now()
	c.workers.Add(1)
	time.AfterFunc(delay, func() {
		defer c.workers.Done()
		// Leader re-discovery: the error may mean the leader moved.
		if moved == nil {
			c.watch.rediscover(key.Topic, since)
		}
		c.mu.Lock()
		pw.busy = false
		c.schedule(pw)
		c.mu.Unlock()
	})
}

// markUnreachable records that pw's leader gave no answer to its head (see
// Core.Unreachable); c.mu is held.
func (c *Core[M]) markUnreachable(pw *partWriter[M]) {
	if !pw.unreachable {
		pw.unreachable = true
		c.unreachable++
	}
}

// split replaces b, at the head of pw's queue, by its two halves.
func (c *Core[M]) split(pw *partWriter[M], b *writeBatch[M]) {
	half := len(b.msgs) / 2
	b.errs = make([]error, len(b.msgs))
	b.children.Store(2)
	mk := func(msgs []M, offset int) *writeBatch[M] {
		nb := &writeBatch[M]{key: b.key, msgs: msgs, created: b.created, sent: true, done: make(chan struct{}), parent: b, offset: offset}
		// The broker wrote none of b: the halves keep its numbers.
		if b.ident != nil {
			nb.ident, nb.seq = b.ident, addSeq(b.seq, offset)
		}
		for i := range msgs {
			nb.bytes += c.codec.Size(&msgs[i])
		}
		return nb
	}
	first, second := mk(b.msgs[:half:half], 0), mk(b.msgs[half:], half)
	c.cfg.withLogger(func(l Logger) {
		l.Printf("splitting a batch of %d messages to %s (partition: %d) the broker found too large", len(b.msgs), b.key.Topic, b.key.Partition)
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	rest := append([]*writeBatch[M]{first, second}, pw.queue[1:]...)
	pw.queue = rest
	pw.busy = false
	c.schedule(pw)
}
