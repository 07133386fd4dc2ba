package kafka

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A member driven through the Client against the fake's coordinator model
// (broker 2 of 3): the KIP-394 member id dance, the leader's SyncGroup,
// heartbeats and leaving. Every request reaches the coordinator only.
func TestClientGroupsMembershipFake(t *testing.T) {
	c, client := clientGroupsFake(t, 3, 2)
	ctx := clientGroupsCtx(t)
	join := &JoinGroupRequest{
		GroupID:          "members",
		SessionTimeout:   30 * time.Second,
		RebalanceTimeout: 5 * time.Second,
		ProtocolType:     "consumer",
		Protocols: []GroupProtocol{
			{Name: "range", Metadata: GroupProtocolSubscription{
				Topics:          []string{"t1", "t2"},
				UserData:        []byte("ud"),
				OwnedPartitions: map[string][]int{"t2": {3}, "t1": {1, 0}},
			}},
			{Name: "roundrobin", Metadata: GroupProtocolSubscription{Topics: []string{"t1"}}},
		},
	}
	first, err := client.JoinGroup(ctx, join)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(first.Error, MemberIDRequired) || first.MemberID == "" {
		t.Fatalf("first join: error %v, member %q; want MemberIDRequired and an id", first.Error, first.MemberID)
	}
	join.MemberID = first.MemberID
	joined, err := client.JoinGroup(ctx, join)
	if err != nil || joined.Error != nil {
		t.Fatalf("second join: %+v, %v", joined, err)
	}
	if joined.MemberID != first.MemberID || joined.LeaderID != joined.MemberID || joined.ProtocolName != "range" ||
		joined.ProtocolType != "consumer" || joined.GenerationID != 1 {
		t.Errorf("second join: %+v", joined)
	}
	wantMembers := []JoinGroupResponseMember{{ID: joined.MemberID, Metadata: GroupProtocolSubscription{
		Topics: []string{"t1", "t2"}, UserData: []byte("ud"), OwnedPartitions: map[string][]int{"t1": {1, 0}, "t2": {3}},
	}}}
	if !reflect.DeepEqual(joined.Members, wantMembers) {
		t.Errorf("members %+v, want %+v", joined.Members, wantMembers)
	}

	// What went on the wire: consumer protocol v1, topics of owned
	// partitions in order, no static id.
	rs := c.Broker(2).Received(protocol.JoinGroup)
	if len(rs) != 2 {
		t.Fatalf("coordinator got %d JoinGroup requests", len(rs))
	}
	jr := rs[1].Request.(*protocol.JoinGroupRequest)
	if jr.GroupInstanceID != nil || jr.SessionTimeoutMs != 30000 || jr.RebalanceTimeoutMs != 5000 || len(jr.Protocols) != 2 {
		t.Errorf("JoinGroup sent %+v", jr)
	}
	var sub protocol.ConsumerProtocolSubscription
	if err := sub.Decode(jr.Protocols[0].Metadata); err != nil {
		t.Fatal(err)
	}
	wantSub := protocol.ConsumerProtocolSubscription{Version: 1, Topics: []string{"t1", "t2"}, UserData: []byte("ud"), GenerationID: -1,
		OwnedPartitions: []protocol.ConsumerProtocolTopicPartitions{{Topic: "t1", Partitions: []int32{1, 0}}, {Topic: "t2", Partitions: []int32{3}}}}
	if !reflect.DeepEqual(sub, wantSub) {
		t.Errorf("subscription sent %+v", sub)
	}

	synced, err := client.SyncGroup(ctx, &SyncGroupRequest{
		GroupID:      "members",
		GenerationID: joined.GenerationID,
		MemberID:     joined.MemberID,
		ProtocolType: "consumer",
		ProtocolName: "range",
		Assignments: []SyncGroupRequestAssignment{{MemberID: joined.MemberID, Assignment: GroupProtocolAssignment{
			AssignedPartitions: map[string][]int{"t2": {0, 1}, "t1": {2}},
			UserData:           []byte("au"),
		}}},
	})
	if err != nil || synced.Error != nil {
		t.Fatalf("SyncGroup: %+v, %v", synced, err)
	}
	wantAssignment := GroupProtocolAssignment{AssignedPartitions: map[string][]int{"t1": {2}, "t2": {0, 1}}, UserData: []byte("au")}
	if !reflect.DeepEqual(synced.Assignment, wantAssignment) || synced.ProtocolType != "consumer" || synced.ProtocolName != "range" {
		t.Errorf("SyncGroup: %+v", synced)
	}
	sr := c.Broker(2).Received(protocol.SyncGroup)[0].Request.(*protocol.SyncGroupRequest)
	if sr.GroupInstanceID != nil || deref(sr.ProtocolType) != "consumer" || deref(sr.ProtocolName) != "range" {
		t.Errorf("SyncGroup sent %+v", sr)
	}
	var as protocol.ConsumerProtocolAssignment
	if err := as.Decode(sr.Assignments[0].Assignment); err != nil || as.Version != 1 || as.AssignedPartitions[0].Topic != "t1" {
		t.Errorf("assignment sent %+v, %v", as, err)
	}

	hb, err := client.Heartbeat(ctx, &HeartbeatRequest{GroupID: "members", GenerationID: int32(joined.GenerationID), MemberID: joined.MemberID})
	if err != nil || hb.Error != nil {
		t.Errorf("Heartbeat: %+v, %v", hb, err)
	}
	hb, err = client.Heartbeat(ctx, &HeartbeatRequest{GroupID: "members", GenerationID: 99, MemberID: joined.MemberID})
	if err != nil || !errors.Is(hb.Error, IllegalGeneration) {
		t.Errorf("Heartbeat of a wrong generation: %+v, %v", hb, err)
	}

	left, err := client.LeaveGroup(ctx, &LeaveGroupRequest{GroupID: "members", Members: []LeaveGroupRequestMember{{ID: joined.MemberID}}})
	if err != nil || left.Error != nil || len(left.Members) != 1 || left.Members[0].ID != joined.MemberID || left.Members[0].Error != nil {
		t.Errorf("LeaveGroup: %+v, %v", left, err)
	}
	left, err = client.LeaveGroup(ctx, &LeaveGroupRequest{GroupID: "members", Members: []LeaveGroupRequestMember{{ID: joined.MemberID}, {ID: "other", GroupInstanceID: "static"}}})
	if err != nil || len(left.Members) != 2 || !errors.Is(left.Members[0].Error, UnknownMemberId) || left.Members[1].GroupInstanceID != "static" {
		t.Errorf("LeaveGroup again: %+v, %v", left, err)
	}

	for _, id := range []int32{1, 3} {
		for _, key := range []protocol.ApiKey{protocol.JoinGroup, protocol.SyncGroup, protocol.Heartbeat, protocol.LeaveGroup} {
			if n := c.Broker(id).Requests(key); n != 0 {
				t.Errorf("broker %d (not the coordinator) got %d %s", id, n, key)
			}
		}
	}
}

