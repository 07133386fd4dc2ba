package protocol

import (
	"bytes"
	"testing"
)

// groupSamples builds sample messages of every group and SASL API at a
// version.
var groupSamples = []sample{
	{"FindCoordinator", func() Request { return new(FindCoordinatorRequest) }, findCoordinatorSample},
	{"JoinGroup", func() Request { return new(JoinGroupRequest) }, joinGroupSample},
	{"SyncGroup", func() Request { return new(SyncGroupRequest) }, syncGroupSample},
	{"Heartbeat", func() Request { return new(HeartbeatRequest) }, heartbeatSample},
	{"LeaveGroup", func() Request { return new(LeaveGroupRequest) }, leaveGroupSample},
	{"OffsetCommit", func() Request { return new(OffsetCommitRequest) }, offsetCommitSample},
	{"OffsetFetch", func() Request { return new(OffsetFetchRequest) }, offsetFetchSample},
	{"DescribeGroups", func() Request { return new(DescribeGroupsRequest) }, describeGroupsSample},
	{"ListGroups", func() Request { return new(ListGroupsRequest) }, listGroupsSample},
	{"SaslHandshake", func() Request { return new(SaslHandshakeRequest) }, saslHandshakeSample},
	{"SaslAuthenticate", func() Request { return new(SaslAuthenticateRequest) }, saslAuthenticateSample},
}

func findCoordinatorSample(v int16) (Request, Response) {
	req := &FindCoordinatorRequest{KeyType: CoordinatorKeyTypeTransaction}
	resp := &FindCoordinatorResponse{ThrottleTimeMs: 3}
	if v < 4 {
		req.CoordinatorKey = "txn-1"
		resp.ErrorCode = 15
		resp.ErrorMessage = strp("not available")
		resp.NodeID, resp.Host, resp.Port = 2, "broker-2", 9093
	} else {
		req.CoordinatorKeys = []string{"txn-1", "txn-2"}
		resp.Coordinators = []FindCoordinatorResponseCoordinator{
			{CoordinatorKey: "txn-1", NodeID: 1, Host: "broker-1", Port: 9092},
			{CoordinatorKey: "txn-2", NodeID: -1, Host: "", Port: -1, ErrorCode: 15, ErrorMessage: strp("loading")},
		}
	}
	return req, resp
}

func joinGroupSample(v int16) (Request, Response) {
	req := &JoinGroupRequest{
		GroupID:            "group",
		SessionTimeoutMs:   30000,
		RebalanceTimeoutMs: 60000,
		MemberID:           "member-1",
		ProtocolType:       "consumer",
		Protocols: []JoinGroupRequestProtocol{
			{Name: "range", Metadata: []byte{0, 1, 2}},
			{Name: "cooperative-sticky", Metadata: []byte{3}},
		},
	}
	resp := &JoinGroupResponse{
		ThrottleTimeMs: 4,
		ErrorCode:      0,
		GenerationID:   7,
		ProtocolName:   "range",
		Leader:         "member-1",
		MemberID:       "member-1",
		Members: []JoinGroupResponseMember{
			{MemberID: "member-1", Metadata: []byte{0, 1, 2}},
			{MemberID: "member-2", Metadata: []byte{9}},
		},
	}
	if v >= 5 {
		req.GroupInstanceID = strp("instance-1")
		resp.Members[0].GroupInstanceID = strp("instance-1")
	}
	if v >= 7 {
		resp.ProtocolType = strp("consumer")
	}
	if v >= 8 {
		req.Reason = strp("rejoining")
	}
	if v >= 9 {
		resp.SkipAssignment = true
	}
	return req, resp
}

func syncGroupSample(v int16) (Request, Response) {
	req := &SyncGroupRequest{
		GroupID:      "group",
		GenerationID: 7,
		MemberID:     "member-1",
		Assignments: []SyncGroupRequestAssignment{
			{MemberID: "member-1", Assignment: []byte{1, 2}},
			{MemberID: "member-2", Assignment: []byte{3}},
		},
	}
	resp := &SyncGroupResponse{ErrorCode: 27, Assignment: []byte{1, 2}}
	if v >= 1 {
		resp.ThrottleTimeMs = 6
	}
	if v >= 3 {
		req.GroupInstanceID = strp("instance-1")
	}
	if v >= 5 {
		req.ProtocolType, req.ProtocolName = strp("consumer"), strp("range")
		resp.ProtocolType, resp.ProtocolName = strp("consumer"), strp("range")
	}
	return req, resp
}

