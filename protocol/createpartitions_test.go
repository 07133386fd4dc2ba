package protocol

import "testing"

func createPartitionsSample(v int16) (Request, Response) {
	req := &CreatePartitionsRequest{
		Topics: []CreatePartitionsRequestTopic{
			{Name: "orders", Count: 6},
			{Name: "events", Count: 4, Assignments: []CreatePartitionsRequestAssignment{
				{BrokerIDs: []int32{1, 2}}, {BrokerIDs: []int32{3, 1}},
			}},
		},
		TimeoutMs:    25000,
		ValidateOnly: true,
	}
	resp := &CreatePartitionsResponse{
		ThrottleTimeMs: 1,
		Results: []CreatePartitionsResponseResult{
			{Name: "orders"},
			{Name: "events", ErrorCode: 37, ErrorMessage: strp("Topic currently has 4 partitions")},
		},
	}
	return req, resp
}

func TestCreatePartitionsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(CreatePartitionsRequest) }, createPartitionsSample)
}

func TestCreatePartitionsBytes(t *testing.T) {
	checkBytes(t, wire(
		int32(2),                             // topics
		int16(3), "foo", int32(6), int32(-1), // count 6, null assignments
		int16(3), "bar", int32(4),
		int32(1), int32(2), int32(1), int32(3), // one new partition on brokers 1, 3
		int32(30000), byte(0), // timeout, validate only
	), 1, false, &CreatePartitionsRequest{
		Topics: []CreatePartitionsRequestTopic{
			{Name: "foo", Count: 6},
			{Name: "bar", Count: 4, Assignments: []CreatePartitionsRequestAssignment{{BrokerIDs: []int32{1, 3}}}},
		},
		TimeoutMs: 30000,
	})

	checkBytes(t, wire(
		int32(0), byte(2),
		byte(4), "foo", int16(37), byte(10), "too small", byte(0), // INVALID_PARTITIONS
		byte(0),
	), 2, true, &CreatePartitionsResponse{
		Results: []CreatePartitionsResponseResult{{Name: "foo", ErrorCode: 37, ErrorMessage: strp("too small")}},
	})
}
