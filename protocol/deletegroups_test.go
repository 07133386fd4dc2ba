package protocol

import "testing"

func deleteGroupsSample(v int16) (Request, Response) {
	req := &DeleteGroupsRequest{GroupsNames: []string{"g1", "g2"}}
	resp := &DeleteGroupsResponse{
		ThrottleTimeMs: 11,
		Results: []DeleteGroupsResponseResult{
			{GroupID: "g1"},
			{GroupID: "g2", ErrorCode: 68},
		},
	}
	return req, resp
}

func TestDeleteGroupsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DeleteGroupsRequest) }, deleteGroupsSample)
	roundTrip(t, func() Request { return new(DeleteGroupsRequest) }, func(v int16) (Request, Response) {
		return &DeleteGroupsRequest{}, &DeleteGroupsResponse{}
	})
}

func TestDeleteGroupsBytes(t *testing.T) {
	// v1 request: int32 array length, int16 string lengths.
	checkBytes(t, wire(int32(2), int16(2), "g1", int16(3), "grp"), 1, false,
		&DeleteGroupsRequest{GroupsNames: []string{"g1", "grp"}})
	// v2 request: compact array and strings (length+1), then empty tags.
	checkBytes(t, wire(byte(2), byte(2), "g", byte(0)), 2, true,
		&DeleteGroupsRequest{GroupsNames: []string{"g"}})

	// v0 response: throttle, array of (group id, error code).
	checkBytes(t, wire(int32(5), int32(1), int16(1), "g", int16(69)), 0, false,
		&DeleteGroupsResponse{ThrottleTimeMs: 5, Results: []DeleteGroupsResponseResult{{GroupID: "g", ErrorCode: 69}}})
	// v2 response: each result and the body end with empty tags.
	checkBytes(t, wire(int32(0), byte(3), byte(2), "a", int16(0), byte(0), byte(2), "b", int16(68), byte(0), byte(0)), 2, true,
		&DeleteGroupsResponse{Results: []DeleteGroupsResponseResult{{GroupID: "a"}, {GroupID: "b", ErrorCode: 68}}})
}

func TestDeleteGroupsHostileLength(t *testing.T) {
	// A result count far beyond the bytes present must fail, not allocate.
	b := wire(int32(0), int32(1<<30), int16(1), "g", int16(0))
	var r DeleteGroupsResponse
	if err := r.Decode(NewDecoder(b, false), 1); err == nil {
		t.Fatal("expected an error for 2^30 results in a few bytes")
	}
	if r.Results != nil {
		t.Fatalf("results allocated for a hostile length: %d", len(r.Results))
	}
}

func TestDeleteGroupsRegistered(t *testing.T) {
	if r := NewRequest(DeleteGroups); r == nil || r.Key() != 42 {
		t.Fatalf("DeleteGroups not registered: %v", r)
	}
	if s := DeleteGroups.String(); s != "DeleteGroups" {
		t.Fatalf("DeleteGroups.String() = %q", s)
	}
}
