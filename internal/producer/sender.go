package producer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// brokerWriter sends the produce requests of one Writer to one broker. It
// keeps up to MaxInFlight requests in flight, each on a lane of its own (a
// goroutine and its connection), so that partitions written by separate
// calls do not take turns behind one round trip on a slow path. A partition
// still has one batch in flight at a time (partWriter.busy), so its batches
// are written in order and idempotent sequences never interleave.
//
// Lanes start when a partition is ready while every lane has a request in
// flight, and stop after the Transport's IdleTimeout without work: a
// Writer holds as many connections to a broker as it had requests
// outstanding there at once lately, five at most.
type brokerWriter[M any] struct {
	c      *Core[M]
	id     int
	broker Broker           // guarded by c.mu
	ready  []*partWriter[M] // guarded by c.mu
	lanes  int              // running lanes; guarded by c.mu
	idle   int              // lanes waiting for work; guarded by c.mu
	wake   chan struct{}    // a partition was added to ready
}

// MaxInFlight is how many produce requests a Writer keeps in flight to one
// broker, the default of Java's max.in.flight.requests.per.connection and
// franz-go's idempotent producer.
const MaxInFlight = 5

// handOver queues pw for the broker and makes sure a lane takes it; c.mu
// is held.
func (bw *brokerWriter[M]) handOver(pw *partWriter[M]) {
	c := bw.c
	pw.queued = true
	bw.ready = append(bw.ready, pw)
	if bw.idle == 0 && bw.lanes < MaxInFlight {
		bw.lanes++
		c.workers.Add(1)
		l := &lane[M]{bw: bw, builder: protocol.NewRecordBatchBuilder()}
		go l.run()
		return
	}
	select {
	case bw.wake <- struct{}{}:
	default:
	}
}

// lane is one request in flight to a broker at a time, on a connection of
// its own.
type lane[M any] struct {
	bw    *brokerWriter[M]
	items []sendItem[M]    // scratch
	spare []*partWriter[M] // scratch

	conn     Conn
	connAddr string
	lastUsed time.Time
	builder  *protocol.RecordBatchBuilder
	buf      []byte
}

type sendItem[M any] struct {
	pw         *partWriter[M]
	b          *writeBatch[M]
	mark       leaderMark // the leader the request goes to
	start, end int        // of the encoded batch in buf; end 0: not sent
}

func (l *lane[M]) run() {
	bw := l.bw
	c := bw.c
	defer c.workers.Done()
	defer func() {
		if l.conn != nil {
			l.conn.Close()
		}
	}()
	idle := time.NewTimer(c.tc.IdleTimeout())
	defer idle.Stop()
	for {
		c.mu.Lock()
		if len(bw.ready) == 0 {
			bw.idle++
			c.mu.Unlock()
			select {
			case <-bw.wake:
			case <-idle.C:
				c.mu.Lock()
				if len(bw.ready) == 0 {
					bw.idle--
					bw.lanes--
					c.mu.Unlock()
					return
				}
				c.mu.Unlock()
			case <-c.quit:
				return
			}
			c.mu.Lock()
			bw.idle--
		}
		c.mu.Unlock()
		c.refreshIdent()
		c.mu.Lock()
		take := bw.ready
		bw.ready = l.spare[:0]
		items := l.items[:0]
		for _, pw := range take {
			pw.queued = false
			// Leadership may have moved since pw was handed over.
			if ld, err := c.tc.Leader(pw.key.Topic, pw.key.Partition); err != nil || ld.ID != bw.id {
				c.schedule(pw)
				continue
			}
			if b := c.head(pw); b != nil {
				c.number(pw, b)
				pw.busy = true
				items = append(items, sendItem[M]{pw: pw, b: b, mark: c.watch.leaderMark(pw.key)})
			}
		}
		broker := bw.broker
		c.mu.Unlock()
		clear(take)
		l.spare = take[:0]
		if len(items) > 0 {
			l.send(broker, items)
		}
		clear(items)
		l.items = items[:0]
		if !idle.Stop() {
			select {
			case <-idle.C:
			default:
			}
		}
		idle.Reset(c.tc.IdleTimeout())
	}
}

