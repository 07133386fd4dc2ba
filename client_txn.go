package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// The Client's transaction requests: the steps a transactional producer
// takes between InitProducerID and the end of a transaction. The requests
// of a transaction go to the transaction coordinator of its transactional
// id, except TxnOffsetCommit, which goes to the coordinator of the group
// whose offsets it commits.

// AddPartitionToTxn is a partition to add to a transaction.
type AddPartitionToTxn struct {
	// Partition is the partition's index in its topic.
	Partition int
}

// AddPartitionsToTxnRequest is the input of Client.AddPartitionsToTxn.
type AddPartitionsToTxnRequest struct {
	// Addr is the cluster to send the request to; nil uses Client.Addr.
	// The request goes to the transaction coordinator of TransactionalID.
	Addr net.Addr

	// TransactionalID names the transaction.
	TransactionalID string

	// ProducerID and ProducerEpoch identify the producer, as InitProducerID
	// returned them.
	ProducerID int

	ProducerEpoch int

	// Topics maps topic names to the partitions to add.
	Topics map[string][]AddPartitionToTxn
}

// AddPartitionsToTxnResponse is the output of Client.AddPartitionsToTxn.
type AddPartitionsToTxnResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps topic names to the outcome for each of their partitions.
	Topics map[string][]AddPartitionToTxnPartition
}

// AddPartitionToTxnPartition is the outcome of adding one partition to a
// transaction.
type AddPartitionToTxnPartition struct {
	// Partition is the partition's index in its topic.
	Partition int

	// Error is nil when the partition was added, else a kafka.Error (test
	// it with errors.Is). The coordinator adds all partitions of a request
	// or none: when one fails, the others carry OperationNotAttempted.
	Error error
}

// AddPartitionsToTxn adds partitions to the ongoing transaction of
// req.TransactionalID (starting it if none is ongoing). A producer must add
// a partition before writing transactional records to it.
//
// Errors of the partitions are in the response; the method's error means
// the coordinator could not be found or asked.
func (c *Client) AddPartitionsToTxn(ctx context.Context, req *AddPartitionsToTxnRequest) (*AddPartitionsToTxnResponse, error) {
	const op = "kafka.(*Client).AddPartitionsToTxn"
	if req == nil {
		return nil, errors.New(op + ": nil request")
	}
	if req.TransactionalID == "" {
		return nil, errors.New(op + ": no TransactionalID")
	}
	preq := &protocol.AddPartitionsToTxnRequest{
		TransactionalID: req.TransactionalID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
	}
	for _, name := range clientSortedKeys(req.Topics) {
		t := protocol.AddPartitionsToTxnTopic{Name: name}
		for _, p := range req.Topics[name] {
			t.Partitions = append(t.Partitions, int32(p.Partition))
		}
		preq.Topics = append(preq.Topics, t)
	}

	r, err := responseAs[*protocol.AddPartitionsToTxnResponse](c.sendToCoordinator(ctx, req.Addr, req.TransactionalID, protocol.CoordinatorKeyTypeTransaction, preq))
	if err != nil {
		return nil, fmt.Errorf("%s: adding partitions to transaction %q: %w", op, req.TransactionalID, err)
	}
	res := &AddPartitionsToTxnResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Topics:   make(map[string][]AddPartitionToTxnPartition, len(r.Results)),
	}
	for _, t := range r.Results {
		parts := make([]AddPartitionToTxnPartition, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			parts = append(parts, AddPartitionToTxnPartition{Partition: int(p.PartitionIndex), Error: makeError(p.ErrorCode, "")})
		}
		res.Topics[t.Name] = append(res.Topics[t.Name], parts...)
	}
	return res, nil
}

