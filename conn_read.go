package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// The Conn's read side: reading messages and batches from its partition
// (Fetch), and the position reads start at (Seek, ListOffsets).

// ReadBatchConfig is a configuration object used for reading batches of messages.
type ReadBatchConfig struct {
	// MinBytes is the least the broker should gather before answering,
	// unless MaxWait passes first.
	MinBytes int

	// MaxBytes bounds the response. A record batch larger than MaxBytes is
	// still returned whole when it is the first one (the broker guarantees
	// progress), so this is a soft limit.
	MaxBytes int

	// IsolationLevel controls the visibility of transactional records.
	// ReadUncommitted makes all records visible. With ReadCommitted only
	// non-transactional and committed records are visible.
	IsolationLevel IsolationLevel

	// MaxWait is how long the broker may wait for MinBytes. When zero it is
	// inferred from the connection's read deadline, as kafka-go does.
	MaxWait time.Duration
}

// IsolationLevel selects which transactional records a fetch sees.
type IsolationLevel int8

const (
	ReadUncommitted IsolationLevel = 0
	ReadCommitted   IsolationLevel = 1
)

// defaultRTT is kept off the read deadline when inferring MaxWait, so the
// broker answers before the deadline cuts the connection.
const defaultRTT = 1 * time.Second

// Read reads the value of the message at the current offset into b and
// advances the offset, as kafka-go does. A value longer than b gives
// io.ErrShortBuffer and leaves the offset on that message. When the broker
// has no message before the deadline, Read returns 0 and no error.
func (c *Conn) Read(b []byte) (int, error) {
	batch := c.ReadBatch(1, len(b))
	n, err := batch.Read(b)
	return n, firstError(endOfBatchIsNil(err), batch.Close())
}

// ReadMessage reads the message at the current offset and advances the
// offset. Unlike Read it never fails with io.ErrShortBuffer: maxBytes only
// bounds the fetch. With no message before the deadline it returns an empty
// Message and no error, as kafka-go does.
func (c *Conn) ReadMessage(maxBytes int) (Message, error) {
	batch := c.ReadBatch(1, maxBytes)
	m, err := batch.ReadMessage()
	return m, firstError(endOfBatchIsNil(err), batch.Close())
}