// send writes the batches of items in one produce request and hands each
// partition's result over.
func (l *lane[M]) send(broker Broker, items []sendItem[M]) {
	c, cfg := l.bw.c, &l.bw.c.cfg
	now := time.Now()
	l.buf = l.buf[:0]
	for i := range items {
		it := &items[i]
		b := it.b
		if !b.sent {
			b.sent = true
			c.stats.Observe(StatBatchTime, int64(now.Sub(b.created)))
		}
		bb := l.builder
		bb.Reset()
		bb.Compression = cfg.Settings.Compression()
		setProducer(bb, b.ident, b.seq)
		for j := range b.msgs {
			bb.Add(c.codec.Record(&b.msgs[j]))
		}
		start := len(l.buf)
		buf, err := bb.AppendTo(l.buf)
		if err != nil {
			c.stats.Observe(StatErrors, 1)
			c.complete(it.pw, b, fmt.Errorf("%w of %d messages for %s/%d: %w", ErrEncode, len(b.msgs), b.key.Topic, b.key.Partition, err))
			continue
		}
		l.buf = buf
		it.start, it.end = start, len(buf)
		cfg.withLogger(func(l Logger) {
			l.Printf("writing %d messages to %s (partition: %d)", len(b.msgs), b.key.Topic, b.key.Partition)
		})
	}
	acks := cfg.Settings.RequiredAcks()
	if acks == 0 && l.unconfirmed(items) {
		acks = 1
	}
	req := &protocol.ProduceRequest{Acks: acks, TimeoutMs: int32(cfg.Settings.WriteTimeout() / time.Millisecond)}
	for i := range items {
		it := &items[i]
		if it.end == 0 {
			continue
		}
		var t *protocol.ProduceRequestTopic
		for k := range req.Topics {
			if req.Topics[k].Name == it.b.key.Topic {
				t = &req.Topics[k]
				break
			}
		}
		if t == nil {
			req.Topics = append(req.Topics, protocol.ProduceRequestTopic{Name: it.b.key.Topic})
			t = &req.Topics[len(req.Topics)-1]
		}
		t.Partitions = append(t.Partitions, protocol.ProduceRequestPartition{Index: int32(it.b.key.Partition), Records: l.buf[it.start:it.end]})
	}
	if len(req.Topics) == 0 {
		return
	}

	base, abandon := context.WithCancelCause(c.tc.Context())
	ctx, cancel := context.WithTimeout(base, cfg.Settings.WriteTimeout()+cfg.Settings.ReadTimeout())
	stopWatch := c.watchLeaders(ctx, abandon, broker, items)
	start := time.Now()
	resp, err := l.roundTrip(ctx, broker, req)
	stopWatch()
	cancel()
	var moved *leaderMovedError
	if err != nil && errors.As(context.Cause(base), &moved) {
		err = fmt.Errorf("producing to broker %d: %w (request abandoned: %v)", broker.ID, moved, err)
	}
	abandon(nil)
	c.stats.Observe(StatWrites, 1)
	c.stats.Observe(StatWriteTime, int64(time.Since(start)))
	for i := range items {
		if it := &items[i]; it.end != 0 {
			c.stats.Observe(StatMessages, int64(len(it.b.msgs)))
			c.stats.Observe(StatBytes, it.b.bytes)
			c.stats.Observe(StatBatchSize, int64(len(it.b.msgs)))
			c.stats.Observe(StatBatchBytes, it.b.bytes)
		}
	}
	if resp != nil {
		c.stats.Observe(StatWaitTime, int64(time.Duration(resp.ThrottleTimeMs)*time.Millisecond))
	}
	for i := range items {
		it := &items[i]
		if it.end == 0 {
			continue
		}
		switch {
		case err != nil:
			// No answer (the connection broke, the request timed out):
			// the leader may be dead, though the metadata names it.
			c.mu.Lock()
			c.markUnreachable(it.pw)
			c.mu.Unlock()
			c.failed(it.pw, it.b, err)
		case resp == nil: // acks=0: no answer
			c.stats.ObserveLeaderRack(broker.Rack, int64(it.end-it.start))
			c.succeeded(it.pw, it.b, -1, -1)
		default:
			p := findProduceResult(resp, it.b.key)
			switch {
			case p == nil:
				c.failed(it.pw, it.b, fmt.Errorf("producing to %s on broker %d: the partition is missing from the response", it.b.key, broker.ID))
			case p.ErrorCode == codeDuplicateSequenceNumber:
				// Written before, by an attempt whose answer was lost
				// (and not counted then).
				c.stats.ObserveLeaderRack(broker.Rack, int64(it.end-it.start))
				c.succeeded(it.pw, it.b, -1, -1)
			case p.ErrorCode != 0:
				c.failed(it.pw, it.b, fmt.Errorf("producing to %s on broker %d: %w", it.b.key, broker.ID, c.produceError(p)))
			default:
				if req.Acks != cfg.Settings.RequiredAcks() {
					c.mu.Lock()
					it.pw.hosted = it.mark
					c.mu.Unlock()
				}
				c.stats.ObserveLeaderRack(broker.Rack, int64(it.end-it.start))
				c.succeeded(it.pw, it.b, p.BaseOffset, p.LogAppendTimeMs)
			}
		}
	}
}

func findProduceResult(resp *protocol.ProduceResponse, key TopicPartition) *protocol.ProduceResponsePartition {
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Name != key.Topic {
			continue
		}
		for j := range t.Partitions {
			if int(t.Partitions[j].Index) == key.Partition {
				return &t.Partitions[j]
			}
		}
	}
	return nil
}

// produceError is a partition's error with the broker's messages.
func (c *Core[M]) produceError(p *protocol.ProduceResponsePartition) error {
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
	return c.cfg.Errors.Produce(p.ErrorCode, msg)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// roundTrip sends req to the broker on the sender's connection (dialed or
// redialed as needed), or through a custom RoundTripper. A nil response
// with a nil error is the answer to acks=0.
func (l *lane[M]) roundTrip(ctx context.Context, b Broker, req *protocol.ProduceRequest) (*protocol.ProduceResponse, error) {
	c := l.bw.c
	addr := net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
	var resp protocol.Response
	var err error
	if !c.tc.Dials() {
		resp, err = c.tc.RoundTrip(ctx, b, req)
	} else {
		idle := c.tc.IdleTimeout()
		if l.conn != nil && (l.conn.Broken() || l.connAddr != addr || time.Since(l.lastUsed) > idle) {
			l.conn.Close()
			l.conn = nil
		}
		if l.conn == nil {
			conn, err := c.tc.Dial(ctx, b)
			if err != nil {
				return nil, &leaderUnreachableError{ID: b.ID, Addr: addr, Err: err}
			}
			l.conn, l.connAddr = conn, addr
		}
		l.lastUsed = time.Now()
		resp, err = l.conn.Produce(ctx, req)
		if err == nil && req.Acks == 0 {
			err = confirmAcksNone(ctx, l.conn)
		}
		if err != nil && l.conn.Broken() {
			l.conn.Close()
			l.conn = nil
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
func (l *lane[M]) unconfirmed(items []sendItem[M]) bool {
	c := l.bw.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range items {
		if it := &items[i]; it.end != 0 && it.pw.hosted != it.mark {
			return true
		}
	}
	return false
}
