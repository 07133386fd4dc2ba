package protocol

import "testing"

func addPartitionsToTxnSample(v int16) (Request, Response) {
	req := &AddPartitionsToTxnRequest{
		TransactionalID: "txn-1", ProducerID: 4001, ProducerEpoch: 3,
		Topics: []AddPartitionsToTxnTopic{
			{Name: "t1", Partitions: []int32{0, 2}},
			{Name: "t2", Partitions: nil},
		},
	}
	resp := &AddPartitionsToTxnResponse{
		ThrottleTimeMs: 11,
		Results: []AddPartitionsToTxnTopicResult{
			{Name: "t1", Partitions: []AddPartitionsToTxnPartitionResult{{0, 0}, {2, 51}}},
			{Name: "t2"},
		},
	}
	return req, resp
}

func TestAddPartitionsToTxnRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(AddPartitionsToTxnRequest) }, addPartitionsToTxnSample)
	roundTrip(t, func() Request { return new(AddPartitionsToTxnRequest) }, func(int16) (Request, Response) {
		return &AddPartitionsToTxnRequest{ProducerID: -1, ProducerEpoch: -1}, &AddPartitionsToTxnResponse{}
	})
}

func TestAddPartitionsToTxnBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(2), "tx", // transactional_id
		int64(42), // producer_id
		int16(1),  // producer_epoch
		int32(1),  // topics: 1
		int16(1), "t",
		int32(2), int32(0), int32(3), // partitions [0 3]
	), 1, false, &AddPartitionsToTxnRequest{
		TransactionalID: "tx", ProducerID: 42, ProducerEpoch: 1,
		Topics: []AddPartitionsToTxnTopic{{Name: "t", Partitions: []int32{0, 3}}},
	})
	checkBytes(t, wire(
		byte(3), "tx", // compact transactional_id
		int64(42),
		int16(1),
		byte(2), // topics: 1
		byte(2), "t",
		byte(2), int32(5), // partitions [5]
		byte(0), // topic tags
		byte(0), // request tags
	), 3, true, &AddPartitionsToTxnRequest{
		TransactionalID: "tx", ProducerID: 42, ProducerEpoch: 1,
		Topics: []AddPartitionsToTxnTopic{{Name: "t", Partitions: []int32{5}}},
	})
	checkBytes(t, wire(
		int32(0), // throttle_time_ms
		int32(1), // results: 1
		int16(1), "t",
		int32(1),            // partitions: 1
		int32(5), int16(48), // INVALID_TXN_STATE
	), 2, false, &AddPartitionsToTxnResponse{Results: []AddPartitionsToTxnTopicResult{
		{Name: "t", Partitions: []AddPartitionsToTxnPartitionResult{{PartitionIndex: 5, ErrorCode: 48}}},
	}})
}
