package protocol

import "testing"

func goldenProduceResponse(v int16) *ProduceResponse {
	r := &ProduceResponse{Topics: []ProduceResponseTopic{
		{Name: "events", Partitions: []ProduceResponsePartition{
			{Index: 0, BaseOffset: 500},
			{Index: 1, ErrorCode: 6, BaseOffset: -1}, // NOT_LEADER_OR_FOLLOWER
		}},
		{Name: "logs", Partitions: []ProduceResponsePartition{{Index: 3, ErrorCode: 87, BaseOffset: -1}}}, // INVALID_RECORD
	}}
	if v >= 1 {
		r.ThrottleTimeMs = 20
	}
	if v >= 2 {
		r.Topics[0].Partitions[0].LogAppendTimeMs = 1700000000000
		r.Topics[0].Partitions[1].LogAppendTimeMs = -1
		r.Topics[1].Partitions[0].LogAppendTimeMs = -1
	}
	if v >= 5 {
		r.Topics[0].Partitions[0].LogStartOffset = 10
		r.Topics[0].Partitions[1].LogStartOffset = -1
		r.Topics[1].Partitions[0].LogStartOffset = -1
	}
	if v >= 8 {
		p := &r.Topics[1].Partitions[0]
		p.RecordErrors = []ProduceRecordError{{BatchIndex: 2, BatchIndexErrorMessage: strp("bad key")}, {BatchIndex: 5}}
		p.ErrorMessage = strp("records rejected")
	}
	if v >= 10 {
		r.Topics[0].Partitions[1].CurrentLeader = &LeaderIDAndEpoch{LeaderID: 3, LeaderEpoch: 12}
		r.NodeEndpoints = []NodeEndpoint{{NodeID: 3, Host: "broker-3", Port: 9092, Rack: strp("rack-c")}}
	}
	return r
}

func TestProduceRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(ProduceRequest) }, func(v int16) (Request, Response) {
		req := &ProduceRequest{
			TransactionalID: strp("txn-1"),
			Acks:            -1,
			TimeoutMs:       30000,
			Topics: []ProduceRequestTopic{
				{Name: "events", Partitions: []ProduceRequestPartition{
					{Index: 0, Records: []byte("batch-0")},
					{Index: 1, Records: []byte("batch-1")},
				}},
				{Name: "logs", Partitions: []ProduceRequestPartition{{Index: 3}}}, // null records
			},
		}
		return req, goldenProduceResponse(v)
	})
	roundTrip(t, func() Request { return new(ProduceRequest) }, func(v int16) (Request, Response) {
		return &ProduceRequest{Acks: 1}, &ProduceResponse{}
	})
}

// TestProduceBytes checks a v3 request, a v8 response and a v10 response
// laid out from the spec.
func TestProduceBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(-1),             // transactional id: null
		int16(1), int32(1000), // acks, timeout
		int32(1), int16(1), "t", // topics: "t"
		int32(1), int32(0), int32(3), "abc", // partition 0, 3 bytes of records
	), 3, false, &ProduceRequest{Acks: 1, TimeoutMs: 1000, Topics: []ProduceRequestTopic{
		{Name: "t", Partitions: []ProduceRequestPartition{{Records: []byte("abc")}}},
	}})

	checkBytes(t, wire(
		int32(1), int16(1), "t", // responses: "t"
		int32(1), int32(0), int16(87), int64(-1), int64(-1), int64(-1), // partition 0, INVALID_RECORD
		int32(1), int32(4), int16(-1), // record errors: batch index 4, null message
		int16(3), "bad", // error message
		int32(7), // throttle
	), 8, false, &ProduceResponse{ThrottleTimeMs: 7, Topics: []ProduceResponseTopic{
		{Name: "t", Partitions: []ProduceResponsePartition{{
			ErrorCode: 87, BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1,
			RecordErrors: []ProduceRecordError{{BatchIndex: 4}}, ErrorMessage: strp("bad"),
		}}},
	}})

	checkBytes(t, wire(
		byte(2), byte(2), "t", // responses: "t"
		byte(2), int32(0), int16(6), int64(-1), int64(-1), int64(-1), // partition 0, NOT_LEADER_OR_FOLLOWER
		byte(1), byte(0), // no record errors, null error message
		byte(1), byte(0), byte(9), int32(2), int32(4), byte(0), // tag 0: current leader 2, epoch 4
		byte(0),                    // topic tags
		int32(0),                   // throttle
		byte(1), byte(0), byte(13), // tag 0 (node endpoints), 13 bytes
		byte(2), int32(2), byte(2), "h", int32(9092), byte(0), byte(0),
	), 10, true, &ProduceResponse{
		Topics: []ProduceResponseTopic{{Name: "t", Partitions: []ProduceResponsePartition{{
			ErrorCode: 6, BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1,
			CurrentLeader: &LeaderIDAndEpoch{LeaderID: 2, LeaderEpoch: 4},
		}}}},
		NodeEndpoints: []NodeEndpoint{{NodeID: 2, Host: "h", Port: 9092}},
	})
}
