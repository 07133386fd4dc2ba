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
				{PartitionID: 1, ErrorCode: 84, ErrorMessage: adminStr("Leader election not needed for topic partition.")},
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
	adminCheckBytes(t, adminHex(t, `ffffffff 0000ea60`), 0, false,
		&ElectLeadersRequest{TimeoutMs: 60000}, new(ElectLeadersRequest))

	adminCheckBytes(t, adminHex(t, `
		01                                  // unclean
		02 04 "foo" 03 00000000 00000001 00 // foo: partitions 0, 1
		0000ea60 00
	`), 2, true, &ElectLeadersRequest{
		ElectionType:    ElectionTypeUnclean,
		TopicPartitions: []ElectLeadersRequestTopic{{Topic: "foo", Partitions: []int32{0, 1}}},
		TimeoutMs:       60000,
	}, new(ElectLeadersRequest))

	adminCheckBytes(t, adminHex(t, `
		00000000                 // throttle (no top-level error code in v0)
		00000001 0003 "foo"
		00000001 00000000 0000 ffff
	`), 0, false, &ElectLeadersResponse{
		ReplicaElectionResults: []ElectLeadersResponseTopic{{Topic: "foo", PartitionResult: []ElectLeadersResponsePartition{{}}}},
	}, new(ElectLeadersResponse))

	adminCheckBytes(t, adminHex(t, `
		00000000 0000
		02 04 "foo" 02 00000000 0054 00 00 00 // ELECTION_NOT_NEEDED, null message
		00
	`), 2, true, &ElectLeadersResponse{
		ReplicaElectionResults: []ElectLeadersResponseTopic{{Topic: "foo", PartitionResult: []ElectLeadersResponsePartition{{ErrorCode: 84}}}},
	}, new(ElectLeadersResponse))
}
