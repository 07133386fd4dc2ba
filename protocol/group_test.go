package protocol

import (
	"bytes"
	"reflect"
	"testing"
)

func grpStr(s string) *string { return &s }

// groupBuilders maps each group/SASL request constructor to a builder of
// golden values, shared by the round-trip tests and the fuzz seeds.
var groupBuilders = []struct {
	name   string
	newReq func() Request
	build  func(v int16) (Request, Response)
}{
	{"FindCoordinator", func() Request { return new(FindCoordinatorRequest) }, grpBuildFindCoordinator},
	{"JoinGroup", func() Request { return new(JoinGroupRequest) }, grpBuildJoinGroup},
	{"SyncGroup", func() Request { return new(SyncGroupRequest) }, grpBuildSyncGroup},
	{"Heartbeat", func() Request { return new(HeartbeatRequest) }, grpBuildHeartbeat},
	{"LeaveGroup", func() Request { return new(LeaveGroupRequest) }, grpBuildLeaveGroup},
	{"OffsetCommit", func() Request { return new(OffsetCommitRequest) }, grpBuildOffsetCommit},
	{"OffsetFetch", func() Request { return new(OffsetFetchRequest) }, grpBuildOffsetFetch},
	{"DescribeGroups", func() Request { return new(DescribeGroupsRequest) }, grpBuildDescribeGroups},
	{"ListGroups", func() Request { return new(ListGroupsRequest) }, grpBuildListGroups},
	{"SaslHandshake", func() Request { return new(SaslHandshakeRequest) }, grpBuildSaslHandshake},
	{"SaslAuthenticate", func() Request { return new(SaslAuthenticateRequest) }, grpBuildSaslAuthenticate},
}

func grpBuildFindCoordinator(v int16) (Request, Response) {
	req := &FindCoordinatorRequest{KeyType: CoordinatorKeyTypeTransaction}
	resp := &FindCoordinatorResponse{ThrottleTimeMs: 3}
	if v < 4 {
		req.CoordinatorKey = "txn-1"
		resp.ErrorCode = 15
		resp.ErrorMessage = grpStr("not available")
		resp.NodeID, resp.Host, resp.Port = 2, "broker-2", 9093
	} else {
		req.CoordinatorKeys = []string{"txn-1", "txn-2"}
		resp.Coordinators = []FindCoordinatorResponseCoordinator{
			{CoordinatorKey: "txn-1", NodeID: 1, Host: "broker-1", Port: 9092},
			{CoordinatorKey: "txn-2", NodeID: -1, Host: "", Port: -1, ErrorCode: 15, ErrorMessage: grpStr("loading")},
		}
	}
	return req, resp
}

func grpBuildJoinGroup(v int16) (Request, Response) {
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
		req.GroupInstanceID = grpStr("instance-1")
		resp.Members[0].GroupInstanceID = grpStr("instance-1")
	}
	if v >= 7 {
		resp.ProtocolType = grpStr("consumer")
	}
	if v >= 8 {
		req.Reason = grpStr("rejoining")
	}
	if v >= 9 {
		resp.SkipAssignment = true
	}
	return req, resp
}

func grpBuildSyncGroup(v int16) (Request, Response) {
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
		req.GroupInstanceID = grpStr("instance-1")
	}
	if v >= 5 {
		req.ProtocolType, req.ProtocolName = grpStr("consumer"), grpStr("range")
		resp.ProtocolType, resp.ProtocolName = grpStr("consumer"), grpStr("range")
	}
	return req, resp
}

func grpBuildHeartbeat(v int16) (Request, Response) {
	req := &HeartbeatRequest{GroupID: "group", GenerationID: 7, MemberID: "member-1"}
	resp := &HeartbeatResponse{ErrorCode: 27}
	if v >= 1 {
		resp.ThrottleTimeMs = 8
	}
	if v >= 3 {
		req.GroupInstanceID = grpStr("instance-1")
	}
	return req, resp
}

