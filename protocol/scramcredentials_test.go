package protocol

import "testing"

func describeUserScramCredentialsSample(v int16) (Request, Response) {
	req := &DescribeUserScramCredentialsRequest{Users: []string{"alice", "bob"}}
	resp := &DescribeUserScramCredentialsResponse{
		ThrottleTimeMs: 2,
		Results: []DescribeUserScramCredentialsResponseResult{
			{User: "alice", CredentialInfos: []DescribeUserScramCredentialsResponseCredential{{Mechanism: 1, Iterations: 4096}, {Mechanism: 2, Iterations: 8192}}},
			{User: "bob", ErrorCode: 91, ErrorMessage: strp("no such user")},
		},
	}
	return req, resp
}

func alterUserScramCredentialsSample(v int16) (Request, Response) {
	req := &AlterUserScramCredentialsRequest{
		Deletions: []AlterUserScramCredentialsRequestDeletion{{Name: "bob", Mechanism: 2}},
		Upsertions: []AlterUserScramCredentialsRequestUpsertion{
			{Name: "alice", Mechanism: 1, Iterations: 4096, Salt: []byte("salt"), SaltedPassword: []byte{1, 2, 3, 4}},
		},
	}
	resp := &AlterUserScramCredentialsResponse{
		ThrottleTimeMs: 1,
		Results: []AlterUserScramCredentialsResponseResult{
			{User: "alice"},
			{User: "bob", ErrorCode: 96, ErrorMessage: strp("no credential")},
		},
	}
	return req, resp
}

func TestDescribeUserScramCredentialsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(DescribeUserScramCredentialsRequest) }, describeUserScramCredentialsSample)
	// nil Users (every user) stays nil.
	roundTrip(t, func() Request { return new(DescribeUserScramCredentialsRequest) }, func(v int16) (Request, Response) {
		return &DescribeUserScramCredentialsRequest{}, &DescribeUserScramCredentialsResponse{ErrorCode: 29}
	})
}

func TestAlterUserScramCredentialsRoundTrip(t *testing.T) {
	roundTrip(t, func() Request { return new(AlterUserScramCredentialsRequest) }, alterUserScramCredentialsSample)
}

func TestScramCredentialsApiNames(t *testing.T) {
	if DescribeUserScramCredentials.String() != "DescribeUserScramCredentials" || AlterUserScramCredentials.String() != "AlterUserScramCredentials" {
		t.Errorf("names: %s, %s", DescribeUserScramCredentials, AlterUserScramCredentials)
	}
}

func TestAlterUserScramCredentialsBytes(t *testing.T) {
	// v0 is flexible: compact lengths are n+1.
	checkBytes(t, wire(
		byte(2), byte(4), "bob", int8(2), byte(0), // delete bob's SCRAM-SHA-512
		byte(2), byte(6), "alice", int8(1), int32(4096), // upsert alice's SCRAM-SHA-256
		byte(4), "abc", byte(3), []byte{1, 2}, byte(0),
		byte(0),
	), 0, true, &AlterUserScramCredentialsRequest{
		Deletions:  []AlterUserScramCredentialsRequestDeletion{{Name: "bob", Mechanism: 2}},
		Upsertions: []AlterUserScramCredentialsRequestUpsertion{{Name: "alice", Mechanism: 1, Iterations: 4096, Salt: []byte("abc"), SaltedPassword: []byte{1, 2}}},
	})
	checkBytes(t, wire(
		int32(0), byte(2), byte(6), "alice", int16(0), byte(0), byte(0), byte(0),
	), 0, true, &AlterUserScramCredentialsResponse{Results: []AlterUserScramCredentialsResponseResult{{User: "alice"}}})
}

func TestDescribeUserScramCredentialsBytes(t *testing.T) {
	checkBytes(t, wire(byte(2), byte(6), "alice", byte(0), byte(0)), 0, true,
		&DescribeUserScramCredentialsRequest{Users: []string{"alice"}})
	// null users: all of them.
	checkBytes(t, wire(byte(0), byte(0)), 0, true, &DescribeUserScramCredentialsRequest{})
	checkBytes(t, wire(
		int32(0), int16(0), byte(0), // throttle, ok, null message
		byte(2), byte(6), "alice", int16(0), byte(0),
		byte(2), int8(1), int32(8192), byte(0),
		byte(0),
		byte(0),
	), 0, true, &DescribeUserScramCredentialsResponse{Results: []DescribeUserScramCredentialsResponseResult{
		{User: "alice", CredentialInfos: []DescribeUserScramCredentialsResponseCredential{{Mechanism: 1, Iterations: 8192}}},
	}})
}
