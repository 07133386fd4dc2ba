package protocol

import "testing"

func electLeadersSample(v int16) (Request, Response) {
	req := &ElectLeadersRequest{
		TopicPartitions: []ElectLeadersRequestTopic{
			{Topic: "orders", Partitions: []int32{0, 1, 2}},
			{Topic: "events", Partitions: []int32{7}},
		},
		TimeoutMs: 60000,
	}
	resp := &ElectLeadersResponse{
		ThrottleTimeMs: 2,
		ReplicaElectionResults: []ElectLeadersResponseTopic{
			{Topic: "orders", PartitionResult: []ElectLeadersResponsePartition{
				{PartitionID: 0},
				{PartitionID: 1, ErrorCode: 84, ErrorMessage: strp("Leader election not needed for topic partition.")},
			}},
			{Topic: "events", PartitionResult: []ElectLeadersResponsePartition{{PartitionID: 7, ErrorCode: 3}}},
		},
	}
	if v >= 1 {
		req.ElectionType = ElectionTypeUnclean
		resp.ErrorCode = 31
	}
	if v == 2 {
		req.TopicPartitions = nil // every partition
	}
	return req, resp
}

func TestElectLeadersRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(ElectLeadersRequest) }, electLeadersSample)
}

func TestElectLeadersBytes(t *testing.T) {
	checkBytes(t, wire(int32(-1), int32(60000)), 0, false,
		&ElectLeadersRequest{TimeoutMs: 60000})

	checkBytes(t, wire(
		byte(1),                                                       // unclean
		byte(2), byte(4), "foo", byte(3), int32(0), int32(1), byte(0), // foo: partitions 0, 1
		int32(60000), byte(0),
	), 2, true, &ElectLeadersRequest{
		ElectionType:    ElectionTypeUnclean,
		TopicPartitions: []ElectLeadersRequestTopic{{Topic: "foo", Partitions: []int32{0, 1}}},
		TimeoutMs:       60000,
	})

	checkBytes(t, wire(
		int32(0), // throttle (no top-level error code in v0)
		int32(1), int16(3), "foo",
		int32(1), int32(0), int16(0), int16(-1),
	), 0, false, &ElectLeadersResponse{
		ReplicaElectionResults: []ElectLeadersResponseTopic{{Topic: "foo", PartitionResult: []ElectLeadersResponsePartition{{}}}},
	})

	checkBytes(t, wire(
		int32(0), int16(0),
		byte(2), byte(4), "foo", byte(2), int32(0), int16(84), byte(0), byte(0), byte(0), // ELECTION_NOT_NEEDED, null message
		byte(0),
	), 2, true, &ElectLeadersResponse{
		ReplicaElectionResults: []ElectLeadersResponseTopic{{Topic: "foo", PartitionResult: []ElectLeadersResponsePartition{{ErrorCode: 84}}}},
	})
}
