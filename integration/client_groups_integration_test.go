package integration

// Integration tests of the Client's group methods on the real 3-rack
// cluster: a group driven entirely through the Client, a Reader's group
// described, and producer ids with and without a transactional id.

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

const cgroupsClientID = "client-groups-itest"

func cgroupsClient(t *testing.T, c *ktesting.Cluster) *kafka.Client {
	t.Helper()
	tr := &kafka.Transport{ClientID: cgroupsClientID}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 30 * time.Second, Transport: tr}
}

// cgroupsRetriable reports whether a coordinator error means "try again
// shortly" (coordinator topics being created or loaded, a coordinator
// moving).
func cgroupsRetriable(err error) bool {
	return errors.Is(err, kafka.GroupCoordinatorNotAvailable) || errors.Is(err, kafka.NotCoordinatorForGroup) ||
		errors.Is(err, kafka.GroupLoadInProgress) || errors.Is(err, kafka.ConcurrentTransactions)
}

// cgroupsDescribe describes one group, failing the test on any error.
func cgroupsDescribe(t *testing.T, ctx context.Context, client *kafka.Client, group string) kafka.DescribeGroupsResponseGroup {
	t.Helper()
	resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		t.Fatalf("DescribeGroups: %v", err)
	}
	if len(resp.Groups) != 1 || resp.Groups[0].GroupID != group || resp.Groups[0].Error != nil {
		t.Fatalf("DescribeGroups %s: %+v", group, resp.Groups)
	}
	return resp.Groups[0]
}

// cgroupsListed returns the coordinators listing group, by ListGroups.
func cgroupsListed(t *testing.T, ctx context.Context, client *kafka.Client, group string) []kafka.ListGroupsResponseGroup {
	t.Helper()
	resp, err := client.ListGroups(ctx, &kafka.ListGroupsRequest{})
	if err != nil || resp.Error != nil {
		t.Fatalf("ListGroups: %+v, %v", resp, err)
	}
	var out []kafka.ListGroupsResponseGroup
	for _, g := range resp.Groups {
		if g.GroupID == group {
			out = append(out, g)
		}
	}
	return out
}