func grpBuildLeaveGroup(v int16) (Request, Response) {
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
			{MemberID: "", GroupInstanceID: grpStr("instance-2")},
		}
		resp.Members = []LeaveGroupResponseMember{
			{MemberID: "member-1", ErrorCode: 0},
			{MemberID: "member-2", GroupInstanceID: grpStr("instance-2"), ErrorCode: 25},
		}
		if v >= 5 {
			req.Members[0].Reason = grpStr("shutting down")
		}
	}
	return req, resp
}

func grpBuildOffsetCommit(v int16) (Request, Response) {
	req := &OffsetCommitRequest{
		GroupID:      "group",
		GenerationID: 7,
		MemberID:     "member-1",
		Topics: []OffsetCommitRequestTopic{
			{Name: "t1", Partitions: []OffsetCommitRequestPartition{
				{PartitionIndex: 0, CommittedOffset: 100, CommittedMetadata: grpStr("meta")},
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
		req.GroupInstanceID = grpStr("instance-1")
	}
	return req, resp
}

func grpBuildOffsetFetch(v int16) (Request, Response) {
	topics := []OffsetFetchRequestTopic{{Name: "t1", PartitionIndexes: []int32{0, 1, 2}}, {Name: "t2"}}
	partitions := func() []OffsetFetchResponsePartition {
		ps := []OffsetFetchResponsePartition{
			{PartitionIndex: 0, CommittedOffset: 100, Metadata: grpStr("meta")},
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
			req.Groups[0].MemberID = grpStr("member-1")
			req.Groups[0].MemberEpoch = 3
			req.Groups[1].MemberEpoch = -1
		}
	}
	if v >= 7 {
		req.RequireStable = true
	}
	return req, resp
}

func grpBuildDescribeGroups(v int16) (Request, Response) {
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
		resp.Groups[0].Members[0].GroupInstanceID = grpStr("instance-1")
	}
	return req, resp
}

func grpBuildListGroups(v int16) (Request, Response) {
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

func grpBuildSaslHandshake(v int16) (Request, Response) {
	return &SaslHandshakeRequest{Mechanism: "SCRAM-SHA-512"},
		&SaslHandshakeResponse{ErrorCode: 33, Mechanisms: []string{"PLAIN", "SCRAM-SHA-256"}}
}

func grpBuildSaslAuthenticate(v int16) (Request, Response) {
	req := &SaslAuthenticateRequest{AuthBytes: []byte("\x00user\x00pass")}
	resp := &SaslAuthenticateResponse{ErrorCode: 58, ErrorMessage: grpStr("bad password"), AuthBytes: []byte("srv")}
	if v >= 1 {
		resp.SessionLifetimeMs = 3600000
	}
	return req, resp
}

func TestGroupMessagesRoundTrip(t *testing.T) {
	for _, b := range groupBuilders {
		t.Run(b.name, func(t *testing.T) { roundTrip(t, b.newReq, b.build) })
	}
}

// TestGroupMessagesEmpty round-trips zero values (nil slices and pointers)
// at every version: nullable fields must survive as null, the others as
// their zero values.
func TestGroupMessagesEmpty(t *testing.T) {
	for _, b := range groupBuilders {
		t.Run(b.name, func(t *testing.T) {
			roundTrip(t, b.newReq, func(v int16) (Request, Response) {
				req := b.newReq()
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

func grpCat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
func grpB(bs ...byte) []byte        { return bs }
func grpASCII(s string) []byte      { return []byte(s) }

// checkBytes encodes m at version v and compares with want, then decodes
// want into a fresh value of m's type and compares with m.
func grpCheckBytes(t *testing.T, m Message, v int16, flexible bool, want []byte) {
	t.Helper()
	e := Encoder{Flexible: flexible}
	m.Encode(&e, v)
	if !bytes.Equal(e.B, want) {
		t.Errorf("%T v%d encoded:\n got % x\nwant % x", m, v, e.B, want)
	}
	got := reflect.New(reflect.TypeOf(m).Elem()).Interface().(Message)
	d := NewDecoder(want, flexible)
	if err := got.Decode(d, v); err != nil {
		t.Fatalf("%T v%d decode: %v", m, v, err)
	}
	if d.Remaining() != 0 {
		t.Errorf("%T v%d: %d bytes left", m, v, d.Remaining())
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("%T v%d decoded:\n got %+v\nwant %+v", m, v, got, m)
	}
}

func TestFindCoordinatorBytes(t *testing.T) {
	grpCheckBytes(t, &FindCoordinatorRequest{CoordinatorKey: "grp"}, 1, false, grpCat(
		grpB(0, 3), grpASCII("grp"), // key: int16 length + bytes
		grpB(0), // key_type: group
	))
	grpCheckBytes(t, &FindCoordinatorRequest{CoordinatorKeys: []string{"g1", "g2"}}, 4, true, grpCat(
		grpB(0),                 // key_type
		grpB(3),                 // coordinator_keys: compact array, 2 elements
		grpB(3), grpASCII("g1"), // compact string
		grpB(3), grpASCII("g2"), //
		grpB(0), // tagged fields
	))
	grpCheckBytes(t, &FindCoordinatorResponse{ErrorCode: 15, NodeID: -1, Port: -1}, 2, false, grpCat(
		grpB(0, 0, 0, 0),             // throttle_time_ms
		grpB(0, 15),                  // error_code: COORDINATOR_NOT_AVAILABLE
		grpB(0xff, 0xff),             // error_message: null
		grpB(0xff, 0xff, 0xff, 0xff), // node_id -1
		grpB(0, 0),                   // host ""
		grpB(0xff, 0xff, 0xff, 0xff), // port -1
	))
	grpCheckBytes(t, &FindCoordinatorResponse{ThrottleTimeMs: 5, Coordinators: []FindCoordinatorResponseCoordinator{
		{CoordinatorKey: "g1", NodeID: 2, Host: "h", Port: 9092},
	}}, 4, true, grpCat(
		grpB(0, 0, 0, 5),        // throttle_time_ms
		grpB(2),                 // coordinators: 1 element
		grpB(3), grpASCII("g1"), // key
		grpB(0, 0, 0, 2),       // node_id
		grpB(2), grpASCII("h"), // host
		grpB(0, 0, 0x23, 0x84), // port 9092
		grpB(0, 0),             // error_code
		grpB(0),                // error_message: null
		grpB(0),                // coordinator tagged fields
		grpB(0),                // tagged fields
	))
}

func TestJoinGroupBytes(t *testing.T) {
	grpCheckBytes(t, &JoinGroupRequest{
		GroupID: "g", SessionTimeoutMs: 30000, RebalanceTimeoutMs: 300000, ProtocolType: "consumer",
		Protocols: []JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{1, 2}}},
	}, 5, false, grpCat(
		grpB(0, 1), grpASCII("g"), // group_id
		grpB(0, 0, 0x75, 0x30),    // session_timeout_ms 30000
		grpB(0, 0x04, 0x93, 0xe0), // rebalance_timeout_ms 300000
		grpB(0, 0),                // member_id ""
		grpB(0xff, 0xff),          // group_instance_id null
		grpB(0, 8), grpASCII("consumer"),
		grpB(0, 0, 0, 1),              // protocols: 1
		grpB(0, 5), grpASCII("range"), // name
		grpB(0, 0, 0, 2, 1, 2), // metadata: int32 length + bytes
	))
	grpCheckBytes(t, &JoinGroupResponse{
		GenerationID: 3, ProtocolType: grpStr("consumer"), ProtocolName: "range", Leader: "m1",
		SkipAssignment: true, MemberID: "m1",
		Members: []JoinGroupResponseMember{{MemberID: "m1", Metadata: []byte{10}}},
	}, 9, true, grpCat(
		grpB(0, 0, 0, 0),              // throttle_time_ms
		grpB(0, 0),                    // error_code
		grpB(0, 0, 0, 3),              // generation_id
		grpB(9), grpASCII("consumer"), // protocol_type: compact nullable string
		grpB(6), grpASCII("range"), // protocol_name
		grpB(3), grpASCII("m1"), // leader
		grpB(1),                 // skip_assignment
		grpB(3), grpASCII("m1"), // member_id
		grpB(2),                 // members: 1
		grpB(3), grpASCII("m1"), // member_id
		grpB(0),     // group_instance_id null
		grpB(2, 10), // metadata: compact bytes
		grpB(0),     // member tagged fields
		grpB(0),     // tagged fields
	))
}

func TestSyncGroupBytes(t *testing.T) {
	grpCheckBytes(t, &SyncGroupRequest{
		GroupID: "g", GenerationID: 3, MemberID: "m1", ProtocolType: grpStr("consumer"), ProtocolName: grpStr("range"),
		Assignments: []SyncGroupRequestAssignment{{MemberID: "m1", Assignment: []byte{0xaa, 0xbb}}},
	}, 5, true, grpCat(
		grpB(2), grpASCII("g"),
		grpB(0, 0, 0, 3),
		grpB(3), grpASCII("m1"),
		grpB(0), // group_instance_id null
		grpB(9), grpASCII("consumer"),
		grpB(6), grpASCII("range"),
		grpB(2), // assignments: 1
		grpB(3), grpASCII("m1"),
		grpB(3, 0xaa, 0xbb),
		grpB(0),
		grpB(0),
	))
	grpCheckBytes(t, &SyncGroupResponse{Assignment: []byte{0xaa, 0xbb}}, 3, false, grpCat(
		grpB(0, 0, 0, 0), // throttle_time_ms
		grpB(0, 0),       // error_code
		grpB(0, 0, 0, 2, 0xaa, 0xbb),
	))
}

func TestHeartbeatBytes(t *testing.T) {
	grpCheckBytes(t, &HeartbeatRequest{GroupID: "g", GenerationID: 1, MemberID: "m1", GroupInstanceID: grpStr("i")}, 4, true, grpCat(
		grpB(2), grpASCII("g"),
		grpB(0, 0, 0, 1),
		grpB(3), grpASCII("m1"),
		grpB(2), grpASCII("i"),
		grpB(0),
	))
	grpCheckBytes(t, &HeartbeatResponse{ErrorCode: 27}, 0, false, grpB(0, 27))
}

func TestLeaveGroupBytes(t *testing.T) {
	grpCheckBytes(t, &LeaveGroupRequest{GroupID: "g", MemberID: "m1"}, 2, false, grpCat(
		grpB(0, 1), grpASCII("g"),
		grpB(0, 2), grpASCII("m1"),
	))
	grpCheckBytes(t, &LeaveGroupRequest{GroupID: "g", Members: []LeaveGroupRequestMember{{MemberID: "m1", Reason: grpStr("bye")}}}, 5, true, grpCat(
		grpB(2), grpASCII("g"),
		grpB(2), // members: 1
		grpB(3), grpASCII("m1"),
		grpB(0), // group_instance_id null
		grpB(4), grpASCII("bye"),
		grpB(0),
		grpB(0),
	))
	grpCheckBytes(t, &LeaveGroupResponse{Members: []LeaveGroupResponseMember{{MemberID: "m1", GroupInstanceID: grpStr("i")}}}, 3, false, grpCat(
		grpB(0, 0, 0, 0), // throttle
		grpB(0, 0),       // error_code
		grpB(0, 0, 0, 1), // members: 1
		grpB(0, 2), grpASCII("m1"),
		grpB(0, 1), grpASCII("i"),
		grpB(0, 0),
	))
}

func TestOffsetCommitBytes(t *testing.T) {
	grpCheckBytes(t, &OffsetCommitRequest{
		GroupID: "g", GenerationID: 1, MemberID: "m1", RetentionTimeMs: -1,
		Topics: []OffsetCommitRequestTopic{{Name: "t", Partitions: []OffsetCommitRequestPartition{{PartitionIndex: 0, CommittedOffset: 42}}}},
	}, 2, false, grpCat(
		grpB(0, 1), grpASCII("g"),
		grpB(0, 0, 0, 1), // generation_id
		grpB(0, 2), grpASCII("m1"),
		grpB(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), // retention_time_ms -1
		grpB(0, 0, 0, 1), // topics: 1
		grpB(0, 1), grpASCII("t"),
		grpB(0, 0, 0, 1),              // partitions: 1
		grpB(0, 0, 0, 0),              // partition_index
		grpB(0, 0, 0, 0, 0, 0, 0, 42), // committed_offset
		grpB(0xff, 0xff),              // committed_metadata null
	))
	grpCheckBytes(t, &OffsetCommitResponse{Topics: []OffsetCommitResponseTopic{{Name: "t", Partitions: []OffsetCommitResponsePartition{{0, 0}}}}}, 8, true, grpCat(
		grpB(0, 0, 0, 0), // throttle_time_ms
		grpB(2),          // topics: 1
		grpB(2), grpASCII("t"),
		grpB(2),          // partitions: 1
		grpB(0, 0, 0, 0), // partition_index
		grpB(0, 0),       // error_code
		grpB(0), grpB(0), grpB(0),
	))
}

func TestOffsetFetchBytes(t *testing.T) {
	grpCheckBytes(t, &OffsetFetchRequest{GroupID: "g"}, 2, false, grpCat(
		grpB(0, 1), grpASCII("g"),
		grpB(0xff, 0xff, 0xff, 0xff), // topics: null, all topics
	))
	grpCheckBytes(t, &OffsetFetchRequest{GroupID: "g"}, 1, false, grpCat(
		grpB(0, 1), grpASCII("g"),
		grpB(0, 0, 0, 0), // topics: not nullable before v2
	))
	grpCheckBytes(t, &OffsetFetchRequest{Groups: []OffsetFetchRequestGroup{{GroupID: "g"}}, RequireStable: true}, 8, true, grpCat(
		grpB(2),                // groups: 1
		grpB(2), grpASCII("g"), // group_id
		grpB(0), // topics: null
		grpB(0), // group tagged fields
		grpB(1), // require_stable
		grpB(0),
	))
	grpCheckBytes(t, &OffsetFetchResponse{Topics: []OffsetFetchResponseTopic{{Name: "t", Partitions: []OffsetFetchResponsePartition{
		{PartitionIndex: 0, CommittedOffset: 42, CommittedLeaderEpoch: 5, Metadata: grpStr("m"), ErrorCode: 3},
	}}}, ErrorCode: 16}, 5, false, grpCat(
		grpB(0, 0, 0, 0), // throttle_time_ms
		grpB(0, 0, 0, 1), // topics: 1
		grpB(0, 1), grpASCII("t"),
		grpB(0, 0, 0, 1), // partitions: 1
		grpB(0, 0, 0, 0),
		grpB(0, 0, 0, 0, 0, 0, 0, 42), // committed_offset
		grpB(0, 0, 0, 5),              // committed_leader_epoch
		grpB(0, 1), grpASCII("m"),     // metadata
		grpB(0, 3),  // error_code
		grpB(0, 16), // top-level error_code
	))
}

func TestDescribeGroupsBytes(t *testing.T) {
	grpCheckBytes(t, &DescribeGroupsRequest{Groups: []string{"g"}, IncludeAuthorizedOperations: true}, 5, true, grpCat(
		grpB(2), grpB(2), grpASCII("g"),
		grpB(1),
		grpB(0),
	))
	grpCheckBytes(t, &DescribeGroupsResponse{Groups: []DescribeGroupsResponseGroup{{
		GroupID: "g", GroupState: "Stable", ProtocolType: "consumer", ProtocolData: "range",
		Members:              []DescribeGroupsResponseMember{{MemberID: "m1", ClientID: "c", ClientHost: "h", MemberMetadata: nil, MemberAssignment: nil}},
		AuthorizedOperations: -2147483648,
	}}}, 4, false, grpCat(
		grpB(0, 0, 0, 0), // throttle
		grpB(0, 0, 0, 1), // groups: 1
		grpB(0, 0),       // error_code
		grpB(0, 1), grpASCII("g"),
		grpB(0, 6), grpASCII("Stable"),
		grpB(0, 8), grpASCII("consumer"),
		grpB(0, 5), grpASCII("range"),
		grpB(0, 0, 0, 1), // members: 1
		grpB(0, 2), grpASCII("m1"),
		grpB(0xff, 0xff), // group_instance_id null
		grpB(0, 1), grpASCII("c"),
		grpB(0, 1), grpASCII("h"),
		grpB(0, 0, 0, 0),    // member_metadata: empty
		grpB(0, 0, 0, 0),    // member_assignment: empty
		grpB(0x80, 0, 0, 0), // authorized_operations: INT32_MIN
	))
}

func TestListGroupsBytes(t *testing.T) {
	grpCheckBytes(t, &ListGroupsRequest{StatesFilter: []string{"Stable"}}, 4, true, grpCat(
		grpB(2), grpB(7), grpASCII("Stable"),
		grpB(0),
	))
	grpCheckBytes(t, &ListGroupsRequest{}, 2, false, nil)
	grpCheckBytes(t, &ListGroupsResponse{Groups: []ListGroupsResponseGroup{{GroupID: "g", ProtocolType: "consumer"}}}, 3, true, grpCat(
		grpB(0, 0, 0, 0), // throttle
		grpB(0, 0),       // error_code
		grpB(2),          // groups: 1
		grpB(2), grpASCII("g"),
		grpB(9), grpASCII("consumer"),
		grpB(0),
		grpB(0),
	))
}

func TestSaslBytes(t *testing.T) {
	grpCheckBytes(t, &SaslHandshakeRequest{Mechanism: "PLAIN"}, 1, false, grpCat(grpB(0, 5), grpASCII("PLAIN")))
	grpCheckBytes(t, &SaslHandshakeResponse{Mechanisms: []string{"PLAIN", "SCRAM-SHA-256"}}, 1, false, grpCat(
		grpB(0, 0),
		grpB(0, 0, 0, 2),
		grpB(0, 5), grpASCII("PLAIN"),
		grpB(0, 13), grpASCII("SCRAM-SHA-256"),
	))
	grpCheckBytes(t, &SaslAuthenticateRequest{AuthBytes: []byte("\x00u\x00p")}, 2, true, grpCat(
		grpB(5, 0, 'u', 0, 'p'), // compact bytes: length+1
		grpB(0),
	))
	grpCheckBytes(t, &SaslAuthenticateResponse{SessionLifetimeMs: 3600000}, 1, false, grpCat(
		grpB(0, 0),                            // error_code
		grpB(0xff, 0xff),                      // error_message null
		grpB(0, 0, 0, 0),                      // auth_bytes: empty
		grpB(0, 0, 0, 0, 0, 0x36, 0xee, 0x80), // session_lifetime_ms
	))
}

// Non-nullable bytes must never go out as null, even when left nil.
func TestGroupNonNullableBytes(t *testing.T) {
	e := Encoder{}
	(&SaslAuthenticateRequest{}).Encode(&e, 0)
	if !bytes.Equal(e.B, grpB(0, 0, 0, 0)) {
		t.Fatalf("nil auth bytes encoded as % x", e.B)
	}
	e = Encoder{Flexible: true}
	(&SyncGroupResponse{}).Encode(&e, 4)
	if !bytes.Equal(e.B, grpB(0, 0, 0, 0, 0, 0, 1, 0)) {
		t.Fatalf("nil assignment encoded as % x", e.B)
	}
}

func FuzzGroupMessages(f *testing.F) {
	for _, gb := range groupBuilders {
		proto := gb.newReq()
		for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
			req, resp := gb.build(v)
			e := Encoder{Flexible: IsFlexible(req, v)}
			resp.Encode(&e, v)
			f.Add(e.B)
			e.B = nil
			req.Encode(&e, v)
			f.Add(e.B)
		}
	}
	for _, s := range grpSubscriptions() {
		f.Add(s.AppendTo(nil))
	}
	f.Add((&ConsumerProtocolAssignment{Version: 3, AssignedPartitions: []ConsumerProtocolTopicPartitions{{"t", []int32{1}}}}).AppendTo(nil))

	f.Fuzz(func(t *testing.T, data []byte) {
		for _, gb := range groupBuilders {
			proto := gb.newReq()
			for v := proto.MinVersion(); v <= proto.MaxVersion(); v++ {
				flexible := IsFlexible(proto, v)
				resp := proto.NewResponse()
				if resp.Decode(NewDecoder(data, flexible), v) == nil {
					// Whatever decoded must encode again.
					resp.Encode(&Encoder{Flexible: flexible}, v)
				}
				req := gb.newReq()
				if req.Decode(NewDecoder(data, flexible), v) == nil {
					req.Encode(&Encoder{Flexible: flexible}, v)
				}
			}
		}
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
