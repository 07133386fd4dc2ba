package protocol

import (
	"reflect"
	"testing"
)

func offsetDeleteSample(v int16) (Request, Response) {
	req := &OffsetDeleteRequest{
		GroupID: "billing",
		Topics: []OffsetDeleteRequestTopic{
			{Name: "events", Partitions: []OffsetDeleteRequestPartition{{PartitionIndex: 0}, {PartitionIndex: 2}}},
			{Name: "empty"},
		},
	}
	resp := &OffsetDeleteResponse{
		ThrottleTimeMs: 7,
		Topics: []OffsetDeleteResponseTopic{
			{Name: "events", Partitions: []OffsetDeleteResponsePartition{
				{PartitionIndex: 0},
				{PartitionIndex: 2, ErrorCode: 86}, // GROUP_SUBSCRIBED_TO_TOPIC
			}},
			{Name: "empty"},
		},
	}
	return req, resp
}

func TestOffsetDeleteRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(OffsetDeleteRequest) }, offsetDeleteSample)
	// A group-level error with no topics.
	roundTrip(t, func() Request { return new(OffsetDeleteRequest) }, func(int16) (Request, Response) {
		return &OffsetDeleteRequest{GroupID: "g"}, &OffsetDeleteResponse{ErrorCode: 69} // GROUP_ID_NOT_FOUND
	})
}

func TestOffsetDeleteRegistered(t *testing.T) {
	if OffsetDelete.String() != "OffsetDelete" {
		t.Errorf("OffsetDelete.String() = %q", OffsetDelete.String())
	}
	r := NewRequest(47)
	if r == nil || reflect.TypeOf(r) != reflect.TypeOf(new(OffsetDeleteRequest)) {
		t.Fatalf("NewRequest(47) = %T", r)
	}
	if vr, ok := Implemented()[OffsetDelete]; !ok || vr.Min != 0 || vr.Max != 0 {
		t.Errorf("Implemented()[OffsetDelete] = %+v, %v", vr, ok)
	}
}

// TestOffsetDeleteBytes checks v0 messages laid out from the spec.
func TestOffsetDeleteBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(2), "gr", // group id
		int32(1),        // topics
		int16(3), "top", // name
		int32(2), int32(0), int32(5), // partitions 0 and 5
	), 0, false, &OffsetDeleteRequest{GroupID: "gr", Topics: []OffsetDeleteRequestTopic{
		{Name: "top", Partitions: []OffsetDeleteRequestPartition{{0}, {5}}},
	}})

	checkBytes(t, wire(
		int16(0),        // error code
		int32(100),      // throttle time
		int32(1),        // topics
		int16(3), "top", // name
		int32(2),           // partitions
		int32(0), int16(0), // partition 0: ok
		int32(5), int16(86), // partition 5: GROUP_SUBSCRIBED_TO_TOPIC
	), 0, false, &OffsetDeleteResponse{ThrottleTimeMs: 100, Topics: []OffsetDeleteResponseTopic{
		{Name: "top", Partitions: []OffsetDeleteResponsePartition{{0, 0}, {5, 86}}},
	}})

	// A group-level error answers with no topics.
	checkBytes(t, wire(int16(69), int32(0), int32(0)), 0, false, &OffsetDeleteResponse{ErrorCode: 69})
}

// TestOffsetDeleteHostileLength checks that a huge topic count in a short
// input fails without allocating for it.
func TestOffsetDeleteHostileLength(t *testing.T) {
	b := wire(int16(0), int32(0), int32(0x7fffffff), int16(1), "t")
	var r OffsetDeleteResponse
	if err := r.Decode(NewDecoder(b, false), 0); err == nil {
		t.Fatal("decoding a 2^31-topic response from 9 bytes succeeded")
	}
	b = wire(int16(1), "g", int32(1), int16(1), "t", int32(1000000), int32(0))
	var q OffsetDeleteRequest
	if err := q.Decode(NewDecoder(b, false), 0); err == nil {
		t.Fatal("decoding a 10^6-partition request from 4 bytes succeeded")
	}
}
