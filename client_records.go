package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/rackfetch/kafka-go/protocol"
)

// The Client's record calls, each to a partition's leader: Produce and
// RawProduce append records, Fetch reads them.

// ProduceRequest is a request to append records to one partition.
type ProduceRequest struct {
	// Addr is the cluster's address; nil uses the Client's. The request
	// goes to the partition's leader.
	Addr net.Addr

	// Topic and Partition receive the records.
	Topic     string
	Partition int

	// RequiredAcks is how many replicas must have the records before the
	// broker answers. With RequireNone the broker does not answer at all.
	RequiredAcks RequiredAcks

	// MessageVersion is kept for kafka-go compatibility. Records are always
	// sent as v2 record batches (every broker this package speaks to
	// takes them), so it has no effect.
	MessageVersion int

	// TransactionalID names the transaction the records belong to, when
	// producing inside one.
	TransactionalID string

	// Records are the records to append, read to the end (their keys and
	// values are closed once read).
	Records RecordReader

	// Compression compresses the batch sent.
	Compression Compression
}

// ProduceResponse is a broker's answer to a produce request.
type ProduceResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the partition's error code from the broker (with its
	// message when it sent one), nil on success; errors.Is matches it
	// against kafka.Error values.
	Error error

	// BaseOffset is the offset of the first record written.
	BaseOffset int64

	// LogAppendTime is when the broker appended the records, for topics
	// that use log append time; zero otherwise.
	LogAppendTime time.Time

	// LogStartOffset is the partition's first offset (Produce v5+).
	LogStartOffset int64

	// RecordErrors names, by their index in the batch, the records that
	// made the broker refuse the batch (Produce v8+).
	RecordErrors map[int]error
}

// RawProduceRequest is a ProduceRequest whose records are already encoded.
type RawProduceRequest struct {
	// Addr is the cluster's address; nil uses the Client's. The request
	// goes to the partition's leader.
	Addr net.Addr

	// Topic and Partition receive the records.
	Topic     string
	Partition int

	// RequiredAcks is how many replicas must have the records before the
	// broker answers. With RequireNone the broker does not answer at all.
	RequiredAcks RequiredAcks

	// MessageVersion is kept for kafka-go compatibility; it has no effect.
	MessageVersion int

	// TransactionalID names the transaction the records belong to, when
	// producing inside one.
	TransactionalID string

	// RawRecords are the encoded record batches, sent as they are (see
	// protocol.RawRecordSet for the format).
	RawRecords protocol.RawRecordSet
}

// Produce appends req.Records to a partition, at its leader.
//
// A request without records sends nothing and returns an empty response.
// With RequiredAcks set to RequireNone the broker does not answer: both
// the response and the error are nil once the request is sent. Errors the
// broker reports for the partition are in the response's Error and
// RecordErrors; the method's error means the request could not be made
// (no such topic or partition, no leader, a network failure, records that
// could not be read or encoded).
func (c *Client) Produce(ctx context.Context, req *ProduceRequest) (*ProduceResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).Produce: nil request")
	}
	if req.Compression < 0 || req.Compression > compress.Zstd {
		return nil, fmt.Errorf("kafka.(*Client).Produce: unknown compression %d", req.Compression)
	}
	records, err := clientProduceEncode(req.Records, req.Compression)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).Produce: encoding the records for %s/%d: %w", req.Topic, req.Partition, err)
	}
	if records == nil {
		return new(ProduceResponse), nil
	}
	return c.clientProduceSend(ctx, "Produce", req.Addr, req.Topic, req.Partition, req.RequiredAcks, req.TransactionalID, records)
}

// RawProduce is Produce with records already encoded: req.RawRecords is
// sent as it is. A nil or empty record set sends nothing and returns an
// empty response.
func (c *Client) RawProduce(ctx context.Context, req *RawProduceRequest) (*ProduceResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).RawProduce: nil request")
	}
	if req.RawRecords.Reader == nil {
		return new(ProduceResponse), nil
	}
	raw, err := io.ReadAll(req.RawRecords.Reader)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).RawProduce: reading the records for %s/%d: %w", req.Topic, req.Partition, err)
	}
	records, err := clientProduceRaw(raw)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).RawProduce: the records for %s/%d: %w", req.Topic, req.Partition, err)
	}
	if records == nil {
		return new(ProduceResponse), nil
	}
	return c.clientProduceSend(ctx, "RawProduce", req.Addr, req.Topic, req.Partition, req.RequiredAcks, req.TransactionalID, records)
}

