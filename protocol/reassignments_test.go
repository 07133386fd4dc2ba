package protocol

import "testing"

func alterPartitionReassignmentsSample(v int16) (Request, Response) {
	req := &AlterPartitionReassignmentsRequest{
		TimeoutMs: 60000,
		Topics: []AlterPartitionReassignmentsRequestTopic{
			{Name: "orders", Partitions: []AlterPartitionReassignmentsRequestPartition{
				{PartitionIndex: 0, Replicas: []int32{4, 5, 6}},
				{PartitionIndex: 1, Replicas: nil}, // cancel
			}},
		},
	}
	resp := &AlterPartitionReassignmentsResponse{
		ThrottleTimeMs: 4,
		ErrorCode:      0,
		Responses: []AlterPartitionReassignmentsResponseTopic{
			{Name: "orders", Partitions: []AlterPartitionReassignmentsResponsePartition{
				{PartitionIndex: 0},
				{PartitionIndex: 1, ErrorCode: 85, ErrorMessage: adminStr("no reassignment in progress")},
			}},
		},
	}
	return req, resp
}

func listPartitionReassignmentsSample(v int16) (Request, Response) {
	req := &ListPartitionReassignmentsRequest{
		TimeoutMs: 30000,
		Topics: []ListPartitionReassignmentsRequestTopic{
			{Name: "orders", PartitionIndexes: []int32{0, 1}},
			{Name: "events", PartitionIndexes: []int32{3}},
		},
	}
	resp := &ListPartitionReassignmentsResponse{
		ThrottleTimeMs: 6,
		ErrorCode:      41,
		ErrorMessage:   adminStr("not the controller"),
		Topics: []ListPartitionReassignmentsResponseTopic{
			{Name: "orders", Partitions: []ListPartitionReassignmentsResponsePartition{
				{PartitionIndex: 0, Replicas: []int32{1, 2, 3, 4}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}},
				{PartitionIndex: 1, Replicas: []int32{2, 3}},
			}},
		},
	}
	return req, resp
}

func TestAlterPartitionReassignmentsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(AlterPartitionReassignmentsRequest) }, alterPartitionReassignmentsSample)
}

func TestListPartitionReassignmentsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(ListPartitionReassignmentsRequest) }, listPartitionReassignmentsSample)
	// A nil topic list is null on the wire and means "everything".
	roundTrip(t, func() Request { return new(ListPartitionReassignmentsRequest) }, func(v int16) (Request, Response) {
		return &ListPartitionReassignmentsRequest{TimeoutMs: 1}, &ListPartitionReassignmentsResponse{}
	})
}

func TestAlterPartitionReassignmentsBytes(t *testing.T) {
	adminCheckBytes(t, adminHex(t, `
		0000ea60                          // timeout
		02 04 "foo"                       // topics: 1
		03                                // partitions: 2
		  00000000 04 00000001 00000002 00000003 00 // replicas 1, 2, 3
		  00000001 00 00                  // null replicas: cancel
		00                                // topic tags
		00
	`), 0, true, &AlterPartitionReassignmentsRequest{
		TimeoutMs: 60000,
		Topics: []AlterPartitionReassignmentsRequestTopic{{Name: "foo", Partitions: []AlterPartitionReassignmentsRequestPartition{
			{PartitionIndex: 0, Replicas: []int32{1, 2, 3}},
			{PartitionIndex: 1},
		}}},
	}, new(AlterPartitionReassignmentsRequest))

	adminCheckBytes(t, adminHex(t, `
		00000000 0000 00                  // throttle, error, null message
		02 04 "foo" 03
		  00000000 0000 00 00
		  00000001 0055 00 00             // NO_REASSIGNMENT_IN_PROGRESS
		00
		00
	`), 0, true, &AlterPartitionReassignmentsResponse{
		Responses: []AlterPartitionReassignmentsResponseTopic{{Name: "foo", Partitions: []AlterPartitionReassignmentsResponsePartition{
			{PartitionIndex: 0},
			{PartitionIndex: 1, ErrorCode: 85},
		}}},
	}, new(AlterPartitionReassignmentsResponse))
}

func TestListPartitionReassignmentsBytes(t *testing.T) {
	adminCheckBytes(t, adminHex(t, `00007530 00 00`), 0, true, // null topics
		&ListPartitionReassignmentsRequest{TimeoutMs: 30000}, new(ListPartitionReassignmentsRequest))

	adminCheckBytes(t, adminHex(t, `
		00000000 0000 00
		02 04 "foo" 02
		  00000000
		  04 00000001 00000002 00000003   // replicas
		  02 00000003                     // adding
		  02 00000001                     // removing
		  00
		00
		00
	`), 0, true, &ListPartitionReassignmentsResponse{
		Topics: []ListPartitionReassignmentsResponseTopic{{Name: "foo", Partitions: []ListPartitionReassignmentsResponsePartition{
			{Replicas: []int32{1, 2, 3}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}},
		}}},
	}, new(ListPartitionReassignmentsResponse))
}
