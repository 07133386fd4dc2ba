package protocol

import "testing"

func initProducerIdSample(v int16) (Request, Response) {
	req := &InitProducerIdRequest{TransactionalID: strp("txn-1"), TransactionTimeoutMs: 60000}
	if v >= 3 {
		req.ProducerID, req.ProducerEpoch = 4000, 7
	}
	return req, &InitProducerIdResponse{ThrottleTimeMs: 9, ErrorCode: 0, ProducerID: 4001, ProducerEpoch: 0}
}

func TestInitProducerIdRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(InitProducerIdRequest) }, initProducerIdSample)
	roundTrip(t, func() Request { return new(InitProducerIdRequest) }, func(v int16) (Request, Response) {
		req := &InitProducerIdRequest{TransactionTimeoutMs: 1} // idempotent only
		if v >= 3 {
			req.ProducerID, req.ProducerEpoch = -1, -1
		}
		return req, &InitProducerIdResponse{ErrorCode: 47, ProducerID: -1, ProducerEpoch: -1}
	})
}

func TestInitProducerIdBytes(t *testing.T) {
	checkBytes(t, wire(int16(-1), int32(60000)), 0, false, // null transactional id
		&InitProducerIdRequest{TransactionTimeoutMs: 60000})

	checkBytes(t, wire(byte(3), "tx", int32(60000), int64(-1), int16(-1), byte(0)), 4, true,
		&InitProducerIdRequest{TransactionalID: strp("tx"), TransactionTimeoutMs: 60000, ProducerID: -1, ProducerEpoch: -1})

	checkBytes(t, wire(int32(0), int16(0), int64(42), int16(3), byte(0)), 4, true,
		&InitProducerIdResponse{ProducerID: 42, ProducerEpoch: 3})
}