// clientProduceSend sends one batch to the leader of topic/partition.
func (c *Client) clientProduceSend(ctx context.Context, method string, addr net.Addr, topic string, partition int, acks RequiredAcks, txID string, records []byte) (*ProduceResponse, error) {
	fail := func(err error) (*ProduceResponse, error) {
		return nil, fmt.Errorf("kafka.(*Client).%s: producing to %s/%d: %w", method, topic, partition, err)
	}
	addr, err := c.address(addr)
	if err != nil {
		return fail(err)
	}
	// The broker's own time limit: half the Client's timeout, as kafka-go.
	timeoutMs := protocol.Millis(c.clientBrokerTimeout(ctx, defaultProduceTimeout))
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	leader, _, err := c.clientProduceLeader(ctx, addr, topic, partition)
	if err != nil {
		return fail(err)
	}
	preq := &protocol.ProduceRequest{
		Acks:      int16(acks),
		TimeoutMs: timeoutMs,
		Topics: []protocol.ProduceRequestTopic{{
			Name:       topic,
			Partitions: []protocol.ProduceRequestPartition{{Index: int32(partition), Records: records}},
		}},
	}
	preq.TransactionalID = clientGroupsNullable(txID)
	if acks == RequireNone {
		// No response comes: the transport returns once the request is sent.
		rt := c.transport()
		if rt == nil {
			return fail(errors.New("no Transport (DefaultTransport is nil)"))
		}
		if _, err := rt.RoundTrip(ctx, brokerAddr(leader), preq); err != nil {
			return fail(err)
		}
		return nil, nil
	}
	r, err := responseAs[*protocol.ProduceResponse](c.roundTrip(ctx, brokerAddr(leader), preq))
	if err != nil {
		return fail(err)
	}
	p := clientProducePartition(r, topic, int32(partition))
	if p == nil {
		return fail(fmt.Errorf("broker %d answered without the partition", leader.ID))
	}
	ret := &ProduceResponse{
		Throttle:       clientThrottle(r.ThrottleTimeMs),
		Error:          makeError(p.ErrorCode, deref(p.ErrorMessage)),
		BaseOffset:     p.BaseOffset,
		LogAppendTime:  clientTime(p.LogAppendTimeMs),
		LogStartOffset: p.LogStartOffset,
	}
	if len(p.RecordErrors) > 0 {
		ret.RecordErrors = make(map[int]error, len(p.RecordErrors))
		for _, re := range p.RecordErrors {
			var err error
			switch {
			case deref(re.BatchIndexErrorMessage) != "":
				err = errors.New(deref(re.BatchIndexErrorMessage))
			case ret.Error != nil:
				err = ret.Error
			default:
				err = errors.New("the broker refused the record")
			}
			ret.RecordErrors[int(re.BatchIndex)] = err
		}
	}
	return ret, nil
}

func clientProducePartition(r *protocol.ProduceResponse, topic string, partition int32) *protocol.ProduceResponsePartition {
	for i := range r.Topics {
		t := &r.Topics[i]
		if t.Name != topic {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].Index == partition {
				return &t.Partitions[j]
			}
		}
	}
	return nil
}

