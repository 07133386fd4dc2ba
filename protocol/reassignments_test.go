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
				{PartitionIndex: 1, ErrorCode: 85, ErrorMessage: strp("no reassignment in progress")},
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
		ErrorMessage:   strp("not the controller"),
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
	checkBytes(t, wire(
		int32(60000),            // timeout
		byte(2), byte(4), "foo", // topics: 1
		byte(3),                                                  // partitions: 2
		int32(0), byte(4), int32(1), int32(2), int32(3), byte(0), // replicas 1, 2, 3
		int32(1), byte(0), byte(0), // null replicas: cancel
		byte(0), // topic tags
		byte(0),
	), 0, true, &AlterPartitionReassignmentsRequest{
		TimeoutMs: 60000,
		Topics: []AlterPartitionReassignmentsRequestTopic{{Name: "foo", Partitions: []AlterPartitionReassignmentsRequestPartition{
			{PartitionIndex: 0, Replicas: []int32{1, 2, 3}},
			{PartitionIndex: 1},
		}}},
	})

	checkBytes(t, wire(
		int32(0), int16(0), byte(0), // throttle, error, null message
		byte(2), byte(4), "foo", byte(3),
		int32(0), int16(0), byte(0), byte(0),
		int32(1), int16(85), byte(0), byte(0), // NO_REASSIGNMENT_IN_PROGRESS
		byte(0),
		byte(0),
	), 0, true, &AlterPartitionReassignmentsResponse{
		Responses: []AlterPartitionReassignmentsResponseTopic{{Name: "foo", Partitions: []AlterPartitionReassignmentsResponsePartition{
			{PartitionIndex: 0},
			{PartitionIndex: 1, ErrorCode: 85},
		}}},
	})
}

func TestListPartitionReassignmentsBytes(t *testing.T) {
	checkBytes(t, wire(int32(30000), byte(0), byte(0)), 0, true, // null topics
		&ListPartitionReassignmentsRequest{TimeoutMs: 30000})

	checkBytes(t, wire(
		int32(0), int16(0), byte(0),
		byte(2), byte(4), "foo", byte(2),
		int32(0),
		byte(4), int32(1), int32(2), int32(3), // replicas
		byte(2), int32(3), // adding
		byte(2), int32(1), // removing
		byte(0),
		byte(0),
		byte(0),
	), 0, true, &ListPartitionReassignmentsResponse{
		Topics: []ListPartitionReassignmentsResponseTopic{{Name: "foo", Partitions: []ListPartitionReassignmentsResponsePartition{
			{Replicas: []int32{1, 2, 3}, AddingReplicas: []int32{3}, RemovingReplicas: []int32{1}},
		}}},
	})
}
