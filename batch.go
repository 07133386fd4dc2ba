package kafka

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// Header is a record header.
type Header = protocol.RecordHeader

// Batch is the answer to one fetch: the records of one partition, read one
// at a time. The whole response is in memory, decoded lazily; Close hands
// its buffer back to the Conn.
type Batch struct {
	mu        sync.Mutex
	conn      *Conn
	topic     string
	partition int
	offset    int64 // next offset to hand out
	err       error

	highWaterMark        int64
	lastStableOffset     int64
	logStartOffset       int64
	preferredReadReplica int
	throttle             time.Duration

	body    []byte // the response frame, owned until Close
	records protocol.RecordReader
}

// init prepares the batch from a fetched partition.
func (b *Batch) init(p *protocol.FetchResponsePartition, isolation IsolationLevel) {
	b.highWaterMark = p.HighWatermark
	b.lastStableOffset = p.LastStableOffset
	b.logStartOffset = p.LogStartOffset
	b.preferredReadReplica = int(p.PreferredReadReplica)
	if p.ErrorCode != 0 {
		b.err = fmt.Errorf("fetching %s/%d at offset %d from broker %d: %w", b.topic, b.partition, b.offset, b.conn.broker, Error(p.ErrorCode))
		return
	}
	// Nothing past the high watermark (or, reading committed, the last
	// stable offset) is ever handed out, whatever the broker sent.
	limit := p.HighWatermark
	if isolation == ReadCommitted && p.LastStableOffset >= 0 {
		limit = p.LastStableOffset
	}
	// Read, ReadMessage and the Reader's decoder copy each record before
	// reading the next, so the decompression buffer can be reused.
	opts := protocol.RecordReadOptions{
		MinOffset:      b.offset,
		MaxOffset:      limit,
		IsolationLevel: int8(isolation),
		ReuseBuffers:   true,
	}
	if limit <= 0 {
		opts.MaxOffset = -1 // empty partition: no record may pass
		b.records.Reset(nil, opts)
		return
	}
	for _, a := range p.AbortedTransactions {
		opts.AbortedTransactions = append(opts.AbortedTransactions, protocol.AbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
	}
	b.records.Reset(p.Records, opts)
}

// Throttle gives the throttling duration applied by the kafka server on the
// connection.
func (b *Batch) Throttle() time.Duration { return b.throttle }

// HighWaterMark returns the current highest watermark in a partition.
func (b *Batch) HighWaterMark() int64 { return b.highWaterMark }

// Partition returns the batch partition.
func (b *Batch) Partition() int { return b.partition }

// PreferredReadReplica is the broker id the partition leader asks this
// client to fetch from instead (KIP-392), or -1 when it names none. Only a
// leader names one, only for fetches that carry a rack (Dialer.RackID), and
// only when its brokers have a replica selector. A batch that names one has
// no records: fetch again from that broker, with SeekDontCheck.
func (b *Batch) PreferredReadReplica() int { return b.preferredReadReplica }

// LogStartOffset is the partition's first offset as the fetched replica
// knows it (-1 when unknown).
func (b *Batch) LogStartOffset() int64 { return b.logStartOffset }

// LastStableOffset is the partition's last stable offset (-1 when unknown).
func (b *Batch) LastStableOffset() int64 { return b.lastStableOffset }

// Offset returns the offset of the next message in the batch.
func (b *Batch) Offset() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.offset
}

// Err returns a non-nil error if the batch is broken: the error Read,
// ReadMessage and Close would return (io.EOF is never returned by Close).
func (b *Batch) Err() error { return b.err }

// Close releases the batch and moves the Conn's offset past what was read.
func (b *Batch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.err
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if c := b.conn; c != nil {
		b.conn = nil
		c.setOffset(b.offset)
		c.releaseBuffer(b.body)
		b.body = nil
		b.records.Reset(nil, protocol.RecordReadOptions{})
	}
	return err
}

// next returns the next record; its bytes alias the batch's buffers and
// are valid only until the next call (RecordReadOptions.ReuseBuffers).
func (b *Batch) next() (protocol.Record, error) {
	if b.err != nil {
		return protocol.Record{}, b.err
	}
	if b.conn == nil {
		b.err = io.ErrClosedPipe
		return protocol.Record{}, b.err
	}
	rec, err := b.records.Next()
	if err != nil {
		if err == io.EOF {
			// Move past control batches, aborted and compacted records.
			if n := b.records.NextOffset(); n > b.offset {
				b.offset = n
			}
			if size, ok := b.records.NeedMoreBytes(); ok {
				err = fmt.Errorf("fetching %s/%d at offset %d: the record batch there (%d bytes) is larger than the fetch's max bytes: %w",
					b.topic, b.partition, b.offset, size, MessageSizeTooLarge)
			}
		} else {
			err = fmt.Errorf("decoding %s/%d: %w", b.topic, b.partition, err)
		}
		b.err = err
		return protocol.Record{}, err
	}
	b.offset = rec.Offset + 1
	return rec, nil
}

// Read reads the value of the next message into p. When p is too small it
// fails with io.ErrShortBuffer and the batch ends before that message.
func (b *Batch) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	offset := b.offset
	rec, err := b.next()
	if err != nil {
		return 0, err
	}
	if len(rec.Value) > len(p) {
		// As in kafka-go, the batch ends here; the Conn will read this
		// message again on its next fetch.
		b.offset, b.err = offset, io.ErrShortBuffer
		return copy(p, rec.Value), io.ErrShortBuffer
	}
	return copy(p, rec.Value), nil
}

// ReadMessage reads and returns the next message. Its key, value and headers
// are copies the caller owns.
func (b *Batch) ReadMessage() (Message, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	rec, err := b.next()
	if err != nil {
		return Message{}, err
	}
	return b.message(&rec), nil
}

// message copies rec out of the batch's buffer into one allocation.
func (b *Batch) message(rec *protocol.Record) Message {
	n := len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		n += len(h.Value)
	}
	buf := make([]byte, 0, n)
	m := Message{
		Topic:         b.topic,
		Partition:     b.partition,
		Offset:        rec.Offset,
		HighWaterMark: b.highWaterMark,
		Time:          rec.Time(),
		Key:           clip(&buf, rec.Key),
		Value:         clip(&buf, rec.Value),
	}
	if len(rec.Headers) > 0 {
		m.Headers = make([]Header, len(rec.Headers))
		for i, h := range rec.Headers {
			m.Headers[i] = Header{Key: h.Key, Value: clip(&buf, h.Value)}
		}
	}
	return m
}

// clip appends src to *buf and returns the appended part (nil for nil).
func clip(buf *[]byte, src []byte) []byte {
	if src == nil {
		return nil
	}
	start := len(*buf)
	*buf = append(*buf, src...)
	return (*buf)[start:len(*buf):len(*buf)]
}