func heartbeatSample(v int16) (Request, Response) {
	req := &HeartbeatRequest{GroupID: "group", GenerationID: 7, MemberID: "member-1"}
	resp := &HeartbeatResponse{ErrorCode: 27}
	if v >= 1 {
		resp.ThrottleTimeMs = 8
	}
	if v >= 3 {
		req.GroupInstanceID = strp("instance-1")
	}
	return req, resp
}

func leaveGroupSample(v int16) (Request, Response) {
	req := &LeaveGroupRequest{GroupID: "group"}
	resp := &LeaveGroupResponse{ErrorCode: 0}
	if v >= 1 {
		resp.ThrottleTimeMs = 9
	}
	if v < 3 {
		req.MemberID = "member-1"
	} else {
		req.Members = []LeaveGroupRequestMember{
			{MemberID: "member-1"},
			{MemberID: "", GroupInstanceID: strp("instance-2")},
		}
		resp.Members = []LeaveGroupResponseMember{
			{MemberID: "member-1", ErrorCode: 0},
			{MemberID: "member-2", GroupInstanceID: strp("instance-2"), ErrorCode: 25},
		}
		if v >= 5 {
			req.Members[0].Reason = strp("shutting down")
		}
	}
	return req, resp
}

func offsetCommitSample(v int16) (Request, Response) {
	req := &OffsetCommitRequest{
		GroupID:      "group",
		GenerationID: 7,
		MemberID:     "member-1",
		Topics: []OffsetCommitRequestTopic{
			{Name: "t1", Partitions: []OffsetCommitRequestPartition{
				{PartitionIndex: 0, CommittedOffset: 100, CommittedMetadata: strp("meta")},
				{PartitionIndex: 1, CommittedOffset: 1 << 40},
			}},
			{Name: "t2"},
		},
	}
	resp := &OffsetCommitResponse{
		Topics: []OffsetCommitResponseTopic{
			{Name: "t1", Partitions: []OffsetCommitResponsePartition{{0, 0}, {1, 22}}},
			{Name: "t2"},
		},
	}
	if v <= 4 {
		req.RetentionTimeMs = 86400000
	}
	if v >= 3 {
		resp.ThrottleTimeMs = 10
	}
	if v >= 6 {
		req.Topics[0].Partitions[0].CommittedLeaderEpoch = 5
		req.Topics[0].Partitions[1].CommittedLeaderEpoch = -1
	}
	if v >= 7 {
		req.GroupInstanceID = strp("instance-1")
	}
	return req, resp
}

func offsetFetchSample(v int16) (Request, Response) {
	topics := []OffsetFetchRequestTopic{{Name: "t1", PartitionIndexes: []int32{0, 1, 2}}, {Name: "t2"}}
	partitions := func() []OffsetFetchResponsePartition {
		ps := []OffsetFetchResponsePartition{
			{PartitionIndex: 0, CommittedOffset: 100, Metadata: strp("meta")},
			{PartitionIndex: 1, CommittedOffset: -1, ErrorCode: 3},
		}
		if v >= 5 {
			ps[0].CommittedLeaderEpoch = 4
			ps[1].CommittedLeaderEpoch = -1
		}
		return ps
	}
	req := &OffsetFetchRequest{}
	resp := &OffsetFetchResponse{}
	if v >= 3 {
		resp.ThrottleTimeMs = 11
	}
	if v < 8 {
		req.GroupID = "group"
		req.Topics = topics
		resp.Topics = []OffsetFetchResponseTopic{{Name: "t1", Partitions: partitions()}}
		if v >= 2 {
			resp.ErrorCode = 14
		}
	} else {
		req.Groups = []OffsetFetchRequestGroup{
			{GroupID: "g1", Topics: topics},
			{GroupID: "g2"}, // null topics: all of them
		}
		resp.Groups = []OffsetFetchResponseGroup{
			{GroupID: "g1", Topics: []OffsetFetchResponseTopic{{Name: "t1", Partitions: partitions()}}},
			{GroupID: "g2", ErrorCode: 16},
		}
		if v >= 9 {
			req.Groups[0].MemberID = strp("member-1")
			req.Groups[0].MemberEpoch = 3
			req.Groups[1].MemberEpoch = -1
		}
	}
	if v >= 7 {
		req.RequireStable = true
	}
	return req, resp
}