// AddOffsetsToTxnRequest is the input of Client.AddOffsetsToTxn.
type AddOffsetsToTxnRequest struct {
	// Addr is the cluster to send the request to; nil uses Client.Addr.
	// The request goes to the transaction coordinator of TransactionalID.
	Addr net.Addr

	// TransactionalID names the transaction.
	TransactionalID string

	// ProducerID and ProducerEpoch identify the producer, as InitProducerID
	// returned them.
	ProducerID int

	ProducerEpoch int

	// GroupID is the consumer group whose offsets the transaction will
	// commit.
	GroupID string
}

// AddOffsetsToTxnResponse is the output of Client.AddOffsetsToTxn.
type AddOffsetsToTxnResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the coordinator's refusal, a kafka.Error (test it with
	// errors.Is), or nil.
	Error error
}

// AddOffsetsToTxn tells the transaction coordinator of req.TransactionalID
// that the ongoing transaction will commit offsets of group req.GroupID;
// TxnOffsetCommit then writes them. The offsets become visible to the
// group when the transaction commits.
//
// The coordinator's error is in the response; the method's error means the
// coordinator could not be found or asked.
func (c *Client) AddOffsetsToTxn(ctx context.Context, req *AddOffsetsToTxnRequest) (*AddOffsetsToTxnResponse, error) {
	const op = "kafka.(*Client).AddOffsetsToTxn"
	if req == nil {
		return nil, errors.New(op + ": nil request")
	}
	if req.TransactionalID == "" {
		return nil, errors.New(op + ": no TransactionalID")
	}
	preq := &protocol.AddOffsetsToTxnRequest{
		TransactionalID: req.TransactionalID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
		GroupID:         req.GroupID,
	}
	r, err := responseAs[*protocol.AddOffsetsToTxnResponse](c.sendToCoordinator(ctx, req.Addr, req.TransactionalID, protocol.CoordinatorKeyTypeTransaction, preq))
	if err != nil {
		return nil, fmt.Errorf("%s: adding the offsets of group %q to transaction %q: %w", op, req.GroupID, req.TransactionalID, err)
	}
	return &AddOffsetsToTxnResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Error:    makeError(r.ErrorCode, ""),
	}, nil
}

// EndTxnRequest is the input of Client.EndTxn.
type EndTxnRequest struct {
	// Addr is the cluster to send the request to; nil uses Client.Addr.
	// The request goes to the transaction coordinator of TransactionalID.
	Addr net.Addr

	// TransactionalID names the transaction.
	TransactionalID string

	// ProducerID and ProducerEpoch identify the producer, as InitProducerID
	// returned them.
	ProducerID int

	ProducerEpoch int

	// Committed commits the transaction when true and aborts it when
	// false.
	Committed bool
}

// EndTxnResponse is the output of Client.EndTxn.
type EndTxnResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the coordinator's refusal, a kafka.Error (test it with
	// errors.Is), or nil.
	Error error
}

// EndTxn commits or aborts the ongoing transaction of req.TransactionalID.
// Once the coordinator has accepted it, the transaction's records and
// offsets become visible to read_committed consumers (commit) or are
// skipped by them (abort); the markers are written asynchronously, so they
// may take a moment to appear.
//
// The coordinator's error is in the response; the method's error means the
// coordinator could not be found or asked.
func (c *Client) EndTxn(ctx context.Context, req *EndTxnRequest) (*EndTxnResponse, error) {
	const op = "kafka.(*Client).EndTxn"
	if req == nil {
		return nil, errors.New(op + ": nil request")
	}
	if req.TransactionalID == "" {
		return nil, errors.New(op + ": no TransactionalID")
	}
	preq := &protocol.EndTxnRequest{
		TransactionalID: req.TransactionalID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
		Committed:       req.Committed,
	}
	r, err := responseAs[*protocol.EndTxnResponse](c.sendToCoordinator(ctx, req.Addr, req.TransactionalID, protocol.CoordinatorKeyTypeTransaction, preq))
	if err != nil {
		return nil, fmt.Errorf("%s: ending transaction %q: %w", op, req.TransactionalID, err)
	}
	return &EndTxnResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Error:    makeError(r.ErrorCode, ""),
	}, nil
}

