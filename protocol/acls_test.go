package protocol

import "testing"

func describeAclsSample(v int16) (Request, Response) {
	req := &DescribeAclsRequest{
		ResourceTypeFilter: 2, ResourceNameFilter: strp("orders"), PatternTypeFilter: 3,
		PrincipalFilter: strp("User:alice"), HostFilter: nil, Operation: 3, PermissionType: 3,
	}
	resp := &DescribeAclsResponse{
		ThrottleTimeMs: 4,
		Resources: []DescribeAclsResponseResource{
			{ResourceType: 2, ResourceName: "orders", PatternType: 3, Acls: []DescribeAclsResponseAcl{
				{Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3},
				{Principal: "User:bob", Host: "10.0.0.1", Operation: 4, PermissionType: 2},
			}},
			{ResourceType: 3, ResourceName: "grp-", PatternType: 4},
		},
	}
	return req, resp
}

func createAclsSample(v int16) (Request, Response) {
	req := &CreateAclsRequest{Creations: []CreateAclsRequestCreation{
		{ResourceType: 2, ResourceName: "orders", ResourcePatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3},
		{ResourceType: 4, ResourceName: "kafka-cluster", ResourcePatternType: 3, Principal: "User:bob", Host: "10.0.0.1", Operation: 7, PermissionType: 2},
	}}
	resp := &CreateAclsResponse{ThrottleTimeMs: 1, Results: []CreateAclsResponseResult{
		{},
		{ErrorCode: 54, ErrorMessage: strp("no authorizer")},
	}}
	return req, resp
}

func deleteAclsSample(v int16) (Request, Response) {
	req := &DeleteAclsRequest{Filters: []DeleteAclsRequestFilter{
		{ResourceTypeFilter: 1, PatternTypeFilter: 1, Operation: 1, PermissionType: 1},
		{ResourceTypeFilter: 2, ResourceNameFilter: strp("orders"), PatternTypeFilter: 2, PrincipalFilter: strp("User:bob"), HostFilter: strp("*"), Operation: 4, PermissionType: 3},
	}}
	resp := &DeleteAclsResponse{ThrottleTimeMs: 2, FilterResults: []DeleteAclsResponseFilterResult{
		{MatchingAcls: []DeleteAclsResponseMatchingAcl{
			{ResourceType: 2, ResourceName: "orders", PatternType: 3, Principal: "User:bob", Host: "*", Operation: 4, PermissionType: 3},
			{ErrorCode: 31, ErrorMessage: strp("denied"), ResourceType: 3, ResourceName: "g", PatternType: 4, Principal: "User:x", Host: "h", Operation: 2, PermissionType: 2},
		}},
		{ErrorCode: 42, ErrorMessage: strp("bad filter")},
	}}
	return req, resp
}

func TestDescribeAclsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DescribeAclsRequest) }, describeAclsSample)
}

func TestCreateAclsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(CreateAclsRequest) }, createAclsSample)
}

func TestDeleteAclsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DeleteAclsRequest) }, deleteAclsSample)
}

func TestAclsApiNames(t *testing.T) {
	for k, want := range map[ApiKey]string{DescribeAcls: "DescribeAcls", CreateAcls: "CreateAcls", DeleteAcls: "DeleteAcls"} {
		if k.String() != want {
			t.Errorf("ApiKey %d is %q, want %q", int16(k), k.String(), want)
		}
		if NewRequest(k) == nil {
			t.Errorf("%s is not registered", want)
		}
	}
}

func TestCreateAclsBytes(t *testing.T) {
	// v1: classic encoding.
	checkBytes(t, wire(
		int32(1),                          // one creation
		int8(2), int16(3), "foo", int8(3), // topic "foo", literal
		int16(8), "User:bob", int16(1), "*",
		int8(3), int8(3), // read, allow
	), 1, false, &CreateAclsRequest{Creations: []CreateAclsRequestCreation{
		{ResourceType: 2, ResourceName: "foo", ResourcePatternType: 3, Principal: "User:bob", Host: "*", Operation: 3, PermissionType: 3},
	}})
	checkBytes(t, wire(
		int32(0),                   // throttle
		byte(3),                    // two results (compact)
		int16(0), byte(0), byte(0), // ok, null message, tags
		int16(54), byte(3), "no", byte(0),
		byte(0),
	), 2, true, &CreateAclsResponse{Results: []CreateAclsResponseResult{{}, {ErrorCode: 54, ErrorMessage: strp("no")}}})
}

func TestDescribeAclsBytes(t *testing.T) {
	// v2: flexible; null filters are compact length 0.
	checkBytes(t, wire(
		int8(2), byte(0), int8(3), // topic, any name, literal
		byte(11), "User:alice", byte(0), // principal, any host
		int8(1), int8(1), byte(0), // any operation, any permission, tags
	), 2, true, &DescribeAclsRequest{ResourceTypeFilter: 2, PatternTypeFilter: 3, PrincipalFilter: strp("User:alice"), Operation: 1, PermissionType: 1})
	checkBytes(t, wire(
		int32(0), int16(0), int16(-1), // throttle, no error, null message
		int32(1), int8(2), int16(3), "foo", int8(3), // topic foo, literal
		int32(1), int16(8), "User:bob", int16(1), "*", int8(3), int8(3),
	), 1, false, &DescribeAclsResponse{Resources: []DescribeAclsResponseResource{
		{ResourceType: 2, ResourceName: "foo", PatternType: 3, Acls: []DescribeAclsResponseAcl{{Principal: "User:bob", Host: "*", Operation: 3, PermissionType: 3}}},
	}})
	// The error a broker without an authorizer sends.
	checkBytes(t, wire(
		int32(0), int16(54), int16(4), "off!", int32(0),
	), 1, false, &DescribeAclsResponse{ErrorCode: 54, ErrorMessage: strp("off!")})
}

func TestDeleteAclsBytes(t *testing.T) {
	checkBytes(t, wire(
		byte(2),                   // one filter
		int8(1), byte(0), int8(1), // any type, any name, any pattern
		byte(0), byte(0), int8(1), int8(1), byte(0),
		byte(0),
	), 3, true, &DeleteAclsRequest{Filters: []DeleteAclsRequestFilter{{ResourceTypeFilter: 1, PatternTypeFilter: 1, Operation: 1, PermissionType: 1}}})
	checkBytes(t, wire(
		int32(0),
		byte(2), int16(0), byte(0), // one filter result, ok, null message
		byte(2), int16(0), byte(0), // one matching ACL, deleted
		int8(2), byte(4), "foo", int8(3),
		byte(9), "User:bob", byte(2), "*", int8(4), int8(2), byte(0),
		byte(0),
		byte(0),
	), 2, true, &DeleteAclsResponse{FilterResults: []DeleteAclsResponseFilterResult{{MatchingAcls: []DeleteAclsResponseMatchingAcl{
		{ResourceType: 2, ResourceName: "foo", PatternType: 3, Principal: "User:bob", Host: "*", Operation: 4, PermissionType: 2},
	}}}})
}