func describeGroupsSample(v int16) (Request, Response) {
	req := &DescribeGroupsRequest{Groups: []string{"g1", "g2"}}
	resp := &DescribeGroupsResponse{
		Groups: []DescribeGroupsResponseGroup{
			{
				GroupID: "g1", GroupState: "Stable", ProtocolType: "consumer", ProtocolData: "range",
				Members: []DescribeGroupsResponseMember{{
					MemberID: "member-1", ClientID: "client", ClientHost: "/10.0.0.1",
					MemberMetadata: []byte{1}, MemberAssignment: []byte{2, 3},
				}},
			},
			{ErrorCode: 16, GroupID: "g2"},
		},
	}
	if v >= 1 {
		resp.ThrottleTimeMs = 12
	}
	if v >= 3 {
		req.IncludeAuthorizedOperations = true
		resp.Groups[0].AuthorizedOperations = 0x1f8
		resp.Groups[1].AuthorizedOperations = -2147483648
	}
	if v >= 4 {
		resp.Groups[0].Members[0].GroupInstanceID = strp("instance-1")
	}
	return req, resp
}

func listGroupsSample(v int16) (Request, Response) {
	req := &ListGroupsRequest{}
	resp := &ListGroupsResponse{
		ErrorCode: 0,
		Groups:    []ListGroupsResponseGroup{{GroupID: "g1", ProtocolType: "consumer"}, {GroupID: "g2"}},
	}
	if v >= 1 {
		resp.ThrottleTimeMs = 13
	}
	if v >= 4 {
		req.StatesFilter = []string{"Stable", "Empty"}
		resp.Groups[0].GroupState = "Stable"
		resp.Groups[1].GroupState = "Empty"
	}
	return req, resp
}

func saslHandshakeSample(v int16) (Request, Response) {
	return &SaslHandshakeRequest{Mechanism: "SCRAM-SHA-512"},
		&SaslHandshakeResponse{ErrorCode: 33, Mechanisms: []string{"PLAIN", "SCRAM-SHA-256"}}
}

func saslAuthenticateSample(v int16) (Request, Response) {
	req := &SaslAuthenticateRequest{AuthBytes: []byte("\x00user\x00pass")}
	resp := &SaslAuthenticateResponse{ErrorCode: 58, ErrorMessage: strp("bad password"), AuthBytes: []byte("srv")}
	if v >= 1 {
		resp.SessionLifetimeMs = 3600000
	}
	return req, resp
}

func TestGroupMessagesRoundTrip(t *testing.T) {
	for _, s := range groupSamples {
		t.Run(s.name, func(t *testing.T) { roundTrip(t, s.newReq, s.build) })
	}
}

// TestGroupMessagesEmpty round-trips zero values (nil slices and pointers)
// at every version: nullable fields must survive as null, the others as
// their zero values.
func TestGroupMessagesEmpty(t *testing.T) {
	for _, s := range groupSamples {
		t.Run(s.name, func(t *testing.T) {
			roundTrip(t, s.newReq, func(v int16) (Request, Response) {
				req := s.newReq()
				return req, req.NewResponse()
			})
		})
	}
}

func TestGroupVersionRanges(t *testing.T) {
	want := map[ApiKey]VersionRange{
		FindCoordinator:  {1, 6},
		JoinGroup:        {2, 9},
		SyncGroup:        {0, 5},
		Heartbeat:        {0, 4},
		LeaveGroup:       {0, 5},
		OffsetCommit:     {2, 9},
		OffsetFetch:      {1, 9},
		DescribeGroups:   {0, 5},
		ListGroups:       {0, 4},
		SaslHandshake:    {1, 1},
		SaslAuthenticate: {0, 2},
	}
	got := Implemented()
	for k, r := range want {
		if got[k] != r {
			t.Errorf("%s: implemented %v, want %v", k, got[k], r)
		}
	}
}

