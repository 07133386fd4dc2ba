package protocol

import "testing"

func TestListOffsetsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(ListOffsetsRequest) }, func(v int16) (Request, Response) {
		req := &ListOffsetsRequest{
			ReplicaID: -1,
			Topics: []ListOffsetsRequestTopic{
				{Name: "events", Partitions: []ListOffsetsRequestPartition{
					{PartitionIndex: 0, Timestamp: -1},
					{PartitionIndex: 1, Timestamp: 1700000000000},
				}},
				{Name: "logs", Partitions: []ListOffsetsRequestPartition{{PartitionIndex: 7, Timestamp: -2}}},
			},
		}
		resp := &ListOffsetsResponse{
			Topics: []ListOffsetsResponseTopic{
				{Name: "events", Partitions: []ListOffsetsResponsePartition{
					{PartitionIndex: 0, Timestamp: -1, Offset: 1234},
					{PartitionIndex: 1, Timestamp: 1700000000005, Offset: 99},
				}},
				{Name: "logs", Partitions: []ListOffsetsResponsePartition{
					{PartitionIndex: 7, ErrorCode: 74, Timestamp: -1, Offset: -1}, // FENCED_LEADER_EPOCH
				}},
			},
		}
		if v >= 2 {
			req.IsolationLevel = 1
			resp.ThrottleTimeMs = 3
		}
		if v >= 4 {
			req.Topics[0].Partitions[0].CurrentLeaderEpoch = 5
			req.Topics[0].Partitions[1].CurrentLeaderEpoch = -1
			req.Topics[1].Partitions[0].CurrentLeaderEpoch = 2
			resp.Topics[0].Partitions[0].LeaderEpoch = 5
			resp.Topics[0].Partitions[1].LeaderEpoch = 4
			resp.Topics[1].Partitions[0].LeaderEpoch = -1
		}
		if v >= 10 {
			req.TimeoutMs = 30000
		}
		return req, resp
	})
}

// TestListOffsetsBytes checks v1, v4 and v10 messages laid out from the
// spec.
func TestListOffsetsBytes(t *testing.T) {
	checkBytes(t, wire(
		int32(-1),               // replica id
		int32(1), int16(1), "t", // topics: "t"
		int32(1), int32(3), int64(-2), // partition 3, earliest
	), 1, false, &ListOffsetsRequest{ReplicaID: -1, Topics: []ListOffsetsRequestTopic{
		{Name: "t", Partitions: []ListOffsetsRequestPartition{{PartitionIndex: 3, Timestamp: -2}}},
	}})

	checkBytes(t, wire(
		int32(0),                // throttle
		int32(1), int16(1), "t", // topics: "t"
		int32(1), int32(3), int16(0), int64(-1), int64(42), int32(6), // partition 3 at 42, epoch 6
	), 4, false, &ListOffsetsResponse{Topics: []ListOffsetsResponseTopic{
		{Name: "t", Partitions: []ListOffsetsResponsePartition{{PartitionIndex: 3, Timestamp: -1, Offset: 42, LeaderEpoch: 6}}},
	}})

	checkBytes(t, wire(
		int32(-1), int8(0), // replica id, isolation level
		byte(2), byte(2), "t", // topics: "t"
		byte(2), int32(0), int32(-1), int64(-3), byte(0), // partition 0, max timestamp
		byte(0),      // topic tags
		int32(15000), // timeout
		byte(0),      // tags
	), 10, true, &ListOffsetsRequest{ReplicaID: -1, TimeoutMs: 15000, Topics: []ListOffsetsRequestTopic{
		{Name: "t", Partitions: []ListOffsetsRequestPartition{{CurrentLeaderEpoch: -1, Timestamp: -3}}},
	}})
}

// AddPartition keeps one entry per topic, in the order topics first come.
func TestListOffsetsRequestAddPartition(t *testing.T) {
	var req ListOffsetsRequest
	for _, a := range []struct {
		topic string
		p     int32
	}{{"t", 0}, {"u", 0}, {"t", 1}} {
		req.AddPartition(a.topic, ListOffsetsRequestPartition{PartitionIndex: a.p})
	}
	if len(req.Topics) != 2 || req.Topics[0].Name != "t" || len(req.Topics[0].Partitions) != 2 ||
		req.Topics[1].Name != "u" || len(req.Topics[1].Partitions) != 1 {
		t.Fatalf("topics: %+v", req.Topics)
	}
}
