package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

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
