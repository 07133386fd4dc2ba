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
			{Name: "events", ErrorCode: 37, ErrorMessage: adminStr("Topic currently has 4 partitions")},
		},
	}
	return req, resp
}

func TestCreatePartitionsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(CreatePartitionsRequest) }, createPartitionsSample)
}

func TestCreatePartitionsBytes(t *testing.T) {
	adminCheckBytes(t, adminHex(t, `
		00000002                     // topics
		0003 "foo" 00000006 ffffffff // count 6, null assignments
		0003 "bar" 00000004
		00000001 00000002 00000001 00000003 // one new partition on brokers 1, 3
		00007530 00                  // timeout, validate only
	`), 1, false, &CreatePartitionsRequest{
		Topics: []CreatePartitionsRequestTopic{
			{Name: "foo", Count: 6},
			{Name: "bar", Count: 4, Assignments: []CreatePartitionsRequestAssignment{{BrokerIDs: []int32{1, 3}}}},
		},
		TimeoutMs: 30000,
	}, new(CreatePartitionsRequest))

	adminCheckBytes(t, adminHex(t, `
		00000000 02
		04 "foo" 0025 0a "too small" 00 // INVALID_PARTITIONS
		00
	`), 2, true, &CreatePartitionsResponse{
		Results: []CreatePartitionsResponseResult{{Name: "foo", ErrorCode: 37, ErrorMessage: adminStr("too small")}},
	}, new(CreatePartitionsResponse))
}