// Hand-written bytes, following the Kafka protocol guide field by field.

func TestFindCoordinatorBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(3), "grp", // key: int16 length + bytes
		byte(0), // key_type: group
	), 1, false, &FindCoordinatorRequest{CoordinatorKey: "grp"})
	checkBytes(t, wire(
		byte(0),       // key_type
		byte(3),       // coordinator_keys: compact array, 2 elements
		byte(3), "g1", // compact string
		byte(3), "g2", //
		byte(0), // tagged fields
	), 4, true, &FindCoordinatorRequest{CoordinatorKeys: []string{"g1", "g2"}})
	checkBytes(t, wire(
		int32(0),  // throttle_time_ms
		int16(15), // error_code: COORDINATOR_NOT_AVAILABLE
		int16(-1), // error_message: null
		int32(-1), // node_id -1
		int16(0),  // host ""
		int32(-1), // port -1
	), 2, false, &FindCoordinatorResponse{ErrorCode: 15, NodeID: -1, Port: -1})
	checkBytes(t, wire(
		int32(5),      // throttle_time_ms
		byte(2),       // coordinators: 1 element
		byte(3), "g1", // key
		int32(2),     // node_id
		byte(2), "h", // host
		int32(9092), // port 9092
		int16(0),    // error_code
		byte(0),     // error_message: null
		byte(0),     // coordinator tagged fields
		byte(0),     // tagged fields
	), 4, true, &FindCoordinatorResponse{ThrottleTimeMs: 5, Coordinators: []FindCoordinatorResponseCoordinator{
		{CoordinatorKey: "g1", NodeID: 2, Host: "h", Port: 9092},
	}})
}

func TestJoinGroupBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(1), "g", // group_id
		int32(30000),  // session_timeout_ms 30000
		int32(300000), // rebalance_timeout_ms 300000
		int16(0),      // member_id ""
		int16(-1),     // group_instance_id null
		int16(8), "consumer",
		int32(1),          // protocols: 1
		int16(5), "range", // name
		int32(2), []byte{1, 2}, // metadata: int32 length + bytes
	), 5, false, &JoinGroupRequest{
		GroupID: "g", SessionTimeoutMs: 30000, RebalanceTimeoutMs: 300000, ProtocolType: "consumer",
		Protocols: []JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{1, 2}}},
	})
	checkBytes(t, wire(
		int32(0),            // throttle_time_ms
		int16(0),            // error_code
		int32(3),            // generation_id
		byte(9), "consumer", // protocol_type: compact nullable string
		byte(6), "range", // protocol_name
		byte(3), "m1", // leader
		byte(1),       // skip_assignment
		byte(3), "m1", // member_id
		byte(2),       // members: 1
		byte(3), "m1", // member_id
		byte(0),           // group_instance_id null
		byte(2), byte(10), // metadata: compact bytes
		byte(0), // member tagged fields
		byte(0), // tagged fields
	), 9, true, &JoinGroupResponse{
		GenerationID: 3, ProtocolType: strp("consumer"), ProtocolName: "range", Leader: "m1",
		SkipAssignment: true, MemberID: "m1",
		Members: []JoinGroupResponseMember{{MemberID: "m1", Metadata: []byte{10}}},
	})
}

func TestSyncGroupBytes(t *testing.T) {
	checkBytes(t, wire(
		byte(2), "g",
		int32(3),
		byte(3), "m1",
		byte(0), // group_instance_id null
		byte(9), "consumer",
		byte(6), "range",
		byte(2), // assignments: 1
		byte(3), "m1",
		byte(3), []byte{0xaa, 0xbb},
		byte(0),
		byte(0),
	), 5, true, &SyncGroupRequest{
		GroupID: "g", GenerationID: 3, MemberID: "m1", ProtocolType: strp("consumer"), ProtocolName: strp("range"),
		Assignments: []SyncGroupRequestAssignment{{MemberID: "m1", Assignment: []byte{0xaa, 0xbb}}},
	})
	checkBytes(t, wire(
		int32(0), // throttle_time_ms
		int16(0), // error_code
		int32(2), []byte{0xaa, 0xbb},
	), 3, false, &SyncGroupResponse{Assignment: []byte{0xaa, 0xbb}})
}

