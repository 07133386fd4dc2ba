package protocol

import "testing"

func addOffsetsToTxnSample(v int16) (Request, Response) {
	return &AddOffsetsToTxnRequest{TransactionalID: "txn-1", ProducerID: 4001, ProducerEpoch: 3, GroupID: "g1"},
		&AddOffsetsToTxnResponse{ThrottleTimeMs: 12, ErrorCode: 90}
}

func TestAddOffsetsToTxnRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(AddOffsetsToTxnRequest) }, addOffsetsToTxnSample)
}

func TestAddOffsetsToTxnBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(2), "tx",
		int64(7),
		int16(0),
		int16(1), "g",
	), 2, false, &AddOffsetsToTxnRequest{TransactionalID: "tx", ProducerID: 7, GroupID: "g"})
	checkBytes(t, wire(
		byte(3), "tx",
		int64(7),
		int16(2),
		byte(2), "g",
		byte(0),
	), 4, true, &AddOffsetsToTxnRequest{TransactionalID: "tx", ProducerID: 7, ProducerEpoch: 2, GroupID: "g"})
	checkBytes(t, wire(int32(5), int16(15), byte(0)), 3, true,
		&AddOffsetsToTxnResponse{ThrottleTimeMs: 5, ErrorCode: 15})
}