// clientProduceLeader looks up the leader of topic/partition and the
// topic's id (zero when the metadata has none).
func (c *Client) clientProduceLeader(ctx context.Context, addr net.Addr, topic string, partition int) (Broker, [16]byte, error) {
	if topic == "" {
		return Broker{}, [16]byte{}, errors.New("no topic")
	}
	cl, err := c.metadata(ctx, addr, []string{topic})
	if err != nil {
		return Broker{}, [16]byte{}, err
	}
	for i := range cl.metadata.Topics {
		t := &cl.metadata.Topics[i]
		if t.Name != topic {
			continue
		}
		if t.ErrorCode != 0 {
			return Broker{}, t.TopicID, fmt.Errorf("looking up topic %q: %w", topic, makeError(t.ErrorCode, ""))
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if int(p.PartitionIndex) != partition {
				continue
			}
			if p.LeaderID < 0 {
				code := p.ErrorCode
				if code == 0 {
					code = int16(LeaderNotAvailable)
				}
				return Broker{}, t.TopicID, fmt.Errorf("partition %d of %q has no leader: %w", partition, topic, makeError(code, ""))
			}
			b, err := partitionLeader(Partition{Topic: topic, ID: partition, Leader: Broker{ID: int(p.LeaderID)}},
				func(id int) (Broker, bool) { b, ok := cl.brokers[int32(id)]; return b, ok })
			return b, t.TopicID, err
		}
		return Broker{}, t.TopicID, fmt.Errorf("topic %q has no partition %d (it has %d): %w", topic, partition, len(t.Partitions), UnknownTopicOrPartition)
	}
	return Broker{}, [16]byte{}, fmt.Errorf("topic %q is not in the cluster's metadata: %w", topic, UnknownTopicOrPartition)
}

// clientProduceEncode reads every record of rr into one record batch (nil
// when there is none), closing each key and value once read.
func clientProduceEncode(rr RecordReader, codec Compression) ([]byte, error) {
	if rr == nil {
		return nil, nil
	}
	b := protocol.NewRecordBatchBuilder()
	b.Compression = codec
	now := time.Now().UnixMilli()
	var keyBuf, valueBuf []byte
	for {
		r, err := rr.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading record %d: %w", b.Len(), err)
		}
		if r == nil {
			return nil, fmt.Errorf("reading record %d: the RecordReader returned a nil record", b.Len())
		}
		rec := protocol.Record{Timestamp: now, Headers: r.Headers}
		if !r.Time.IsZero() {
			rec.Timestamp = r.Time.UnixMilli()
		}
		rec.Key, keyBuf, err = clientProduceBytes(r.Key, keyBuf)
		if err == nil {
			rec.Value, valueBuf, err = clientProduceBytes(r.Value, valueBuf)
		}
		if r.Key != nil {
			r.Key.Close()
		}
		if r.Value != nil {
			r.Value.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("reading record %d: %w", b.Len(), err)
		}
		b.Add(rec) // copies key, value and headers
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return b.AppendTo(nil)
}

// clientProduceBytes returns what is left of v (nil for null), reading it
// into buf unless v is this package's own Bytes, whose slice is used as it
// is. It also returns buf, to be reused for the next record.
func clientProduceBytes(v Bytes, buf []byte) (data, kept []byte, err error) {
	if v == nil {
		return nil, buf, nil
	}
	if rb, ok := v.(*recordBytes); ok {
		data = rb.rest()
		rb.off = len(rb.b)
		return data, buf, nil
	}
	n := v.Len()
	if n < 0 {
		return nil, buf, fmt.Errorf("Bytes.Len returned %d", n)
	}
	if cap(buf) < n || buf == nil {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(v, buf); err != nil {
		return nil, buf, fmt.Errorf("reading %d bytes: %w", n, err)
	}
	return buf, buf, nil
}

// clientProduceRaw checks a raw record set and returns its record batches
// (nil for none): an int32 size then that many bytes, or the batches
// alone.
func clientProduceRaw(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) >= 4 {
		switch n := int32(binary.BigEndian.Uint32(b)); {
		case n == -1 && len(b) == 4, n == 0 && len(b) == 4:
			return nil, nil
		case n > 0 && int64(n) == int64(len(b)-4):
			b = b[4:]
		}
	}
	if _, err := protocol.ParseRecordBatchHeader(b); err != nil {
		return nil, fmt.Errorf("%d bytes that are neither a size and record batches nor record batches: %w", len(b), err)
	}
	return b, nil
}