// TxnOffsetCommitRequest is the input of Client.TxnOffsetCommit.
type TxnOffsetCommitRequest struct {
	// Addr is the cluster to send the request to; nil uses Client.Addr.
	// The request goes to the coordinator of GroupID.
	Addr net.Addr

	// TransactionalID names the transaction.
	TransactionalID string

	// GroupID is the consumer group whose offsets are committed.
	GroupID string

	// ProducerID and ProducerEpoch identify the producer, as InitProducerID
	// returned them.
	ProducerID int

	ProducerEpoch int

	// GenerationID, MemberID and GroupInstanceID identify the group member
	// the offsets come from, so that the coordinator refuses them from a
	// member that is no longer in the group. The generation is sent as
	// given (zero included); -1 skips the generation check, and an empty
	// MemberID the member check. An empty GroupInstanceID is sent as none.
	GenerationID int

	MemberID string

	GroupInstanceID string

	// Topics maps topic names to the offsets to commit.
	Topics map[string][]TxnOffsetCommit
}

// TxnOffsetCommit is the offset to commit for one partition in a
// transaction. Metadata is stored with it, opaque to Kafka.
type TxnOffsetCommit struct {
	Partition int
	Offset    int64
	Metadata  string
}

// TxnOffsetCommitResponse is the output of Client.TxnOffsetCommit.
type TxnOffsetCommitResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Topics maps topic names to the outcome for each of their partitions.
	Topics map[string][]TxnOffsetCommitPartition
}

// TxnOffsetCommitPartition is the outcome of committing one partition's
// offset in a transaction.
type TxnOffsetCommitPartition struct {
	// Partition is the partition's index in its topic.
	Partition int

	// Error is nil when the offset was accepted, else a kafka.Error (test
	// it with errors.Is).
	Error error
}

// TxnOffsetCommit writes offsets of group req.GroupID as part of the
// ongoing transaction of req.TransactionalID (AddOffsetsToTxn must have
// named the group first). The group sees them once the transaction
// commits; an abort discards them. The request goes to the group's
// coordinator.
//
// Errors of the partitions are in the response; the method's error means
// the coordinator could not be found or asked.
func (c *Client) TxnOffsetCommit(ctx context.Context, req *TxnOffsetCommitRequest) (*TxnOffsetCommitResponse, error) {
	const op = "kafka.(*Client).TxnOffsetCommit"
	if req == nil {
		return nil, errors.New(op + ": nil request")
	}
	if req.GroupID == "" {
		return nil, errors.New(op + ": no GroupID")
	}
	preq := &protocol.TxnOffsetCommitRequest{
		TransactionalID: req.TransactionalID,
		GroupID:         req.GroupID,
		ProducerID:      int64(req.ProducerID),
		ProducerEpoch:   int16(req.ProducerEpoch),
		GenerationID:    int32(req.GenerationID),
		MemberID:        req.MemberID,
	}
	preq.GroupInstanceID = clientGroupsNullable(req.GroupInstanceID)
	for _, name := range clientSortedKeys(req.Topics) {
		t := protocol.TxnOffsetCommitRequestTopic{Name: name}
		for _, p := range req.Topics[name] {
			meta := p.Metadata
			t.Partitions = append(t.Partitions, protocol.TxnOffsetCommitRequestPartition{
				PartitionIndex:       int32(p.Partition),
				CommittedOffset:      p.Offset,
				CommittedLeaderEpoch: -1, // unknown: the API has no field for it
				CommittedMetadata:    &meta,
			})
		}
		preq.Topics = append(preq.Topics, t)
	}

	r, err := responseAs[*protocol.TxnOffsetCommitResponse](c.sendToCoordinator(ctx, req.Addr, req.GroupID, protocol.CoordinatorKeyTypeGroup, preq))
	if err != nil {
		return nil, fmt.Errorf("%s: committing offsets of group %q in transaction %q: %w", op, req.GroupID, req.TransactionalID, err)
	}
	res := &TxnOffsetCommitResponse{
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Topics:   make(map[string][]TxnOffsetCommitPartition, len(r.Topics)),
	}
	for _, t := range r.Topics {
		parts := make([]TxnOffsetCommitPartition, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			parts = append(parts, TxnOffsetCommitPartition{Partition: int(p.PartitionIndex), Error: makeError(p.ErrorCode, "")})
		}
		res.Topics[t.Name] = append(res.Topics[t.Name], parts...)
	}
	return res, nil
}

