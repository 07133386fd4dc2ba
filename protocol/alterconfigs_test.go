package protocol

import "testing"

func alterConfigsSample(v int16) (Request, Response) {
	req := &AlterConfigsRequest{
		Resources: []AlterConfigsRequestResource{
			{ResourceType: 2, ResourceName: "orders", Configs: []AlterConfigsRequestConfig{
				{Name: "retention.ms", Value: strp("3600000")},
				{Name: "cleanup.policy", Value: nil},
			}},
			{ResourceType: 4, ResourceName: "1"}, // no configs: reset every key
		},
		ValidateOnly: true,
	}
	resp := &AlterConfigsResponse{
		ThrottleTimeMs: 3,
		Responses: []AlterConfigsResponseResource{
			{ResourceType: 2, ResourceName: "orders"},
			{ErrorCode: 40, ErrorMessage: strp("bad value"), ResourceType: 4, ResourceName: "1"},
		},
	}
	return req, resp
}

func TestAlterConfigsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(AlterConfigsRequest) }, alterConfigsSample)
}

func TestAlterConfigsBytes(t *testing.T) {
	// v0: classic encoding.
	checkBytes(t, wire(
		int32(1),                 // resources
		byte(2), int16(3), "foo", // topic foo
		int32(2),                                    // configs
		int16(12), "retention.ms", int16(4), "1000", // set
		int16(14), "cleanup.policy", int16(-1), // null value
		byte(0), // validate only
	), 0, false, &AlterConfigsRequest{
		Resources: []AlterConfigsRequestResource{{ResourceType: 2, ResourceName: "foo", Configs: []AlterConfigsRequestConfig{
			{Name: "retention.ms", Value: strp("1000")},
			{Name: "cleanup.policy"},
		}}},
	})
	checkBytes(t, wire(
		int32(7), // throttle
		int32(1), int16(44), int16(-1), byte(4), int16(1), "2",
	), 1, false, &AlterConfigsResponse{
		ThrottleTimeMs: 7,
		Responses:      []AlterConfigsResponseResource{{ErrorCode: 44, ResourceType: 4, ResourceName: "2"}},
	})

	// v2: compact lengths (n+1) and a tags byte closing every struct.
	checkBytes(t, wire(
		byte(2),                 // 1 resource
		byte(2), byte(4), "foo", // topic foo
		byte(2),                                    // 1 config
		byte(13), "retention.ms", byte(1), byte(0), // "" value, tags
		byte(0),          // resource tags
		byte(1), byte(0), // validate only, tags
	), 2, true, &AlterConfigsRequest{
		Resources: []AlterConfigsRequestResource{{ResourceType: 2, ResourceName: "foo", Configs: []AlterConfigsRequestConfig{
			{Name: "retention.ms", Value: strp("")},
		}}},
		ValidateOnly: true,
	})
	checkBytes(t, wire(
		int32(0),
		byte(2), int16(0), byte(0), byte(2), byte(4), "foo", byte(0), // no error, null message
		byte(0),
	), 2, true, &AlterConfigsResponse{
		Responses: []AlterConfigsResponseResource{{ResourceType: 2, ResourceName: "foo"}},
	})
}

func TestAlterConfigsHostileLength(t *testing.T) {
	// A response claiming 1<<30 results in a few bytes must fail at once.
	b := wire(int32(0), int32(1<<30), int16(0))
	if err := new(AlterConfigsResponse).Decode(NewDecoder(b, false), 0); err == nil {
		t.Fatal("expected an error for 1<<30 results in 10 bytes")
	}
}