// FetchRequest is a request to read records from one partition.
type FetchRequest struct {
	// Addr is the cluster's address; nil uses the Client's. The request
	// goes to the partition's leader.
	Addr net.Addr

	// Topic, Partition and Offset say where to read. Offset may be
	// FirstOffset or LastOffset, which Fetch first turns into the
	// partition's first offset or its high watermark.
	Topic     string
	Partition int
	Offset    int64

	// MinBytes is how much the broker waits for (up to MaxWait) before
	// answering; MaxBytes bounds the answer, except that the first batch
	// is returned whole even when larger. MaxWait defaults to 500ms, and
	// to half the Client's Timeout when that is shorter.
	MinBytes int64
	MaxBytes int64
	MaxWait  time.Duration

	// IsolationLevel selects which transactional records are returned;
	// ReadCommitted leaves out open and aborted transactions.
	IsolationLevel IsolationLevel
}

// FetchResponse is a broker's answer to a fetch request.
type FetchResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topic and Partition are the request's.
	Topic     string
	Partition int

	// HighWatermark is the offset after the last committed record;
	// LastStableOffset the offset after the last record of a decided
	// transaction (Fetch v4+); LogStartOffset the partition's first
	// offset (Fetch v5+).
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64

	// Error is the error code the broker gave the fetch (for example
	// OffsetOutOfRange), nil on success; errors.Is matches it against
	// kafka.Error values.
	Error error

	// Records are the records fetched, from the requested offset on
	// (records of the same batches before that offset, control records
	// and, with ReadCommitted, aborted records are left out). Never nil.
	// A record set that fails to decode makes ReadRecord return the error.
	Records RecordReader
}

// Fetch reads records from a partition, at its leader.
//
// Errors the broker reports for the partition are in the response's Error;
// the method's error means the request could not be made (no such topic or
// partition, no leader, a network failure, a response that could not be
// decoded or without the partition).
func (c *Client) Fetch(ctx context.Context, req *FetchRequest) (*FetchResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).Fetch: nil request")
	}
	fail := func(err error) (*FetchResponse, error) {
		return nil, fmt.Errorf("kafka.(*Client).Fetch: fetching %s/%d: %w", req.Topic, req.Partition, err)
	}
	if req.MinBytes < 0 || req.MinBytes > math.MaxInt32 || req.MaxBytes < 0 || req.MaxBytes > math.MaxInt32 {
		return fail(fmt.Errorf("MinBytes %d and MaxBytes %d must be within [0, %d]", req.MinBytes, req.MaxBytes, math.MaxInt32))
	}
	maxWait := req.MaxWait
	if maxWait <= 0 {
		maxWait = defaultClientMaxWait
	}
	if t := c.clientBrokerTimeout(ctx, math.MaxInt64); t < maxWait {
		maxWait = t
	}
	addr, err := c.address(req.Addr)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	leader, topicID, err := c.clientProduceLeader(ctx, addr, req.Topic, req.Partition)
	if err != nil {
		return fail(err)
	}
	offset := req.Offset
	if offset == FirstOffset || offset == LastOffset {
		if offset, err = c.clientFetchListOffset(ctx, leader, req.Topic, req.Partition, offset); err != nil {
			return fail(err)
		}
	}
	freq := &protocol.FetchRequest{
		ReplicaID:      -1,
		ReplicaEpoch:   -1,
		MaxWaitMs:      protocol.Millis(maxWait),
		MinBytes:       int32(req.MinBytes),
		MaxBytes:       int32(req.MaxBytes),
		IsolationLevel: int8(req.IsolationLevel),
		SessionEpoch:   -1, // a full fetch, outside any fetch session
		Topics: []protocol.FetchRequestTopic{{
			Topic:   req.Topic, // up to v12
			TopicID: topicID,   // v13+
			Partitions: []protocol.FetchRequestPartition{{
				Partition:          int32(req.Partition),
				CurrentLeaderEpoch: -1,
				FetchOffset:        offset,
				LastFetchedEpoch:   -1,
				LogStartOffset:     -1,
				PartitionMaxBytes:  int32(req.MaxBytes),
			}},
		}},
	}
	r, err := responseAs[*protocol.FetchResponse](c.roundTrip(ctx, brokerAddr(leader), freq))
	if err != nil {
		return fail(err)
	}
	ret := &FetchResponse{
		Throttle:  clientThrottle(r.ThrottleTimeMs),
		Topic:     req.Topic,
		Partition: req.Partition,
		Error:     makeError(r.ErrorCode, ""),
		Records:   emptyRecordReader{},
	}
	p := findFetchPartition(r, req.Topic, topicID, int32(req.Partition))
	if p == nil {
		if ret.Error != nil {
			// A request-level error (fetch sessions, throttling) comes
			// without partitions.
			return ret, nil
		}
		return fail(fmt.Errorf("broker %d answered without the partition", leader.ID))
	}
	ret.HighWatermark = p.HighWatermark
	ret.LastStableOffset = p.LastStableOffset
	ret.LogStartOffset = p.LogStartOffset
	if p.ErrorCode != 0 {
		ret.Error = makeError(p.ErrorCode, "")
	}
	if len(p.Records) > 0 {
		opts := protocol.RecordReadOptions{MinOffset: offset, IsolationLevel: int8(req.IsolationLevel)}
		if req.IsolationLevel == ReadCommitted && len(p.AbortedTransactions) > 0 {
			opts.AbortedTransactions = make([]protocol.AbortedTransaction, len(p.AbortedTransactions))
			for i, a := range p.AbortedTransactions {
				opts.AbortedTransactions[i] = protocol.AbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
			}
		}
		ret.Records = &clientFetchRecords{
			topic:     req.Topic,
			partition: req.Partition,
			r:         protocol.NewRecordReader(p.Records, opts),
		}
	}
	return ret, nil
}