// Broker error codes land in the responses' Error fields; undecodable
// member data and unreachable coordinators fail the call.
func TestClientGroupsMembershipErrors(t *testing.T) {
	c, client := clientGroupsFake(t, 2, 1)
	ctx := clientGroupsCtx(t)
	co := c.Broker(1)

	co.ScriptNext(protocol.JoinGroup, fakebroker.Step{ErrorCode: 16})
	resp, err := client.JoinGroup(ctx, &JoinGroupRequest{GroupID: "g", ProtocolType: "consumer", Protocols: []GroupProtocol{{Name: "range"}}})
	if err != nil || !errors.Is(resp.Error, NotCoordinatorForGroup) {
		t.Errorf("JoinGroup answered NOT_COORDINATOR: %+v, %v", resp, err)
	}
	resp, err = client.JoinGroup(ctx, &JoinGroupRequest{GroupID: "g", ProtocolType: "consumer"})
	if err != nil || !errors.Is(resp.Error, InconsistentGroupProtocol) {
		t.Errorf("JoinGroup without protocols: %+v, %v", resp, err)
	}

	co.ScriptNext(protocol.JoinGroup, fakebroker.Step{Response: &protocol.JoinGroupResponse{
		GenerationID: 1, Leader: "m", MemberID: "m", Members: []protocol.JoinGroupResponseMember{{MemberID: "m", Metadata: []byte{0, 1, 0, 0}}},
	}})
	if _, err := client.JoinGroup(ctx, &JoinGroupRequest{GroupID: "g", ProtocolType: "consumer", Protocols: []GroupProtocol{{Name: "range"}}}); err == nil {
		t.Error("JoinGroup with truncated member metadata: no error")
	}
	// A member with no metadata is a member with an empty subscription.
	co.ScriptNext(protocol.JoinGroup, fakebroker.Step{Response: &protocol.JoinGroupResponse{
		GenerationID: 1, Leader: "m", MemberID: "m", Members: []protocol.JoinGroupResponseMember{{MemberID: "m", GroupInstanceID: clientGroupsStrPtr("i")}},
	}})
	resp, err = client.JoinGroup(ctx, &JoinGroupRequest{GroupID: "g", ProtocolType: "consumer", Protocols: []GroupProtocol{{Name: "range"}}})
	if err != nil || len(resp.Members) != 1 || resp.Members[0].GroupInstanceID != "i" || resp.Members[0].Metadata.OwnedPartitions == nil {
		t.Errorf("JoinGroup member without metadata: %+v, %v", resp, err)
	}

	sync := &SyncGroupRequest{GroupID: "nope", GenerationID: 1, MemberID: "m"}
	sresp, err := client.SyncGroup(ctx, sync)
	if err != nil || !errors.Is(sresp.Error, UnknownMemberId) || sresp.Assignment.AssignedPartitions == nil || len(sresp.Assignment.AssignedPartitions) != 0 {
		t.Errorf("SyncGroup of an unknown member: %+v, %v", sresp, err)
	}
	co.ScriptNext(protocol.SyncGroup, fakebroker.Step{Response: &protocol.SyncGroupResponse{Assignment: []byte{0, 0, 0, 0, 0, 9}}})
	if _, err := client.SyncGroup(ctx, sync); err == nil {
		t.Error("SyncGroup with a truncated assignment: no error")
	}

	hb, err := client.Heartbeat(ctx, &HeartbeatRequest{GroupID: "nope", MemberID: "m", GroupInstanceID: "static"})
	if err != nil || !errors.Is(hb.Error, UnknownMemberId) {
		t.Errorf("Heartbeat of an unknown member: %+v, %v", hb, err)
	}
	if r := co.Received(protocol.Heartbeat); deref(r[len(r)-1].Request.(*protocol.HeartbeatRequest).GroupInstanceID) != "static" {
		t.Error("Heartbeat did not send the group instance id")
	}

	co.ScriptNext(protocol.LeaveGroup, fakebroker.Step{Response: &protocol.LeaveGroupResponse{ErrorCode: 15}})
	left, err := client.LeaveGroup(ctx, &LeaveGroupRequest{GroupID: "g", Members: []LeaveGroupRequestMember{{ID: "m", GroupInstanceID: "i"}}})
	if err != nil || !errors.Is(left.Error, GroupCoordinatorNotAvailable) ||
		!reflect.DeepEqual(left.Members, []LeaveGroupResponseMember{{ID: "m", GroupInstanceID: "i"}}) {
		t.Errorf("LeaveGroup answered without members: %+v, %v", left, err)
	}

	for name, call := range map[string]func() error{
		"JoinGroup":  func() error { _, err := client.JoinGroup(ctx, nil); return err },
		"SyncGroup":  func() error { _, err := client.SyncGroup(ctx, nil); return err },
		"Heartbeat":  func() error { _, err := client.Heartbeat(ctx, nil); return err },
		"LeaveGroup": func() error { _, err := client.LeaveGroup(ctx, nil); return err },
		"no address": func() error {
			_, err := (&Client{}).Heartbeat(ctx, &HeartbeatRequest{GroupID: "g"})
			return err
		},
	} {
		if call() == nil {
			t.Errorf("%s: no error", name)
		}
	}

	// The coordinator is gone: the call fails, wrapping the cause.
	co.Stop()
	c2 := &Client{Addr: TCP(c.Broker(2).Addr()), Transport: &Transport{}}
	defer c2.Transport.(*Transport).CloseIdleConnections()
	if _, err := c2.Heartbeat(ctx, &HeartbeatRequest{GroupID: "g"}); err == nil {
		t.Error("Heartbeat to a stopped coordinator: no error")
	}
}