func TestClientGroupsLifecycleIntegration(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 3})
	client := cgroupsClient(t, c)
	ctx := testContext(t, 45*time.Second)
	group := ktesting.UniqueTopic(t)
	t.Cleanup(func() {
		client.DeleteGroups(context.Background(), &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	})

	join := &kafka.JoinGroupRequest{
		GroupID:          group,
		SessionTimeout:   10 * time.Second,
		RebalanceTimeout: 10 * time.Second,
		ProtocolType:     "consumer",
		Protocols: []kafka.GroupProtocol{{Name: "range", Metadata: kafka.GroupProtocolSubscription{
			Topics:          []string{topic},
			UserData:        []byte("ud"),
			OwnedPartitions: map[string][]int{topic: {0}},
		}}},
	}
	// First join: the broker hands out a member id to come back with
	// (KIP-394). The group coordinator may still be loading on a fresh
	// cluster: retry those answers.
	var first *kafka.JoinGroupResponse
	eventually(t, 30*time.Second, "a first JoinGroup answered", func() bool {
		resp, err := client.JoinGroup(ctx, join)
		switch {
		case err != nil && cgroupsRetriable(err), err == nil && cgroupsRetriable(resp.Error):
			return false
		case err != nil:
			t.Fatalf("JoinGroup: %v", err)
		}
		first = resp
		return true
	})
	if !errors.Is(first.Error, kafka.MemberIDRequired) || first.MemberID == "" {
		t.Fatalf("first JoinGroup: %+v, want MemberIDRequired with a member id", first)
	}
	join.MemberID = first.MemberID
	joined, err := client.JoinGroup(ctx, join)
	if err != nil || joined.Error != nil {
		t.Fatalf("second JoinGroup: %+v, %v", joined, err)
	}
	if joined.MemberID != first.MemberID || joined.LeaderID != joined.MemberID || joined.ProtocolName != "range" ||
		joined.ProtocolType != "consumer" || joined.GenerationID < 1 {
		t.Errorf("second JoinGroup: %+v", joined)
	}
	wantSub := kafka.GroupProtocolSubscription{Topics: []string{topic}, UserData: []byte("ud"), OwnedPartitions: map[string][]int{topic: {0}}}
	if len(joined.Members) != 1 || joined.Members[0].ID != joined.MemberID || !reflect.DeepEqual(joined.Members[0].Metadata, wantSub) {
		t.Errorf("JoinGroup members %+v, want this member with %+v", joined.Members, wantSub)
	}

	synced, err := client.SyncGroup(ctx, &kafka.SyncGroupRequest{
		GroupID:      group,
		GenerationID: joined.GenerationID,
		MemberID:     joined.MemberID,
		ProtocolType: "consumer",
		ProtocolName: joined.ProtocolName,
		Assignments: []kafka.SyncGroupRequestAssignment{{MemberID: joined.MemberID, Assignment: kafka.GroupProtocolAssignment{
			AssignedPartitions: map[string][]int{topic: {0, 1, 2}},
			UserData:           []byte("au"),
		}}},
	})
	if err != nil || synced.Error != nil {
		t.Fatalf("SyncGroup: %+v, %v", synced, err)
	}
	wantAssignment := kafka.GroupProtocolAssignment{AssignedPartitions: map[string][]int{topic: {0, 1, 2}}, UserData: []byte("au")}
	if !reflect.DeepEqual(synced.Assignment, wantAssignment) || synced.ProtocolType != "consumer" || synced.ProtocolName != "range" {
		t.Errorf("SyncGroup: %+v", synced)
	}

	hb, err := client.Heartbeat(ctx, &kafka.HeartbeatRequest{GroupID: group, GenerationID: int32(joined.GenerationID), MemberID: joined.MemberID})
	if err != nil || hb.Error != nil {
		t.Errorf("Heartbeat: %+v, %v", hb, err)
	}
	hb, err = client.Heartbeat(ctx, &kafka.HeartbeatRequest{GroupID: group, GenerationID: int32(joined.GenerationID), MemberID: "stranger"})
	if err != nil || !errors.Is(hb.Error, kafka.UnknownMemberId) {
		t.Errorf("Heartbeat of an unknown member: %+v, %v", hb, err)
	}

	g := cgroupsDescribe(t, ctx, client, group)
	if g.GroupState != "Stable" || len(g.Members) != 1 {
		t.Fatalf("described %+v, want a Stable group with one member", g)
	}
	m := g.Members[0]
	if m.MemberID != joined.MemberID || m.ClientID != cgroupsClientID || m.ClientHost == "" {
		t.Errorf("member %+v", m)
	}
	wantMeta := kafka.DescribeGroupsResponseMemberMetadata{Version: 1, Topics: []string{topic}, UserData: []byte("ud"),
		OwnedPartitions: []kafka.DescribeGroupsResponseMemberMetadataOwnedPartition{{Topic: topic, Partitions: []int{0}}}}
	if !reflect.DeepEqual(m.MemberMetadata, wantMeta) {
		t.Errorf("member metadata %+v, want %+v", m.MemberMetadata, wantMeta)
	}
	wantAssign := kafka.DescribeGroupsResponseAssignments{Version: 1, UserData: []byte("au"),
		Topics: []kafka.GroupMemberTopic{{Topic: topic, Partitions: []int{0, 1, 2}}}}
	if !reflect.DeepEqual(m.MemberAssignments, wantAssign) {
		t.Errorf("member assignment %+v, want %+v", m.MemberAssignments, wantAssign)
	}

	listed := cgroupsListed(t, ctx, client, group)
	if len(listed) != 1 || listed[0].ProtocolType != "consumer" || listed[0].Coordinator < 1 {
		t.Errorf("ListGroups entries for the group: %+v, want one consumer group with its coordinator", listed)
	}

	del, err := client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	if err != nil || !errors.Is(del.Errors[group], kafka.NonEmptyGroup) {
		t.Errorf("DeleteGroups of a group with a member: %+v, %v; want NonEmptyGroup", del, err)
	}

	left, err := client.LeaveGroup(ctx, &kafka.LeaveGroupRequest{GroupID: group, Members: []kafka.LeaveGroupRequestMember{{ID: joined.MemberID}}})
	if err != nil || left.Error != nil || len(left.Members) != 1 || left.Members[0].ID != joined.MemberID || left.Members[0].Error != nil {
		t.Fatalf("LeaveGroup: %+v, %v", left, err)
	}
	if g := cgroupsDescribe(t, ctx, client, group); g.GroupState != "Empty" || len(g.Members) != 0 {
		t.Errorf("after LeaveGroup: %+v, want an Empty group", g)
	}

	del, err = client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(del.Errors) != 1 {
		t.Fatalf("DeleteGroups: %+v, %v", del, err)
	}
	if err, ok := del.Errors[group]; !ok || err != nil {
		t.Fatalf("DeleteGroups of the empty group: %v (reported: %v)", err, ok)
	}
	if listed := cgroupsListed(t, ctx, client, group); len(listed) != 0 {
		t.Errorf("ListGroups still lists the deleted group: %+v", listed)
	}
	if g := cgroupsDescribe(t, ctx, client, group); g.GroupState != "Dead" || len(g.Members) != 0 {
		t.Errorf("described after deletion: %+v, want Dead", g)
	}
	del, err = client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	if err != nil || !errors.Is(del.Errors[group], kafka.GroupIdNotFound) {
		t.Errorf("DeleteGroups of a deleted group: %+v, %v; want GroupIdNotFound", del, err)
	}
}

