package producer

import (
	"context"
	"sync"
	"time"
)

// Core is the state of a Writer in use: per-partition batches, one sender
// per broker, and the cluster state shared through the Transport.
//
// A partition holds an open batch, which Enqueue appends to, and a queue
// of closed batches. Only the head of the queue is ever sent, so the
// batches of a partition are written in order and a batch being retried
// holds back the ones behind it. A partition with something to send is
// handed to the sender of its leader, which takes every partition it was
// handed since its last request and sends their heads in one produce
// request; the open batch is closed only then, so messages keep joining it
// while the previous request is in flight.
type Core[M any] struct {
	cfg   Config[M]
	tc    Cluster
	codec Codec[M]
	stats Stats

	mu      sync.Mutex
	parts   map[TopicPartition]*partWriter[M]
	brokers map[int]*brokerWriter[M]
	closing bool
	seq     uint64           // Enqueue calls, to mark touched partitions
	touched []*partWriter[M] // scratch of Enqueue
	// unreachable counts the partitions whose leader could not be
	// reached (partWriter.unreachable).
	unreachable int

	// Idempotent produce (idempotent.go); guarded by mu, except identMu,
	// which one sender holds while asking for a producer id.
	idem        int
	ident       *producerIdent
	identStale  bool
	identGen    uint64
	identFailed time.Time
	identMu     sync.Mutex

	watch leaderWatch // leader.go

	pending sync.WaitGroup // batches not completed yet
	workers sync.WaitGroup // goroutines of the core
	quit    chan struct{}  // closed once pending is done, to stop senders
}

// New returns the runtime of a Writer configured by cfg.
func New[M any](cfg Config[M]) *Core[M] {
	c := &Core[M]{
		cfg:     cfg,
		tc:      cfg.Cluster,
		codec:   cfg.Codec,
		stats:   cfg.Stats,
		parts:   map[TopicPartition]*partWriter[M]{},
		brokers: map[int]*brokerWriter[M]{},
		quit:    make(chan struct{}),
	}
	c.watch = leaderWatch{tc: cfg.Cluster, set: cfg.Settings, code: cfg.Errors.Code, workers: &c.workers}
	return c
}

// Close flushes every partition and waits for all batches, then stops the
// senders and gives the cluster state back.
func (c *Core[M]) Close() {
	c.mu.Lock()
	c.closing = true
	for _, pw := range c.parts {
		c.schedule(pw)
	}
	c.mu.Unlock()
	c.pending.Wait()
	close(c.quit)
	c.workers.Wait()
	c.watch.closePoll()
	c.tc.Release()
}

// BatchRef locates a message of a synchronous call in its batch.
type BatchRef[M any] struct {
	b   *writeBatch[M]
	pos int
}

// Wait waits for the batches of a synchronous call and returns the errors
// of its messages, in the order of refs, or nil when all were written. It
// returns ctx's error when ctx ends first.
func Wait[M any](ctx context.Context, refs []BatchRef[M]) ([]error, error) {
	var last *writeBatch[M]
	for _, r := range refs {
		if r.b == last {
			continue
		}
		last = r.b
		select {
		case <-r.b.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var errs []error
	for i, r := range refs {
		if err := r.b.errAt(r.pos); err != nil {
			if errs == nil {
				errs = make([]error, len(refs))
			}
			errs[i] = err
		}
	}
	return errs, nil
}

// Unreachable returns the partitions of topic whose last attempt got no
// answer from their leader (a dial refused, a connection broken, a request
// timed out, no leader known) and that wait to be written; nil when none.
// A writer that chooses partitions freely avoids them: their leader may be
// dead until the cluster names another. Each is tried again by the batch
// that waits, and usable once it is written.
func (c *Core[M]) Unreachable(topic string) map[int]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unreachable == 0 {
		return nil
	}
	var out map[int]bool
	for key, pw := range c.parts {
		if pw.unreachable && key.Topic == topic {
			if out == nil {
				out = map[int]bool{}
			}
			out[key.Partition] = true
		}
	}
	return out
}
