package protocol

import "testing"

func endTxnSample(v int16) (Request, Response) {
	return &EndTxnRequest{TransactionalID: "txn-1", ProducerID: 4001, ProducerEpoch: 3, Committed: true},
		&EndTxnResponse{ThrottleTimeMs: 13, ErrorCode: 48}
}

func TestEndTxnRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(EndTxnRequest) }, endTxnSample)
	roundTrip(t, func() Request { return new(EndTxnRequest) }, func(int16) (Request, Response) {
		return &EndTxnRequest{TransactionalID: "a"}, &EndTxnResponse{}
	})
}

func TestEndTxnBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(2), "tx",
		int64(7),
		int16(1),
		byte(1), // committed
	), 0, false, &EndTxnRequest{TransactionalID: "tx", ProducerID: 7, ProducerEpoch: 1, Committed: true})
	checkBytes(t, wire(
		byte(3), "tx",
		int64(7),
		int16(1),
		byte(0), // aborted
		byte(0),
	), 3, true, &EndTxnRequest{TransactionalID: "tx", ProducerID: 7, ProducerEpoch: 1})
	checkBytes(t, wire(int32(0), int16(51)), 1, false, &EndTxnResponse{ErrorCode: 51})
}