// endOfBatchIsNil maps the end of a batch to no error: for a one-message
// read, an empty batch is not a failure.
func endOfBatchIsNil(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadBatch reads a batch of messages from the kafka server. The method always
// returns a non-nil Batch value; an error is reported by the Batch.
func (c *Conn) ReadBatch(minBytes, maxBytes int) *Batch {
	return c.ReadBatchWith(ReadBatchConfig{MinBytes: minBytes, MaxBytes: maxBytes})
}

// ReadBatchWith is ReadBatch with every fetch setting.
//
// With Dialer.RackID set, the fetch carries the client's rack (Fetch v11+).
// A leader whose broker has a replica selector may then answer with no
// records and name an in-sync replica in the client's rack: see
// Batch.PreferredReadReplica. Any replica serves a v11+ fetch, so reading
// from a follower is a Conn to that broker, positioned with SeekDontCheck
// (followers refuse the ListOffsets a checked seek would send).
func (c *Conn) ReadBatchWith(cfg ReadBatchConfig) *Batch {
	if cfg.MinBytes < 0 || cfg.MaxBytes < 0 || cfg.MinBytes > math.MaxInt32 || cfg.MaxBytes > math.MaxInt32 {
		return &Batch{err: fmt.Errorf("kafka.(*Conn).ReadBatch: minBytes %d and maxBytes %d must be within [0, %d]", cfg.MinBytes, cfg.MaxBytes, math.MaxInt32)}
	}
	if cfg.MinBytes > cfg.MaxBytes {
		return &Batch{err: fmt.Errorf("kafka.(*Conn).ReadBatch: minBytes (%d) > maxBytes (%d)", cfg.MinBytes, cfg.MaxBytes)}
	}
	offset, whence := c.Offset()
	if whence != SeekAbsolute {
		// FirstOffset/LastOffset are resolved at the broker (ListOffsets):
		// only valid on the leader.
		var err error
		if offset, err = c.Seek(offset, whence); err != nil {
			return &Batch{err: err}
		}
	}
	maxWait := cfg.MaxWait
	if maxWait <= 0 {
		maxWait = c.inferMaxWait()
	}
	return c.fetch(context.Background(), offset, cfg, maxWait, c.rackID)
}

// inferMaxWait turns the read deadline into a broker wait that ends one RTT
// before it, as kafka-go does; without a deadline the broker may wait as
// long as the protocol allows.
func (c *Conn) inferMaxWait() time.Duration {
	d := c.rdeadline.get()
	if d.IsZero() {
		return math.MaxInt32 * time.Millisecond
	}
	w := time.Until(d)
	if w > 2*defaultRTT {
		w -= defaultRTT
	} else {
		w /= 2
	}
	if w < 0 {
		w = 0
	}
	return w
}

// fetch sends one Fetch for the Conn's partition at offset, carrying rack
// (Fetch v11+; empty: none).
func (c *Conn) fetch(ctx context.Context, offset int64, cfg ReadBatchConfig, maxWait time.Duration, rack string) *Batch {
	b := &Batch{conn: c, topic: c.topic, partition: int(c.partition), offset: offset, preferredReadReplica: -1}
	vs, err := c.apiVersions()
	if err != nil {
		b.err = err
		return b
	}
	req := &protocol.FetchRequest{
		ReplicaID:      -1,
		ReplicaEpoch:   -1,
		MaxWaitMs:      protocol.Millis(maxWait),
		MinBytes:       int32(cfg.MinBytes),
		MaxBytes:       int32(cfg.MaxBytes),
		IsolationLevel: int8(cfg.IsolationLevel),
		SessionEpoch:   -1, // no fetch session: every fetch is a full one
		RackID:         rack,
		Topics: []protocol.FetchRequestTopic{{
			Topic: c.topic,
			Partitions: []protocol.FetchRequestPartition{{
				Partition:          c.partition,
				CurrentLeaderEpoch: c.leaderEpoch.Load(),
				FetchOffset:        offset,
				LastFetchedEpoch:   -1,
				LogStartOffset:     -1,
				PartitionMaxBytes:  int32(cfg.MaxBytes),
			}},
		}},
	}
	v, err := vs.Pick(req, c.fetchVersionLimit)
	if err != nil {
		b.err = err
		return b
	}
	if v >= 13 {
		id, err := c.topicID(ctx)
		if err != nil {
			b.err = err
			return b
		}
		if id == ([16]byte{}) {
			v = 12 // no topic id known (old metadata): name the topic instead
		}
		req.Topics[0].TopicID = id
	}
	resp := req.NewResponse().(*protocol.FetchResponse)
	body, err := c.exchangeRetain(ctx, req, resp, v)
	if err != nil {
		b.err = fmt.Errorf("fetching %s/%d at offset %d from broker %d: %w", c.topic, c.partition, offset, c.broker, err)
		return b
	}
	b.body = body
	b.throttle = time.Duration(resp.ThrottleTimeMs) * time.Millisecond
	if resp.ErrorCode != 0 {
		b.err = fmt.Errorf("fetching %s/%d from broker %d: %w", c.topic, c.partition, c.broker, Error(resp.ErrorCode))
		return b
	}
	p := findFetchPartition(resp, c.topic, req.Topics[0].TopicID, c.partition)
	if p == nil {
		b.err = fmt.Errorf("fetching %s/%d from broker %d: partition missing from the response", c.topic, c.partition, c.broker)
		return b
	}
	b.init(p, cfg.IsolationLevel)
	return b
}

func findFetchPartition(resp *protocol.FetchResponse, topic string, id [16]byte, partition int32) *protocol.FetchResponsePartition {
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.Topic != topic && (id == [16]byte{} || t.TopicID != id) {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].PartitionIndex == partition {
				return &t.Partitions[j]
			}
		}
	}
	return nil
}

// topicID returns the Conn topic's id (for Fetch v13+), asking metadata once.
func (c *Conn) topicID(ctx context.Context) ([16]byte, error) {
	if id, ok := c.topicIDs.Load(c.topic); ok {
		return id.([16]byte), nil
	}
	md, err := c.metadata(ctx, []string{c.topic})
	if err != nil {
		return [16]byte{}, err
	}
	for _, t := range md.Topics {
		if t.Name == c.topic {
			if t.ErrorCode != 0 {
				return [16]byte{}, fmt.Errorf("looking up the id of topic %q: %w", c.topic, Error(t.ErrorCode))
			}
			c.topicIDs.Store(c.topic, t.TopicID)
			return t.TopicID, nil
		}
	}
	return [16]byte{}, fmt.Errorf("looking up the id of topic %q: %w", c.topic, UnknownTopicOrPartition)
}

const (
	SeekStart    = 0 // Seek relative to the first offset available in the partition.
	SeekAbsolute = 1 // Seek to an absolute offset.
	SeekEnd      = 2 // Seek relative to the last offset available in the partition.
	SeekCurrent  = 3 // Seek relative to the current offset.

	// SeekDontCheck may be combined with SeekAbsolute or SeekCurrent to skip
	// the bounds check, which needs a ListOffsets request. Followers refuse
	// ListOffsets, so a Conn to a follower must seek with this flag.
	SeekDontCheck = 1 << 30
)