// clientFetchListOffset turns FirstOffset or LastOffset into the offset
// the leader has for it.
func (c *Client) clientFetchListOffset(ctx context.Context, leader Broker, topic string, partition int, which int64) (int64, error) {
	req := &protocol.ListOffsetsRequest{
		ReplicaID: -1,
		Topics: []protocol.ListOffsetsRequestTopic{{
			Name: topic,
			Partitions: []protocol.ListOffsetsRequestPartition{{
				PartitionIndex:     int32(partition),
				CurrentLeaderEpoch: -1,
				Timestamp:          which,
			}},
		}},
		TimeoutMs: protocol.Millis(c.clientBrokerTimeout(ctx, defaultProduceTimeout)),
	}
	r, err := responseAs[*protocol.ListOffsetsResponse](c.roundTrip(ctx, brokerAddr(leader), req))
	if err != nil {
		return 0, err
	}
	for _, t := range r.Topics {
		if t.Name != topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.PartitionIndex != int32(partition) {
				continue
			}
			if p.ErrorCode != 0 {
				return 0, fmt.Errorf("listing offsets: %w", makeError(p.ErrorCode, ""))
			}
			return p.Offset, nil
		}
	}
	return 0, fmt.Errorf("listing offsets: broker %d answered without the partition", leader.ID)
}

// clientFetchRecords is the RecordReader of a fetch response: the records
// are decoded one at a time from the response, which they alias.
type clientFetchRecords struct {
	topic     string
	partition int
	r         *protocol.RecordReader
	rec       Record
	// bytes is where the Bytes of keys and values are cut from, a chunk at
	// a time, to allocate per chunk rather than per record.
	bytes []recordBytes
}

// clientFetchBytesChunk is how many keys and values share an allocation.
const clientFetchBytesChunk = 64

func (f *clientFetchRecords) ReadRecord() (*Record, error) {
	pr, err := f.r.Next()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).Fetch: reading the records of %s/%d: %w", f.topic, f.partition, err)
	}
	f.rec = Record{Offset: pr.Offset, Time: pr.Time(), Key: f.newBytes(pr.Key), Value: f.newBytes(pr.Value), Headers: pr.Headers}
	return &f.rec, nil
}

func (f *clientFetchRecords) newBytes(b []byte) Bytes {
	if b == nil {
		return nil
	}
	if len(f.bytes) == 0 {
		f.bytes = make([]recordBytes, clientFetchBytesChunk)
	}
	rb := &f.bytes[0]
	f.bytes = f.bytes[1:]
	rb.b = b
	return rb
}