func TestHeartbeatBytes(t *testing.T) {
	checkBytes(t, wire(
		byte(2), "g",
		int32(1),
		byte(3), "m1",
		byte(2), "i",
		byte(0),
	), 4, true, &HeartbeatRequest{GroupID: "g", GenerationID: 1, MemberID: "m1", GroupInstanceID: strp("i")})
	checkBytes(t, wire(int16(27)), 0, false, &HeartbeatResponse{ErrorCode: 27})
}

func TestLeaveGroupBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(1), "g",
		int16(2), "m1",
	), 2, false, &LeaveGroupRequest{GroupID: "g", MemberID: "m1"})
	checkBytes(t, wire(
		byte(2), "g",
		byte(2), // members: 1
		byte(3), "m1",
		byte(0), // group_instance_id null
		byte(4), "bye",
		byte(0),
		byte(0),
	), 5, true, &LeaveGroupRequest{GroupID: "g", Members: []LeaveGroupRequestMember{{MemberID: "m1", Reason: strp("bye")}}})
	checkBytes(t, wire(
		int32(0), // throttle
		int16(0), // error_code
		int32(1), // members: 1
		int16(2), "m1",
		int16(1), "i",
		int16(0),
	), 3, false, &LeaveGroupResponse{Members: []LeaveGroupResponseMember{{MemberID: "m1", GroupInstanceID: strp("i")}}})
}

func TestOffsetCommitBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(1), "g",
		int32(1), // generation_id
		int16(2), "m1",
		int64(-1), // retention_time_ms -1
		int32(1),  // topics: 1
		int16(1), "t",
		int32(1),  // partitions: 1
		int32(0),  // partition_index
		int64(42), // committed_offset
		int16(-1), // committed_metadata null
	), 2, false, &OffsetCommitRequest{
		GroupID: "g", GenerationID: 1, MemberID: "m1", RetentionTimeMs: -1,
		Topics: []OffsetCommitRequestTopic{{Name: "t", Partitions: []OffsetCommitRequestPartition{{PartitionIndex: 0, CommittedOffset: 42}}}},
	})
	checkBytes(t, wire(
		int32(0), // throttle_time_ms
		byte(2),  // topics: 1
		byte(2), "t",
		byte(2),  // partitions: 1
		int32(0), // partition_index
		int16(0), // error_code
		byte(0), byte(0), byte(0),
	), 8, true, &OffsetCommitResponse{Topics: []OffsetCommitResponseTopic{{Name: "t", Partitions: []OffsetCommitResponsePartition{{0, 0}}}}})
}

func TestOffsetFetchBytes(t *testing.T) {
	checkBytes(t, wire(
		int16(1), "g",
		int32(-1), // topics: null, all topics
	), 2, false, &OffsetFetchRequest{GroupID: "g"})
	checkBytes(t, wire(
		int16(1), "g",
		int32(0), // topics: not nullable before v2
	), 1, false, &OffsetFetchRequest{GroupID: "g"})
	checkBytes(t, wire(
		byte(2),      // groups: 1
		byte(2), "g", // group_id
		byte(0), // topics: null
		byte(0), // group tagged fields
		byte(1), // require_stable
		byte(0),
	), 8, true, &OffsetFetchRequest{Groups: []OffsetFetchRequestGroup{{GroupID: "g"}}, RequireStable: true})
	checkBytes(t, wire(
		int32(0), // throttle_time_ms
		int32(1), // topics: 1
		int16(1), "t",
		int32(1), // partitions: 1
		int32(0),
		int64(42),     // committed_offset
		int32(5),      // committed_leader_epoch
		int16(1), "m", // metadata
		int16(3),  // error_code
		int16(16), // top-level error_code
	), 5, false, &OffsetFetchResponse{Topics: []OffsetFetchResponseTopic{{Name: "t", Partitions: []OffsetFetchResponsePartition{
		{PartitionIndex: 0, CommittedOffset: 42, CommittedLeaderEpoch: 5, Metadata: strp("m"), ErrorCode: 3},
	}}}, ErrorCode: 16})
}