// InitProducerIDRequest asks for a producer id and epoch.
type InitProducerIDRequest struct {
	// Addr is the cluster; nil means the Client's Addr. With a
	// TransactionalID the request goes to its transaction coordinator,
	// else to any broker.
	Addr net.Addr

	// TransactionalID is the producer's transactional id; empty for an
	// idempotent producer without transactions.
	TransactionalID string

	// TransactionTimeoutMs is how long, in milliseconds, a transaction may
	// stay open before the coordinator aborts it. It may not exceed the
	// brokers' transaction.max.timeout.ms.
	TransactionTimeoutMs int

	// ProducerID is the producer's current id, to bump its epoch instead of
	// getting a new one (Kafka 2.5 and later). Left zero together with
	// ProducerEpoch, the request names no current producer.
	ProducerID int

	// ProducerEpoch is the producer's current epoch, checked by the broker
	// against its own (Kafka 2.5 and later).
	ProducerEpoch int
}

// ProducerSession is a producer id and epoch.
type ProducerSession struct {
	// ProducerID is the producer id.
	ProducerID int

	// ProducerEpoch is the epoch of the producer id.
	ProducerEpoch int
}

// InitProducerIDResponse is the broker's answer to an InitProducerID
// request.
type InitProducerIDResponse struct {
	// Producer is the producer id and epoch the broker gave (-1 and -1 with
	// an Error).
	Producer *ProducerSession

	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the Kafka error the broker answered with, or nil. Use
	// errors.Is to compare it with Kafka errors (InvalidTransactionTimeout,
	// ConcurrentTransactions...).
	Error error
}

// InitProducerID obtains a producer id and epoch: from the transaction
// coordinator of req.TransactionalID when it is set, else from any broker.
//
// A ProducerID and ProducerEpoch both zero are sent as "no current producer"
// (-1, -1): Go's zero values then mean what an unset field means to Kafka,
// and a transactional id's epoch is bumped rather than checked against 0.
func (c *Client) InitProducerID(ctx context.Context, req *InitProducerIDRequest) (*InitProducerIDResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).InitProducerID: nil request")
	}
	init := &protocol.InitProducerIdRequest{
		TransactionalID:      clientGroupsNullable(req.TransactionalID),
		TransactionTimeoutMs: int32(req.TransactionTimeoutMs),
		ProducerID:           int64(req.ProducerID),
		ProducerEpoch:        int16(req.ProducerEpoch),
	}
	if req.ProducerID == 0 && req.ProducerEpoch == 0 {
		init.ProducerID, init.ProducerEpoch = -1, -1
	}
	var m protocol.Response
	var err error
	if req.TransactionalID != "" {
		m, err = c.sendToCoordinator(ctx, req.Addr, req.TransactionalID, protocol.CoordinatorKeyTypeTransaction, init)
	} else {
		m, err = c.sendToAny(ctx, req.Addr, init)
	}
	r, err := responseAs[*protocol.InitProducerIdResponse](m, err)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).InitProducerID: %w", err)
	}
	return &InitProducerIDResponse{
		Producer: &ProducerSession{ProducerID: int(r.ProducerID), ProducerEpoch: int(r.ProducerEpoch)},
		Throttle: clientThrottle(r.ThrottleTimeMs),
		Error:    makeError(r.ErrorCode, ""),
	}, nil
}
