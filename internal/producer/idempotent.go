package producer

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Idempotent produce (KIP-98), used by Writers with RequiredAcks RequireAll.
//
// The Writer asks a broker for a producer id and epoch, and numbers the
// records of each partition from 0: every batch carries the producer id,
// the epoch and the sequence number of its first record. A batch that is
// retried keeps its numbers, so when the first attempt was written but its
// answer lost (the leader died, the connection broke), the broker, or the
// new leader that replicated it, recognizes the sequence and answers with
// the original offsets instead of writing the batch twice. One batch per
// partition is in flight at a time, so the sequences a broker sees never
// go backwards.
//
// A batch that fails for good leaves a hole in its partition's sequence;
// the Writer then takes a new producer id, and every partition starts over
// from 0 with it. So does a batch the broker refuses for its numbers
// (OutOfOrderSequenceNumber, UnknownProducerId, InvalidProducerEpoch).
//
// Brokers that do not support InitProducerId, refuse it (authorization), or
// cannot be asked (the connection fails) leave the Writer without a
// producer id: it then produces as before, without deduplication, and says
// so to its ErrorLogger.

// producerIdent is a producer id and epoch; gen tells identities apart.
type producerIdent struct {
	id    int64
	epoch int16
	gen   uint64
}

const (
	idemUnknown = iota
	idemOn
	idemOff
)

// idempotent reports whether batches should carry producer ids; c.mu is
// held.
func (c *Core[M]) idempotent() bool {
	return c.cfg.Settings.RequiredAcks() == -1 && c.idem != idemOff
}

// refreshIdent asks for a producer id when the Writer has none or its
// current one left a hole in a sequence. It runs in a broker sender,
// outside c.mu; one sender asks at a time, and a failed request is not
// repeated before WriteBackoffMin.
func (c *Core[M]) refreshIdent() {
	c.mu.Lock()
	need := c.idempotent() && (c.ident == nil || c.identStale)
	c.mu.Unlock()
	if !need {
		return
	}
	c.identMu.Lock()
	defer c.identMu.Unlock()
	c.mu.Lock()
	need = c.idempotent() && (c.ident == nil || c.identStale) && time.Since(c.identFailed) >= c.cfg.Settings.WriteBackoffMin()
	c.mu.Unlock()
	if !need {
		return
	}
	ctx, cancel := context.WithTimeout(c.tc.Context(), c.cfg.Settings.ReadTimeout())
	resp, err := c.tc.InitProducerID(ctx)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.identGen++
		c.ident = &producerIdent{id: resp.ProducerID, epoch: resp.ProducerEpoch, gen: c.identGen}
		c.identStale = false
		c.idem = idemOn
		return
	}
	c.identFailed = time.Now()
	if c.cfg.Errors.Temporary(err) {
		return // e.g. the coordinator is loading: ask again later
	}
	c.cfg.withErrorLogger(func(l Logger) {
		l.Printf("kafka writer: producing without idempotence (retries may duplicate messages): %s", err)
	})
	if c.ident == nil {
		c.idem = idemOff
	}
}

// number gives b its producer id and sequence, unless it has them (a
// retry) or the Writer has no producer id; c.mu is held.
func (c *Core[M]) number(pw *partWriter[M], b *writeBatch[M]) {
	if b.ident != nil || c.ident == nil || !c.idempotent() {
		return
	}
	if pw.identGen != c.ident.gen {
		pw.identGen, pw.nextSeq = c.ident.gen, 0
	}
	b.ident, b.seq = c.ident, pw.nextSeq
	pw.nextSeq = addSeq(pw.nextSeq, len(b.msgs))
}

// addSeq advances a sequence number, which wraps to 0 after MaxInt32.
func addSeq(seq int32, n int) int32 {
	return int32((int64(seq) + int64(n)) % (math.MaxInt32 + 1))
}

// sequenceRefused reports errors by which the broker refused a batch's
// producer id or sequence: the batch was not written, and is numbered
// again with a new producer id.
func (c *Core[M]) sequenceRefused(err error) bool {
	code := c.cfg.Errors.Code
	return errors.Is(err, code(codeOutOfOrderSequenceNumber)) || errors.Is(err, code(codeUnknownProducerID)) ||
		errors.Is(err, code(codeInvalidProducerEpoch)) || errors.Is(err, code(codeInvalidProducerIDMapping))
}

// renumber drops b's numbers after the broker refused them, and asks for
// a new producer id.
func (c *Core[M]) renumber(b *writeBatch[M]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.ident != nil && c.ident != nil && b.ident.gen == c.ident.gen {
		c.identStale = true
	}
	b.ident = nil
}

// holeLeft records that b failed for good: if it was numbered, its
// partition's sequence has a hole, and the next batches need a new
// producer id.
func (c *Core[M]) holeLeft(b *writeBatch[M]) {
	if b.ident == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ident != nil && b.ident.gen == c.ident.gen {
		c.identStale = true
	}
}

// setProducer writes a batch's numbers into the batch builder (ident nil:
// not numbered).
func setProducer(bb *protocol.RecordBatchBuilder, ident *producerIdent, seq int32) {
	if ident == nil {
		bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = -1, -1, -1
		return
	}
	bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = ident.id, ident.epoch, seq
}