// Offset returns the current offset of the connection and how to read it:
// SeekStart and SeekEnd for the FirstOffset and LastOffset markers,
// SeekAbsolute otherwise.
func (c *Conn) Offset() (offset int64, whence int) {
	c.offsetMu.Lock()
	offset = c.offset
	c.offsetMu.Unlock()
	switch offset {
	case FirstOffset:
		return 0, SeekStart
	case LastOffset:
		return 0, SeekEnd
	default:
		return offset, SeekAbsolute
	}
}

func (c *Conn) setOffset(offset int64) {
	c.offsetMu.Lock()
	c.offset = offset
	c.offsetMu.Unlock()
}

// Seek sets the offset of the next read. Without SeekDontCheck the result
// is checked against the partition's first and last offsets (ListOffsets,
// which only the leader answers). It returns the new absolute offset.
func (c *Conn) Seek(offset int64, whence int) (int64, error) {
	dontCheck := whence&SeekDontCheck != 0
	whence &^= SeekDontCheck
	switch whence {
	case SeekStart, SeekAbsolute, SeekEnd, SeekCurrent:
	default:
		return 0, fmt.Errorf("whence must be one of 0, 1, 2, or 3. (whence = %d)", whence)
	}
	if dontCheck {
		switch whence {
		case SeekAbsolute:
			c.setOffset(offset)
			return offset, nil
		case SeekCurrent:
			c.offsetMu.Lock()
			c.offset += offset
			offset = c.offset
			c.offsetMu.Unlock()
			return offset, nil
		}
	}
	if whence == SeekAbsolute {
		c.offsetMu.Lock()
		unchanged := offset == c.offset
		c.offsetMu.Unlock()
		if unchanged {
			return offset, nil
		}
	}
	if whence == SeekCurrent {
		c.offsetMu.Lock()
		offset += c.offset
		c.offsetMu.Unlock()
	}
	first, last, err := c.ReadOffsets()
	if err != nil {
		return 0, err
	}
	switch whence {
	case SeekStart:
		offset = first + offset
	case SeekEnd:
		offset = last - offset
	}
	if offset < first || offset > last {
		return 0, fmt.Errorf("seeking %s/%d to %d outside [%d, %d]: %w", c.topic, c.partition, offset, first, last, OffsetOutOfRange)
	}
	c.setOffset(offset)
	return offset, nil
}

// ReadOffset returns the offset of the first message with a timestamp equal
// or greater to t.
func (c *Conn) ReadOffset(t time.Time) (int64, error) {
	return c.readOffset(context.Background(), t.UnixMilli())
}

// ReadFirstOffset returns the first offset available on the connection.
func (c *Conn) ReadFirstOffset() (int64, error) {
	return c.readOffset(context.Background(), FirstOffset)
}

// ReadLastOffset returns the last offset available on the connection.
func (c *Conn) ReadLastOffset() (int64, error) {
	return c.readOffset(context.Background(), LastOffset)
}

// ReadOffsets returns the first and last offsets of the partition.
func (c *Conn) ReadOffsets() (first, last int64, err error) {
	if first, err = c.ReadFirstOffset(); err != nil {
		return 0, 0, err
	}
	if last, err = c.ReadLastOffset(); err != nil {
		return 0, 0, err
	}
	return first, last, nil
}

// readOffset sends ListOffsets for the Conn's partition. timestamp is a
// time in milliseconds, or FirstOffset (-2) / LastOffset (-1). Only the
// leader answers: a follower returns NotLeaderForPartition.
func (c *Conn) readOffset(ctx context.Context, timestamp int64) (int64, error) {
	req := &protocol.ListOffsetsRequest{
		ReplicaID: -1,
		Topics: []protocol.ListOffsetsRequestTopic{{
			Name: c.topic,
			Partitions: []protocol.ListOffsetsRequestPartition{{
				PartitionIndex:     c.partition,
				CurrentLeaderEpoch: c.leaderEpoch.Load(),
				Timestamp:          timestamp,
			}},
		}},
	}
	resp, _, err := c.roundTrip(ctx, req, -1)
	if err != nil {
		return 0, fmt.Errorf("listing offsets of %s/%d: %w", c.topic, c.partition, err)
	}
	for _, t := range resp.(*protocol.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			if p.PartitionIndex != c.partition || t.Name != c.topic {
				continue
			}
			if p.ErrorCode != 0 {
				return 0, fmt.Errorf("listing offsets of %s/%d on broker %d: %w", c.topic, c.partition, c.broker, Error(p.ErrorCode))
			}
			return p.Offset, nil
		}
	}
	return 0, fmt.Errorf("listing offsets of %s/%d: partition missing from the response", c.topic, c.partition)
}