// Brokers older than Kafka 2.4 take one leaving member (LeaveGroup v0-2)
// and older than 2.2 join without the member id dance (JoinGroup v2-3).
func TestClientGroupsMembershipOldBrokers(t *testing.T) {
	c, _ := clientGroupsFake(t, 1, 1)
	c.Broker(1).SetMaxVersion(protocol.LeaveGroup, 2)
	c.Broker(1).SetMaxVersion(protocol.JoinGroup, 3)
	client := &Client{Addr: TCP(c.Addrs()...), Transport: &Transport{}}
	defer client.Transport.(*Transport).CloseIdleConnections()
	ctx := clientGroupsCtx(t)

	joined, err := client.JoinGroup(ctx, &JoinGroupRequest{GroupID: "old", ProtocolType: "consumer", RebalanceTimeout: time.Second,
		Protocols: []GroupProtocol{{Name: "range", Metadata: GroupProtocolSubscription{Topics: []string{"t"}}}}})
	if err != nil || joined.Error != nil || joined.MemberID == "" || joined.ProtocolType != "" {
		t.Fatalf("JoinGroup v3: %+v, %v", joined, err)
	}
	left, err := client.LeaveGroup(ctx, &LeaveGroupRequest{GroupID: "old", Members: []LeaveGroupRequestMember{{ID: joined.MemberID}}})
	if err != nil || left.Error != nil || !reflect.DeepEqual(left.Members, []LeaveGroupResponseMember{{ID: joined.MemberID}}) {
		t.Errorf("LeaveGroup v2: %+v, %v", left, err)
	}
	rs := c.Broker(1).Received(protocol.LeaveGroup)
	if r := rs[0].Request.(*protocol.LeaveGroupRequest); rs[0].Header.Version != 2 || r.MemberID != joined.MemberID {
		t.Errorf("LeaveGroup v%d sent %+v", rs[0].Header.Version, r)
	}
}

