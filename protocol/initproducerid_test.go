package protocol

import "testing"

func initProducerIdSample(v int16) (Request, Response) {
	req := &InitProducerIdRequest{TransactionalID: adminStr("txn-1"), TransactionTimeoutMs: 60000}
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
	adminCheckBytes(t, adminHex(t, `ffff 0000ea60`), 0, false, // null transactional id
		&InitProducerIdRequest{TransactionTimeoutMs: 60000}, new(InitProducerIdRequest))

	adminCheckBytes(t, adminHex(t, `03 "tx" 0000ea60 ffffffffffffffff ffff 00`), 4, true,
		&InitProducerIdRequest{TransactionalID: adminStr("tx"), TransactionTimeoutMs: 60000, ProducerID: -1, ProducerEpoch: -1},
		new(InitProducerIdRequest))

	adminCheckBytes(t, adminHex(t, `00000000 0000 000000000000002a 0003 00`), 4, true,
		&InitProducerIdResponse{ProducerID: 42, ProducerEpoch: 3}, new(InitProducerIdResponse))
}
