package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

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
