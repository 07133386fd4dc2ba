package fakebroker_test

import (
	"bytes"
	"testing"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

func joinReq(memberID string) *protocol.JoinGroupRequest {
	return &protocol.JoinGroupRequest{
		GroupID: "g", SessionTimeoutMs: 10000, RebalanceTimeoutMs: 60000, MemberID: memberID,
		ProtocolType: "consumer",
		Protocols:    []protocol.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte("meta-" + memberID)}},
	}
}

// join joins with a fresh member id (KIP-394 round trip) and returns it.
func newMemberID(t *testing.T, cl *rawClient) string {
	t.Helper()
	r := cl.roundTrip(joinReq(""), 9).(*protocol.JoinGroupResponse)
	if r.ErrorCode != 79 || r.MemberID == "" {
		t.Fatalf("first join: %+v", r)
	}
	return r.MemberID
}

func TestGroupLifecycle(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic("t", 2, 1)
	coord := c.Broker(1)

	fc := dial(t, c.Broker(2).Addr()).roundTrip(&protocol.FindCoordinatorRequest{CoordinatorKeys: []string{"g"}}, 4).(*protocol.FindCoordinatorResponse)
	if co := fc.Coordinators[0]; co.ErrorCode != 0 || co.NodeID != 1 || co.Port != coord.Port() {
		t.Fatalf("FindCoordinator v4: %+v", fc)
	}
	if r := dial(t, c.Broker(2).Addr()).roundTrip(joinReq(""), 9).(*protocol.JoinGroupResponse); r.ErrorCode != 16 {
		t.Fatalf("join on a non-coordinator: %+v", r)
	}

	a := dial(t, coord.Addr())
	aID := newMemberID(t, a)
	ja := a.roundTrip(joinReq(aID), 9).(*protocol.JoinGroupResponse)
	if ja.ErrorCode != 0 || ja.GenerationID != 1 || ja.Leader != aID || len(ja.Members) != 1 || ja.ProtocolName != "range" {
		t.Fatalf("join A: %+v", ja)
	}
	sa := a.roundTrip(&protocol.SyncGroupRequest{GroupID: "g", GenerationID: 1, MemberID: aID,
		Assignments: []protocol.SyncGroupRequestAssignment{{MemberID: aID, Assignment: []byte("all")}}}, 5).(*protocol.SyncGroupResponse)
	if sa.ErrorCode != 0 || string(sa.Assignment) != "all" {
		t.Fatalf("sync A: %+v", sa)
	}
	hb := &protocol.HeartbeatRequest{GroupID: "g", GenerationID: 1, MemberID: aID}
	if r := a.roundTrip(hb, 4).(*protocol.HeartbeatResponse); r.ErrorCode != 0 {
		t.Fatalf("heartbeat: %+v", r)
	}

	// B joins: its JoinGroup waits until A rejoins, which A learns from
	// its heartbeat.
	bc := dial(t, coord.Addr())
	bID := newMemberID(t, bc)
	bJoin := bc.send(joinReq(bID), 9)
	for i := 0; ; i++ {
		r := a.roundTrip(hb, 4).(*protocol.HeartbeatResponse)
		if r.ErrorCode == 27 {
			break
		}
		if r.ErrorCode != 0 || i > 10000 {
			t.Fatalf("heartbeat while B joins: %+v", r)
		}
	}
	ja = a.roundTrip(joinReq(aID), 9).(*protocol.JoinGroupResponse)
	resp, err := bc.recv(joinReq(bID), 9, bJoin)
	if err != nil {
		t.Fatal(err)
	}
	jb := resp.(*protocol.JoinGroupResponse)
	if ja.GenerationID != 2 || jb.GenerationID != 2 || ja.Leader != aID || jb.Leader != aID || len(ja.Members) != 2 || jb.Members != nil {
		t.Fatalf("rejoin:\nA %+v\nB %+v", ja, jb)
	}
	if !bytes.Equal(ja.Members[1].Metadata, []byte("meta-"+bID)) {
		t.Fatalf("leader sees B's metadata %q", ja.Members[1].Metadata)
	}

	// B's SyncGroup waits for the leader's.
	bSync := &protocol.SyncGroupRequest{GroupID: "g", GenerationID: 2, MemberID: bID}
	bSyncCorr := bc.send(bSync, 3)
	<-coord.Await(protocol.SyncGroup, 2)
	a.roundTrip(&protocol.SyncGroupRequest{GroupID: "g", GenerationID: 2, MemberID: aID, Assignments: []protocol.SyncGroupRequestAssignment{
		{MemberID: aID, Assignment: []byte("p0")}, {MemberID: bID, Assignment: []byte("p1")},
	}}, 3)
	resp, err = bc.recv(bSync, 3, bSyncCorr)
	if err != nil {
		t.Fatal(err)
	}
	if sb := resp.(*protocol.SyncGroupResponse); sb.ErrorCode != 0 || string(sb.Assignment) != "p1" {
		t.Fatalf("sync B: %+v", sb)
	}

	// Offsets: a commit from the current generation sticks, a stale one is fenced.
	commit := func(gen int32, off int64) int16 {
		r := a.roundTrip(&protocol.OffsetCommitRequest{GroupID: "g", GenerationID: gen, MemberID: aID, RetentionTimeMs: -1,
			Topics: []protocol.OffsetCommitRequestTopic{{Name: "t", Partitions: []protocol.OffsetCommitRequestPartition{{PartitionIndex: 1, CommittedOffset: off, CommittedLeaderEpoch: -1}}}}}, 8).(*protocol.OffsetCommitResponse)
		return r.Topics[0].Partitions[0].ErrorCode
	}
	if code := commit(2, 42); code != 0 {
		t.Fatalf("commit: %d", code)
	}
	if code := commit(1, 7); code != 22 {
		t.Fatalf("stale commit: %d", code)
	}
	if off, ok := c.Committed("g", "t", 1); !ok || off != 42 {
		t.Fatalf("Committed = %d, %v", off, ok)
	}
	of := a.roundTrip(&protocol.OffsetFetchRequest{GroupID: "g", Topics: []protocol.OffsetFetchRequestTopic{{Name: "t", PartitionIndexes: []int32{0, 1}}}}, 7).(*protocol.OffsetFetchResponse)
	if ps := of.Topics[0].Partitions; ps[0].CommittedOffset != -1 || ps[1].CommittedOffset != 42 {
		t.Fatalf("offset fetch v7: %+v", of)
	}
	of = a.roundTrip(&protocol.OffsetFetchRequest{Groups: []protocol.OffsetFetchRequestGroup{{GroupID: "g", MemberEpoch: -1}}}, 8).(*protocol.OffsetFetchResponse)
	if g := of.Groups[0]; g.ErrorCode != 0 || len(g.Topics) != 1 || g.Topics[0].Partitions[0].CommittedOffset != 42 {
		t.Fatalf("offset fetch v8, all topics: %+v", of)
	}

	// B leaves: A is told to rejoin and gets generation 3 alone.
	lv := bc.roundTrip(&protocol.LeaveGroupRequest{GroupID: "g", Members: []protocol.LeaveGroupRequestMember{{MemberID: bID}}}, 5).(*protocol.LeaveGroupResponse)
	if lv.ErrorCode != 0 || lv.Members[0].ErrorCode != 0 {
		t.Fatalf("leave: %+v", lv)
	}
	hb.GenerationID = 2
	if r := a.roundTrip(hb, 4).(*protocol.HeartbeatResponse); r.ErrorCode != 27 {
		t.Fatalf("heartbeat after leave: %+v", r)
	}
	if ja = a.roundTrip(joinReq(aID), 9).(*protocol.JoinGroupResponse); ja.GenerationID != 3 || len(ja.Members) != 1 {
		t.Fatalf("rejoin alone: %+v", ja)
	}
	if r := a.roundTrip(hb, 4).(*protocol.HeartbeatResponse); r.ErrorCode != 22 {
		t.Fatalf("heartbeat with an old generation: %+v", r)
	}
}

func TestStandaloneCommit(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{})
	c.CreateTopic("t", 1, 1)
	c.Commit("g", "t", 0, 5)
	cl := dial(t, c.Broker(1).Addr())
	r := cl.roundTrip(&protocol.OffsetCommitRequest{GroupID: "g", GenerationID: -1, RetentionTimeMs: -1,
		Topics: []protocol.OffsetCommitRequestTopic{{Name: "t", Partitions: []protocol.OffsetCommitRequestPartition{{PartitionIndex: 0, CommittedOffset: 9}}}, {Name: "x", Partitions: []protocol.OffsetCommitRequestPartition{{}}}}}, 2).(*protocol.OffsetCommitResponse)
	if r.Topics[0].Partitions[0].ErrorCode != 0 || r.Topics[1].Partitions[0].ErrorCode != 3 {
		t.Fatalf("commit: %+v", r)
	}
	if off, _ := c.Committed("g", "t", 0); off != 9 {
		t.Fatalf("Committed = %d", off)
	}
}