// A Reader with a GroupID joins through its own code; DescribeGroups shows
// its subscription and the partitions its leader assigned it.
func TestClientGroupsReaderDescribedIntegration(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 2})
	client := cgroupsClient(t, c)
	ctx := testContext(t, 45*time.Second)
	group := ktesting.UniqueTopic(t)

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           c.Brokers,
		GroupID:           group,
		Topic:             topic,
		HeartbeatInterval: time.Second,
		SessionTimeout:    10 * time.Second,
		RebalanceTimeout:  10 * time.Second,
	})
	closed := false
	defer func() {
		if !closed {
			r.Close()
		}
	}()

	var g kafka.DescribeGroupsResponseGroup
	eventually(t, 30*time.Second, "the reader's group stable with its assignment", func() bool {
		resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		if err != nil {
			if cgroupsRetriable(err) {
				return false
			}
			t.Fatalf("DescribeGroups: %v", err)
		}
		g = resp.Groups[0]
		return g.Error == nil && g.GroupState == "Stable" && len(g.Members) == 1 && len(g.Members[0].MemberAssignments.Topics) > 0
	})
	m := g.Members[0]
	if !reflect.DeepEqual(m.MemberMetadata.Topics, []string{topic}) {
		t.Errorf("the reader's subscription: %+v", m.MemberMetadata)
	}
	wantTopics := []kafka.GroupMemberTopic{{Topic: topic, Partitions: []int{0, 1}}}
	if !reflect.DeepEqual(m.MemberAssignments.Topics, wantTopics) {
		t.Errorf("the reader's assignment: %+v, want %+v", m.MemberAssignments, wantTopics)
	}
	if m.MemberID == "" || m.ClientHost == "" {
		t.Errorf("member %+v", m)
	}

	// Closing the reader leaves the group; then the group can be deleted.
	if err := r.Close(); err != nil {
		t.Fatalf("closing the reader: %v", err)
	}
	closed = true
	eventually(t, 20*time.Second, "the group empty once the reader closed", func() bool {
		return len(cgroupsDescribe(t, ctx, client, group).Members) == 0
	})
	del, err := client.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	if err != nil || del.Errors[group] != nil {
		t.Errorf("DeleteGroups: %+v, %v", del, err)
	}
}

