package protocol

import (
	"math"
	"testing"
)

func describeClientQuotasSample(v int16) (Request, Response) {
	req := &DescribeClientQuotasRequest{
		Components: []DescribeClientQuotasRequestComponent{
			{EntityType: "user", MatchType: 0, Match: strp("alice")},
			{EntityType: "client-id", MatchType: 1},
		},
		Strict: true,
	}
	resp := &DescribeClientQuotasResponse{
		ThrottleTimeMs: 3,
		Entries: []DescribeClientQuotasResponseEntry{
			{
				Entity: []ClientQuotasEntity{{EntityType: "user", EntityName: strp("alice")}, {EntityType: "client-id"}},
				Values: []DescribeClientQuotasResponseValue{{Key: "producer_byte_rate", Value: 1024}, {Key: "request_percentage", Value: 12.5}},
			},
			{Entity: []ClientQuotasEntity{{EntityType: "ip", EntityName: strp("10.0.0.1")}}},
		},
	}
	return req, resp
}

func alterClientQuotasSample(v int16) (Request, Response) {
	req := &AlterClientQuotasRequest{
		Entries: []AlterClientQuotasRequestEntry{
			{
				Entity: []ClientQuotasEntity{{EntityType: "user", EntityName: strp("alice")}},
				Ops:    []AlterClientQuotasRequestOp{{Key: "producer_byte_rate", Value: 2048}, {Key: "consumer_byte_rate", Remove: true}},
			},
			{Entity: []ClientQuotasEntity{{EntityType: "client-id"}}},
		},
		ValidateOnly: true,
	}
	resp := &AlterClientQuotasResponse{
		ThrottleTimeMs: 9,
		Entries: []AlterClientQuotasResponseEntry{
			{Entity: []ClientQuotasEntity{{EntityType: "user", EntityName: strp("alice")}}},
			{ErrorCode: 42, ErrorMessage: strp("bad key"), Entity: []ClientQuotasEntity{{EntityType: "client-id"}}},
		},
	}
	return req, resp
}

func TestDescribeClientQuotasRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DescribeClientQuotasRequest) }, describeClientQuotasSample)
	// A failed describe carries a null Entries array.
	roundTrip(t, func() Request { return new(DescribeClientQuotasRequest) }, func(v int16) (Request, Response) {
		return &DescribeClientQuotasRequest{}, &DescribeClientQuotasResponse{ErrorCode: 42, ErrorMessage: strp("bad")}
	})
}

func TestAlterClientQuotasRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(AlterClientQuotasRequest) }, alterClientQuotasSample)
}

func TestClientQuotasApiNames(t *testing.T) {
	if DescribeClientQuotas.String() != "DescribeClientQuotas" || AlterClientQuotas.String() != "AlterClientQuotas" {
		t.Errorf("names: %s, %s", DescribeClientQuotas, AlterClientQuotas)
	}
}

func TestAlterClientQuotasBytes(t *testing.T) {
	// v0: classic encoding; float64 is the IEEE 754 bits, big-endian.
	checkBytes(t, wire(
		int32(1),                                      // one entry
		int32(1), int16(4), "user", int16(5), "alice", // entity user=alice
		int32(1), int16(18), "producer_byte_rate", int64(math.Float64bits(1024)), byte(0),
		byte(0), // validate only: no
	), 0, false, &AlterClientQuotasRequest{Entries: []AlterClientQuotasRequestEntry{{
		Entity: []ClientQuotasEntity{{EntityType: "user", EntityName: strp("alice")}},
		Ops:    []AlterClientQuotasRequestOp{{Key: "producer_byte_rate", Value: 1024}},
	}}})
	checkBytes(t, wire(
		int32(0), byte(2), // throttle, one entry
		int16(0), byte(0), // ok, null message
		byte(2), byte(5), "user", byte(0), byte(0), // user <default>
		byte(0), byte(0),
	), 1, true, &AlterClientQuotasResponse{Entries: []AlterClientQuotasResponseEntry{{
		Entity: []ClientQuotasEntity{{EntityType: "user"}},
	}}})
}

func TestDescribeClientQuotasBytes(t *testing.T) {
	checkBytes(t, wire(
		byte(2), byte(5), "user", int8(2), byte(0), byte(0), // any user
		byte(1), byte(0), // strict, tags
	), 1, true, &DescribeClientQuotasRequest{
		Components: []DescribeClientQuotasRequestComponent{{EntityType: "user", MatchType: 2}},
		Strict:     true,
	})
	checkBytes(t, wire(
		int32(0), int16(0), byte(0), // throttle, ok, null message
		byte(2),                                    // one entry
		byte(2), byte(5), "user", byte(0), byte(0), // user <default>
		byte(2), byte(19), "producer_byte_rate", int64(math.Float64bits(1.5)), byte(0),
		byte(0),
		byte(0),
	), 1, true, &DescribeClientQuotasResponse{Entries: []DescribeClientQuotasResponseEntry{{
		Entity: []ClientQuotasEntity{{EntityType: "user"}},
		Values: []DescribeClientQuotasResponseValue{{Key: "producer_byte_rate", Value: 1.5}},
	}}})
	// v0 error answer: null entries.
	checkBytes(t, wire(int32(0), int16(42), int16(1), "x", int32(-1)), 0, false,
		&DescribeClientQuotasResponse{ErrorCode: 42, ErrorMessage: strp("x")})
}