func TestDescribeGroupsBytes(t *testing.T) {
	checkBytes(t, wire(
		byte(2), byte(2), "g",
		byte(1),
		byte(0),
	), 5, true, &DescribeGroupsRequest{Groups: []string{"g"}, IncludeAuthorizedOperations: true})
	checkBytes(t, wire(
		int32(0), // throttle
		int32(1), // groups: 1
		int16(0), // error_code
		int16(1), "g",
		int16(6), "Stable",
		int16(8), "consumer",
		int16(5), "range",
		int32(1), // members: 1
		int16(2), "m1",
		int16(-1), // group_instance_id null
		int16(1), "c",
		int16(1), "h",
		int32(0),           // member_metadata: empty
		int32(0),           // member_assignment: empty
		int32(-2147483648), // authorized_operations: INT32_MIN
	), 4, false, &DescribeGroupsResponse{Groups: []DescribeGroupsResponseGroup{{
		GroupID: "g", GroupState: "Stable", ProtocolType: "consumer", ProtocolData: "range",
		Members:              []DescribeGroupsResponseMember{{MemberID: "m1", ClientID: "c", ClientHost: "h", MemberMetadata: nil, MemberAssignment: nil}},
		AuthorizedOperations: -2147483648,
	}}})
}

func TestListGroupsBytes(t *testing.T) {
	checkBytes(t, wire(
		byte(2), byte(7), "Stable",
		byte(0),
	), 4, true, &ListGroupsRequest{StatesFilter: []string{"Stable"}})
	checkBytes(t, nil, 2, false, &ListGroupsRequest{})
	checkBytes(t, wire(
		int32(0), // throttle
		int16(0), // error_code
		byte(2),  // groups: 1
		byte(2), "g",
		byte(9), "consumer",
		byte(0),
		byte(0),
	), 3, true, &ListGroupsResponse{Groups: []ListGroupsResponseGroup{{GroupID: "g", ProtocolType: "consumer"}}})
}

func TestSaslBytes(t *testing.T) {
	checkBytes(t, wire(int16(5), "PLAIN"), 1, false, &SaslHandshakeRequest{Mechanism: "PLAIN"})
	checkBytes(t, wire(
		int16(0),
		int32(2),
		int16(5), "PLAIN",
		int16(13), "SCRAM-SHA-256",
	), 1, false, &SaslHandshakeResponse{Mechanisms: []string{"PLAIN", "SCRAM-SHA-256"}})
	checkBytes(t, wire(
		[]byte{5, 0, 'u', 0, 'p'}, // compact bytes: length+1
		byte(0),
	), 2, true, &SaslAuthenticateRequest{AuthBytes: []byte("\x00u\x00p")})
	checkBytes(t, wire(
		int16(0),       // error_code
		int16(-1),      // error_message null
		int32(0),       // auth_bytes: empty
		int64(3600000), // session_lifetime_ms
	), 1, false, &SaslAuthenticateResponse{SessionLifetimeMs: 3600000})
}

// Non-nullable bytes must never go out as null, even when left nil.
func TestGroupNonNullableBytes(t *testing.T) {
	if b := encoded(&SaslAuthenticateRequest{}, 0, false); !bytes.Equal(b, wire(int32(0))) {
		t.Fatalf("nil auth bytes encoded as % x", b)
	}
	// throttle, error code, empty compact bytes, tags
	if b := encoded(&SyncGroupResponse{}, 4, true); !bytes.Equal(b, wire(int32(0), int16(0), byte(1), byte(0))) {
		t.Fatalf("nil assignment encoded as % x", b)
	}
}

func FuzzGroupMessages(f *testing.F) {
	seedSamples(f, groupSamples, true)
	for _, s := range consumerSubscriptions() {
		f.Add(s.AppendTo(nil))
	}
	f.Add((&ConsumerProtocolAssignment{Version: 3, AssignedPartitions: []ConsumerProtocolTopicPartitions{{"t", []int32{1}}}}).AppendTo(nil))

	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSamples(t, data, groupSamples, true)
		var s ConsumerProtocolSubscription
		if s.Decode(data) == nil {
			s.AppendTo(nil)
		}
		var a ConsumerProtocolAssignment
		if a.Decode(data) == nil {
			a.AppendTo(nil)
		}
	})
}