func TestClientGroupsInitProducerIDIntegration(t *testing.T) {
	c := requireRackCluster(t)
	client := cgroupsClient(t, c)
	ctx := testContext(t, 45*time.Second)

	// Retry the answers that mean "not ready yet": on a fresh cluster the
	// brokers may still be getting their first block of producer ids, and
	// the transaction state topic may still be being created.
	init := func(req *kafka.InitProducerIDRequest) *kafka.InitProducerIDResponse {
		t.Helper()
		var resp *kafka.InitProducerIDResponse
		eventually(t, 30*time.Second, "InitProducerID answered", func() bool {
			r, err := client.InitProducerID(ctx, req)
			switch {
			case err != nil && cgroupsRetriable(err), err == nil && cgroupsRetriable(r.Error):
				return false
			case err != nil:
				t.Fatalf("InitProducerID %+v: %v", req, err)
			}
			resp = r
			return true
		})
		return resp
	}

	// Idempotent producer: any broker hands out a fresh id at epoch 0.
	idem := init(&kafka.InitProducerIDRequest{TransactionTimeoutMs: 60000})
	if idem.Error != nil || idem.Producer == nil {
		t.Fatalf("InitProducerID without a transactional id: %+v", idem)
	}
	if idem.Producer.ProducerID < 0 || idem.Producer.ProducerEpoch != 0 {
		t.Errorf("idempotent producer %+v", idem.Producer)
	}
	idem2 := init(&kafka.InitProducerIDRequest{TransactionTimeoutMs: 60000})
	if idem2.Error != nil || idem2.Producer.ProducerID == idem.Producer.ProducerID {
		t.Errorf("a second idempotent producer: %+v (%+v); want a new id", idem2, idem2.Producer)
	}

	// Transactional: the transaction coordinator answers.
	txn := ktesting.UniqueTopic(t)
	first := init(&kafka.InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 30000})
	if first.Error != nil || first.Producer.ProducerID < 0 || first.Producer.ProducerID == idem.Producer.ProducerID {
		t.Fatalf("transactional InitProducerID: %+v (%+v)", first, first.Producer)
	}
	// Again with no current producer: the same id, its epoch bumped.
	second := init(&kafka.InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 30000})
	if second.Error != nil || second.Producer.ProducerID != first.Producer.ProducerID || second.Producer.ProducerEpoch <= first.Producer.ProducerEpoch {
		t.Errorf("re-initialised: %+v after %+v", second.Producer, first.Producer)
	}
	// Naming the current producer (KIP-360): bumped again.
	third := init(&kafka.InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 30000,
		ProducerID: second.Producer.ProducerID, ProducerEpoch: second.Producer.ProducerEpoch})
	if third.Error != nil || third.Producer.ProducerID != first.Producer.ProducerID || third.Producer.ProducerEpoch <= second.Producer.ProducerEpoch {
		t.Errorf("resumed: %+v after %+v (error %v)", third.Producer, second.Producer, third.Error)
	}
	// A stale epoch is refused. The broker takes the epoch before the current one as a retry of the
	// last bump, so the stale session is second's after one more bump; and unlike first's, which is
	// (0, 0) when the coordinator hands out producer id 0, second's is never the zero session, which
	// the request reads as naming no current producer.
	fourth := init(&kafka.InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 30000,
		ProducerID: third.Producer.ProducerID, ProducerEpoch: third.Producer.ProducerEpoch})
	if fourth.Error != nil || fourth.Producer.ProducerEpoch <= third.Producer.ProducerEpoch {
		t.Errorf("resumed again: %+v after %+v (error %v)", fourth.Producer, third.Producer, fourth.Error)
	}
	stale := init(&kafka.InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 30000,
		ProducerID: second.Producer.ProducerID, ProducerEpoch: second.Producer.ProducerEpoch})
	if stale.Error == nil {
		t.Errorf("a stale epoch was accepted: %+v", stale.Producer)
	}
	// Longer than transaction.max.timeout.ms (15 minutes by default).
	tooLong := init(&kafka.InitProducerIDRequest{TransactionalID: txn, TransactionTimeoutMs: 30000000})
	if !errors.Is(tooLong.Error, kafka.InvalidTransactionTimeout) {
		t.Errorf("too long a transaction timeout: %v, want InvalidTransactionTimeout", tooLong.Error)
	}
}

