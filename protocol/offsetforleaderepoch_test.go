package protocol

import "testing"

func TestOffsetForLeaderEpochRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(OffsetForLeaderEpochRequest) }, func(v int16) (Request, Response) {
		req := &OffsetForLeaderEpochRequest{Topics: []OffsetForLeaderEpochRequestTopic{
			{Topic: "events", Partitions: []OffsetForLeaderEpochRequestPartition{
				{Partition: 0, CurrentLeaderEpoch: 7, LeaderEpoch: 5},
				{Partition: 2, CurrentLeaderEpoch: -1, LeaderEpoch: 6},
			}},
		}}
		if v >= 3 {
			req.ReplicaID = -1
		}
		resp := &OffsetForLeaderEpochResponse{
			ThrottleTimeMs: 1,
			Topics: []OffsetForLeaderEpochResponseTopic{
				{Topic: "events", Partitions: []OffsetForLeaderEpochResponsePartition{
					{Partition: 0, LeaderEpoch: 5, EndOffset: 1200},
					{ErrorCode: 74, Partition: 2, LeaderEpoch: -1, EndOffset: -1},
				}},
			},
		}
		return req, resp
	})
}

// TestOffsetForLeaderEpochBytes checks a v3 request and a v4 response laid
// out from the spec.
func TestOffsetForLeaderEpochBytes(t *testing.T) {
	checkBytes(t, wire(
		int32(-1),               // replica id: consumer
		int32(1), int16(1), "t", // topics: "t"
		int32(1), int32(4), int32(9), int32(8), // partition 4, current epoch 9, epoch 8
	), 3, false, &OffsetForLeaderEpochRequest{ReplicaID: -1, Topics: []OffsetForLeaderEpochRequestTopic{
		{Topic: "t", Partitions: []OffsetForLeaderEpochRequestPartition{{Partition: 4, CurrentLeaderEpoch: 9, LeaderEpoch: 8}}},
	}})

	checkBytes(t, wire(
		int32(0),              // throttle
		byte(2), byte(2), "t", // topics: "t"
		byte(2), int16(0), int32(4), int32(8), int64(500), byte(0), // partition 4: epoch 8 ends at 500
		byte(0), // topic tags
		byte(0), // tags
	), 4, true, &OffsetForLeaderEpochResponse{Topics: []OffsetForLeaderEpochResponseTopic{
		{Topic: "t", Partitions: []OffsetForLeaderEpochResponsePartition{{Partition: 4, LeaderEpoch: 8, EndOffset: 500}}},
	}})
}