func clientGroupsStrPtr(s string) *string { return &s }

// Two members sharing one Client rebalance together: while the coordinator
// holds the second member's JoinGroup, the first one's heartbeat and rejoin
// still get through (the held request must not block the Client's other
// requests to the coordinator until the rebalance times out).
func TestClientGroupsTwoMembersOneClient(t *testing.T) {
	c, client := clientGroupsFake(t, 2, 2)
	ctx := clientGroupsCtx(t)
	co := c.Broker(2)
	join := func(id string) *JoinGroupResponse {
		t.Helper()
		r, err := client.JoinGroup(ctx, &JoinGroupRequest{GroupID: "two", MemberID: id, ProtocolType: "consumer",
			SessionTimeout: 30 * time.Second, RebalanceTimeout: 15 * time.Second,
			Protocols: []GroupProtocol{{Name: "range", Metadata: GroupProtocolSubscription{Topics: []string{"t"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a := join("")
	a = join(a.MemberID)
	if a.Error != nil || a.GenerationID != 1 {
		t.Fatalf("first member: %+v", a)
	}
	if s, err := client.SyncGroup(ctx, &SyncGroupRequest{GroupID: "two", GenerationID: a.GenerationID, MemberID: a.MemberID}); err != nil || s.Error != nil {
		t.Fatalf("first member's SyncGroup: %+v, %v", s, err)
	}

	b := join("")
	joins := co.Requests(protocol.JoinGroup)
	held := make(chan *JoinGroupResponse, 1)
	go func() {
		r, err := client.JoinGroup(ctx, &JoinGroupRequest{GroupID: "two", MemberID: b.MemberID, ProtocolType: "consumer",
			SessionTimeout: 30 * time.Second, RebalanceTimeout: 15 * time.Second,
			Protocols: []GroupProtocol{{Name: "range", Metadata: GroupProtocolSubscription{Topics: []string{"t"}}}}})
		if err != nil {
			t.Error(err)
		}
		held <- r
	}()
	<-co.Await(protocol.JoinGroup, joins+1) // the coordinator holds it

	// The coordinator counts the JoinGroup when it arrives and starts the
	// rebalance when it handles it: a heartbeat may get in between and
	// still find the group stable, so it asks until it does not (a round
	// trip each, no sleep).
	var hb *HeartbeatResponse
	var err error
	for i := 0; i < 1000; i++ {
		hb, err = client.Heartbeat(ctx, &HeartbeatRequest{GroupID: "two", GenerationID: int32(a.GenerationID), MemberID: a.MemberID})
		if err != nil || hb.Error != nil {
			break
		}
	}
	if err != nil || !errors.Is(hb.Error, RebalanceInProgress) {
		t.Fatalf("first member's heartbeat during the rebalance: %+v, %v; want RebalanceInProgress", hb, err)
	}
	a2 := join(a.MemberID)
	b2 := <-held
	if b2 == nil {
		t.FailNow()
	}
	if a2.Error != nil || b2.Error != nil || a2.GenerationID != 2 || b2.GenerationID != 2 || len(a2.Members) != 2 {
		t.Errorf("rejoined: %+v and %+v; want both in generation 2, the first leading", a2, b2)
	}
}