// Two members sharing one Client rebalance together on the real
// coordinator: while it holds the second member's JoinGroup, the first
// one's heartbeats learn of the rebalance and its rejoin completes it.
func TestClientGroupsTwoMembersIntegration(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 2})
	client := cgroupsClient(t, c)
	ctx := testContext(t, 45*time.Second)
	group := ktesting.UniqueTopic(t)
	t.Cleanup(func() {
		client.DeleteGroups(context.Background(), &kafka.DeleteGroupsRequest{GroupIDs: []string{group}})
	})
	join := func(memberID string) (*kafka.JoinGroupResponse, error) {
		return client.JoinGroup(ctx, &kafka.JoinGroupRequest{
			GroupID: group, MemberID: memberID, ProtocolType: "consumer",
			SessionTimeout: 10 * time.Second, RebalanceTimeout: 20 * time.Second,
			Protocols: []kafka.GroupProtocol{{Name: "range", Metadata: kafka.GroupProtocolSubscription{Topics: []string{topic}}}},
		})
	}
	// joinMember does the member id dance, retrying a coordinator still
	// loading.
	joinMember := func() *kafka.JoinGroupResponse {
		t.Helper()
		var first *kafka.JoinGroupResponse
		eventually(t, 30*time.Second, "a JoinGroup answered", func() bool {
			r, err := join("")
			switch {
			case err != nil && cgroupsRetriable(err), err == nil && cgroupsRetriable(r.Error):
				return false
			case err != nil:
				t.Fatalf("JoinGroup: %v", err)
			}
			first = r
			return true
		})
		if !errors.Is(first.Error, kafka.MemberIDRequired) {
			t.Fatalf("first JoinGroup: %+v", first)
		}
		return first
	}

	a, err := join(joinMember().MemberID)
	if err != nil || a.Error != nil {
		t.Fatalf("first member: %+v, %v", a, err)
	}
	// Without the protocol type and name, Kafka 2.5+ refuses the SyncGroup.
	s, err := client.SyncGroup(ctx, &kafka.SyncGroupRequest{GroupID: group, GenerationID: a.GenerationID, MemberID: a.MemberID})
	if err != nil || !errors.Is(s.Error, kafka.InconsistentGroupProtocol) {
		t.Errorf("SyncGroup without protocol type and name: %+v, %v; want InconsistentGroupProtocol", s, err)
	}
	if s, err := client.SyncGroup(ctx, &kafka.SyncGroupRequest{GroupID: group, GenerationID: a.GenerationID, MemberID: a.MemberID,
		ProtocolType: "consumer", ProtocolName: a.ProtocolName,
		Assignments: []kafka.SyncGroupRequestAssignment{{MemberID: a.MemberID, Assignment: kafka.GroupProtocolAssignment{
			AssignedPartitions: map[string][]int{topic: {0, 1}}}}}}); err != nil || s.Error != nil {
		t.Fatalf("first member's SyncGroup: %+v, %v", s, err)
	}

	bID := joinMember().MemberID
	type result struct {
		r   *kafka.JoinGroupResponse
		err error
	}
	held := make(chan result, 1)
	go func() {
		r, err := join(bID) // held by the coordinator until the first member rejoins
		held <- result{r, err}
	}()
	eventually(t, 15*time.Second, "the first member's heartbeat seeing the rebalance", func() bool {
		hb, err := client.Heartbeat(ctx, &kafka.HeartbeatRequest{GroupID: group, GenerationID: int32(a.GenerationID), MemberID: a.MemberID})
		if err != nil {
			t.Fatalf("Heartbeat: %v", err)
		}
		if hb.Error != nil && !errors.Is(hb.Error, kafka.RebalanceInProgress) {
			t.Fatalf("Heartbeat: %v", hb.Error)
		}
		return errors.Is(hb.Error, kafka.RebalanceInProgress)
	})
	start := time.Now()
	a2, err := join(a.MemberID)
	if err != nil || a2.Error != nil {
		t.Fatalf("first member's rejoin: %+v, %v", a2, err)
	}
	b := <-held
	if b.err != nil || b.r.Error != nil {
		t.Fatalf("second member's join: %+v, %v", b.r, b.err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the rebalance took %v: it waited for its timeout", took)
	}
	if a2.GenerationID != a.GenerationID+1 || b.r.GenerationID != a2.GenerationID || len(a2.Members)+len(b.r.Members) != 2 {
		t.Errorf("rejoined: %+v and %+v; want both in the next generation, the leader told of both", a2, b.r)
	}

	left, err := client.LeaveGroup(ctx, &kafka.LeaveGroupRequest{GroupID: group, Members: []kafka.LeaveGroupRequestMember{{ID: a.MemberID}, {ID: bID}}})
	if err != nil || left.Error != nil || len(left.Members) != 2 || left.Members[0].Error != nil || left.Members[1].Error != nil {
		t.Errorf("LeaveGroup of both: %+v, %v", left, err)
	}
}
