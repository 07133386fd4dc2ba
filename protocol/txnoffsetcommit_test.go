package protocol

import "testing"

func txnOffsetCommitSample(v int16) (Request, Response) {
	req := &TxnOffsetCommitRequest{
		TransactionalID: "txn-1", GroupID: "g1", ProducerID: 4001, ProducerEpoch: 3,
		Topics: []TxnOffsetCommitRequestTopic{
			{Name: "t1", Partitions: []TxnOffsetCommitRequestPartition{
				{PartitionIndex: 0, CommittedOffset: 100, CommittedMetadata: strp("meta")},
				{PartitionIndex: 3, CommittedOffset: 7},
			}},
			{Name: "t2"},
		},
	}
	if v >= 2 {
		req.Topics[0].Partitions[0].CommittedLeaderEpoch = 5
		req.Topics[0].Partitions[1].CommittedLeaderEpoch = -1
	}
	if v >= 3 {
		req.GenerationID, req.MemberID, req.GroupInstanceID = 9, "member-1", strp("instance-1")
	}
	resp := &TxnOffsetCommitResponse{
		ThrottleTimeMs: 14,
		Topics: []TxnOffsetCommitResponseTopic{
			{Name: "t1", Partitions: []TxnOffsetCommitResponsePartition{{0, 0}, {3, 22}}},
			{Name: "t2"},
		},
	}
	return req, resp
}

func TestTxnOffsetCommitRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(TxnOffsetCommitRequest) }, txnOffsetCommitSample)
	roundTrip(t, func() Request { return new(TxnOffsetCommitRequest) }, func(v int16) (Request, Response) {
		req := &TxnOffsetCommitRequest{TransactionalID: "a", GroupID: "b"}
		if v >= 3 {
			req.GenerationID = -1
		}
		return req, &TxnOffsetCommitResponse{}
	})
}

func TestTxnOffsetCommitBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(2), "tx",
		int16(1), "g",
		int64(7), // producer_id
		int16(1), // producer_epoch
		int32(1), // topics: 1
		int16(1), "t",
		int32(1),  // partitions: 1
		int32(2),  // partition_index
		int64(42), // committed_offset
		int16(-1), // committed_metadata null
	), 1, false, &TxnOffsetCommitRequest{
		TransactionalID: "tx", GroupID: "g", ProducerID: 7, ProducerEpoch: 1,
		Topics: []TxnOffsetCommitRequestTopic{{Name: "t", Partitions: []TxnOffsetCommitRequestPartition{
			{PartitionIndex: 2, CommittedOffset: 42},
		}}},
	})
	checkBytes(t, wire(
		byte(3), "tx",
		byte(2), "g",
		int64(7),
		int16(1),
		int32(-1),    // generation_id
		byte(1),      // member_id ""
		byte(0),      // group_instance_id null
		byte(2),      // topics: 1
		byte(2), "t", //
		byte(2),   // partitions: 1
		int32(2),  // partition_index
		int64(42), // committed_offset
		int32(-1), // committed_leader_epoch
		byte(1),   // committed_metadata ""
		byte(0),   // partition tags
		byte(0),   // topic tags
		byte(0),   // request tags
	), 3, true, &TxnOffsetCommitRequest{
		TransactionalID: "tx", GroupID: "g", ProducerID: 7, ProducerEpoch: 1, GenerationID: -1,
		Topics: []TxnOffsetCommitRequestTopic{{Name: "t", Partitions: []TxnOffsetCommitRequestPartition{
			{PartitionIndex: 2, CommittedOffset: 42, CommittedLeaderEpoch: -1, CommittedMetadata: strp("")},
		}}},
	})
	checkBytes(t, wire(
		int32(0), // throttle_time_ms
		int32(1), // topics: 1
		int16(1), "t",
		int32(1), // partitions: 1
		int32(2), int16(0),
	), 2, false, &TxnOffsetCommitResponse{Topics: []TxnOffsetCommitResponseTopic{
		{Name: "t", Partitions: []TxnOffsetCommitResponsePartition{{PartitionIndex: 2}}},
	}})
}
