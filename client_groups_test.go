package kafka

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Unit tests of the Client's group methods against the fake broker. The
// fake's own coordinator model answers JoinGroup, SyncGroup, Heartbeat and
// LeaveGroup; the other requests are answered by handlers installed here.

// clientGroupsFake starts a fake cluster whose default group coordinator is
// broker coordinator, and a Client bootstrapped from every broker.
func clientGroupsFake(t *testing.T, brokers int, coordinator int32) (*fakebroker.Cluster, *Client) {
	t.Helper()
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: brokers, Coordinator: coordinator})
	tr := &Transport{ClientID: "client-groups-test"}
	t.Cleanup(tr.CloseIdleConnections)
	return c, &Client{Addr: TCP(c.Addrs()...), Timeout: 10 * time.Second, Transport: tr}
}

func clientGroupsCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clientGroupsRouteCoordinators makes every broker answer FindCoordinator
// with the broker coordinators[key] (keys not listed: code 15,
// coordinator not available), and records the key types asked for.
func clientGroupsRouteCoordinators(c *fakebroker.Cluster, coordinators map[string]int32) {
	for _, b := range c.Brokers() {
		b.Handle(protocol.FindCoordinator, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			r := req.(*protocol.FindCoordinatorRequest)
			keys := r.CoordinatorKeys
			if hdr.Version < 4 {
				keys = []string{r.CoordinatorKey}
			}
			resp := &protocol.FindCoordinatorResponse{}
			for _, k := range keys {
				co := protocol.FindCoordinatorResponseCoordinator{CoordinatorKey: k, NodeID: -1, Port: -1, ErrorCode: 15}
				if id, ok := coordinators[k]; ok {
					cb := c.Broker(id)
					co = protocol.FindCoordinatorResponseCoordinator{CoordinatorKey: k, NodeID: id, Host: cb.Host(), Port: cb.Port()}
				}
				resp.Coordinators = append(resp.Coordinators, co)
				resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = co.ErrorCode, co.NodeID, co.Host, co.Port
			}
			return resp, fakebroker.Action{}
		})
	}
}

// clientGroupsFindKeyTypes returns the key types of every FindCoordinator
// request the cluster received.
func clientGroupsFindKeyTypes(c *fakebroker.Cluster) []int8 {
	var types []int8
	for _, b := range c.Brokers() {
		for _, r := range b.Received(protocol.FindCoordinator) {
			types = append(types, r.Request.(*protocol.FindCoordinatorRequest).KeyType)
		}
	}
	return types
}

func clientGroupsSubscription(v int16, topics []string, owned []protocol.ConsumerProtocolTopicPartitions) []byte {
	s := protocol.ConsumerProtocolSubscription{Version: v, Topics: topics, UserData: []byte("ud"), OwnedPartitions: owned, GenerationID: 3}
	if v >= 3 {
		rack := "rack-a"
		s.RackID = &rack
	}
	return s.AppendTo(nil)
}

func clientGroupsAssignment(v int16, tps ...protocol.ConsumerProtocolTopicPartitions) []byte {
	a := protocol.ConsumerProtocolAssignment{Version: v, AssignedPartitions: tps, UserData: []byte("au")}
	return a.AppendTo(nil)
}

// clientGroupsDescribeHandler answers DescribeGroups from groups, in the
// order of the request; unknown groups come back Dead with no error, as
// Kafka answers.
func clientGroupsDescribeHandler(groups map[string]protocol.DescribeGroupsResponseGroup) fakebroker.HandlerFunc {
	return func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := &protocol.DescribeGroupsResponse{}
		for _, id := range req.(*protocol.DescribeGroupsRequest).Groups {
			g, ok := groups[id]
			if !ok {
				g = protocol.DescribeGroupsResponseGroup{GroupID: id, GroupState: "Dead"}
			}
			resp.Groups = append(resp.Groups, g)
		}
		return resp, fakebroker.Action{}
	}
}

func clientGroupsDescribedGroups(b *fakebroker.Broker) [][]string {
	var out [][]string
	for _, r := range b.Received(protocol.DescribeGroups) {
		out = append(out, r.Request.(*protocol.DescribeGroupsRequest).Groups)
	}
	return out
}

// Groups go to their own coordinators, one request per coordinator; the
// answer follows the request's order; consumer protocol metadata and
// assignments of every version are decoded; other protocol types are not.
func TestClientGroupsDescribeGroupsFake(t *testing.T) {
	c, client := clientGroupsFake(t, 3, 1)
	clientGroupsRouteCoordinators(c, map[string]int32{"g1": 1, "g2": 2, "g3": 1, "connect": 3})

	tp := func(topic string, ps ...int32) protocol.ConsumerProtocolTopicPartitions {
		return protocol.ConsumerProtocolTopicPartitions{Topic: topic, Partitions: ps}
	}
	c.Broker(1).Handle(protocol.DescribeGroups, clientGroupsDescribeHandler(map[string]protocol.DescribeGroupsResponseGroup{
		"g1": {GroupID: "g1", GroupState: "Stable", ProtocolType: "consumer", ProtocolData: "range", Members: []protocol.DescribeGroupsResponseMember{
			{MemberID: "m1", ClientID: "c1", ClientHost: "/10.0.0.1",
				MemberMetadata:   clientGroupsSubscription(1, []string{"t1", "t2"}, []protocol.ConsumerProtocolTopicPartitions{tp("t1", 0, 2)}),
				MemberAssignment: clientGroupsAssignment(1, tp("t1", 0, 2), tp("t2", 1))},
			{MemberID: "m2", ClientID: "c2", ClientHost: "/10.0.0.2",
				MemberMetadata:   clientGroupsSubscription(3, []string{"t1"}, nil),
				MemberAssignment: nil}, // joined, not yet synced
		}},
		"g3": {GroupID: "g3", ErrorCode: 16},
	}))
	c.Broker(2).Handle(protocol.DescribeGroups, clientGroupsDescribeHandler(map[string]protocol.DescribeGroupsResponseGroup{
		"g2": {GroupID: "g2", GroupState: "Empty", ProtocolType: "consumer", Members: []protocol.DescribeGroupsResponseMember{
			{MemberID: "m3", MemberMetadata: clientGroupsSubscription(0, []string{"t3"}, nil), MemberAssignment: clientGroupsAssignment(0)},
		}},
	}))
	c.Broker(3).Handle(protocol.DescribeGroups, clientGroupsDescribeHandler(map[string]protocol.DescribeGroupsResponseGroup{
		"connect": {GroupID: "connect", GroupState: "Stable", ProtocolType: "connect", Members: []protocol.DescribeGroupsResponseMember{
			{MemberID: "w1", ClientID: "worker", MemberMetadata: []byte{0xff}, MemberAssignment: []byte{0xff, 0xfe}},
		}},
	}))

	resp, err := client.DescribeGroups(clientGroupsCtx(t), &DescribeGroupsRequest{GroupIDs: []string{"g2", "g1", "connect", "g3", "g1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := clientGroupsDescribedGroups(c.Broker(1)); !reflect.DeepEqual(got, [][]string{{"g1", "g3"}}) {
		t.Errorf("broker 1 was asked %q, want one request for g1 and g3", got)
	}
	if got := clientGroupsDescribedGroups(c.Broker(2)); !reflect.DeepEqual(got, [][]string{{"g2"}}) {
		t.Errorf("broker 2 was asked %q", got)
	}
	if got := clientGroupsDescribedGroups(c.Broker(3)); !reflect.DeepEqual(got, [][]string{{"connect"}}) {
		t.Errorf("broker 3 was asked %q", got)
	}
	for _, kt := range clientGroupsFindKeyTypes(c) {
		if kt != protocol.CoordinatorKeyTypeGroup {
			t.Errorf("FindCoordinator key type %d, want group", kt)
		}
	}

	want := &DescribeGroupsResponse{Groups: []DescribeGroupsResponseGroup{
		{GroupID: "g2", GroupState: "Empty", Members: []DescribeGroupsResponseMember{
			{MemberID: "m3",
				MemberMetadata:    DescribeGroupsResponseMemberMetadata{Version: 0, Topics: []string{"t3"}, UserData: []byte("ud")},
				MemberAssignments: DescribeGroupsResponseAssignments{Version: 0, UserData: []byte("au")}},
		}},
		{GroupID: "g1", GroupState: "Stable", Members: []DescribeGroupsResponseMember{
			{MemberID: "m1", ClientID: "c1", ClientHost: "/10.0.0.1",
				MemberMetadata: DescribeGroupsResponseMemberMetadata{Version: 1, Topics: []string{"t1", "t2"}, UserData: []byte("ud"),
					OwnedPartitions: []DescribeGroupsResponseMemberMetadataOwnedPartition{{Topic: "t1", Partitions: []int{0, 2}}}},
				MemberAssignments: DescribeGroupsResponseAssignments{Version: 1, UserData: []byte("au"),
					Topics: []GroupMemberTopic{{Topic: "t1", Partitions: []int{0, 2}}, {Topic: "t2", Partitions: []int{1}}}}},
			{MemberID: "m2", ClientID: "c2", ClientHost: "/10.0.0.2",
				MemberMetadata: DescribeGroupsResponseMemberMetadata{Version: 3, Topics: []string{"t1"}, UserData: []byte("ud")}},
		}},
		{GroupID: "connect", GroupState: "Stable", Members: []DescribeGroupsResponseMember{{MemberID: "w1", ClientID: "worker"}}},
		{GroupID: "g3", Error: NotCoordinatorForGroup},
	}}
	if !reflect.DeepEqual(resp, want) {
		t.Fatalf("DescribeGroups:\n got %+v\nwant %+v", resp, want)
	}
	if !errors.Is(resp.Groups[3].Error, NotCoordinatorForGroup) {
		t.Errorf("group error %v, want NotCoordinatorForGroup", resp.Groups[3].Error)
	}
}

func TestClientGroupsDescribeGroupsErrors(t *testing.T) {
	c, client := clientGroupsFake(t, 2, 1)
	clientGroupsRouteCoordinators(c, map[string]int32{"bad": 2, "ok": 1})
	ctx := clientGroupsCtx(t)

	// No coordinator for a group: the call fails, saying why.
	_, err := client.DescribeGroups(ctx, &DescribeGroupsRequest{GroupIDs: []string{"ok", "orphan"}})
	if !errors.Is(err, GroupCoordinatorNotAvailable) {
		t.Errorf("orphan group: err = %v, want GroupCoordinatorNotAvailable", err)
	}
	if n := c.Broker(1).Requests(protocol.DescribeGroups); n != 0 {
		t.Errorf("%d DescribeGroups sent although a coordinator was missing", n)
	}

	// A consumer group whose member metadata is not consumer protocol.
	c.Broker(2).Handle(protocol.DescribeGroups, clientGroupsDescribeHandler(map[string]protocol.DescribeGroupsResponseGroup{
		"bad": {GroupID: "bad", ProtocolType: "consumer", Members: []protocol.DescribeGroupsResponseMember{{MemberID: "m", MemberMetadata: []byte{0, 1, 0}}}},
	}))
	if _, err := client.DescribeGroups(ctx, &DescribeGroupsRequest{GroupIDs: []string{"bad"}}); err == nil {
		t.Error("truncated consumer metadata: no error")
	}

	// Nothing to describe: nothing sent.
	resp, err := client.DescribeGroups(ctx, &DescribeGroupsRequest{})
	if err != nil || len(resp.Groups) != 0 {
		t.Errorf("no groups: %+v, %v", resp, err)
	}
	if _, err := client.DescribeGroups(ctx, nil); err == nil {
		t.Error("nil request: no error")
	}
	if _, err := (&Client{}).DescribeGroups(ctx, &DescribeGroupsRequest{GroupIDs: []string{"ok"}}); err == nil {
		t.Error("no address: no error")
	}
	// A coordinator that drops the connection.
	c.Broker(1).Handle(protocol.DescribeGroups, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	if _, err := client.DescribeGroups(ctx, &DescribeGroupsRequest{GroupIDs: []string{"ok"}}); err == nil {
		t.Error("closed connection: no error")
	}
}

// Every broker is asked; groups carry the id of the broker that listed
// them; a broker's error code is reported without hiding the others' groups.
func TestClientGroupsListGroupsFake(t *testing.T) {
	c, client := clientGroupsFake(t, 3, 1)
	lists := map[int32]*protocol.ListGroupsResponse{
		1: {Groups: []protocol.ListGroupsResponseGroup{{GroupID: "a", ProtocolType: "consumer"}}},
		2: {ErrorCode: 14},
		3: {Groups: []protocol.ListGroupsResponseGroup{{GroupID: "b", ProtocolType: "consumer"}, {GroupID: "c", ProtocolType: "connect"}}},
	}
	for id, l := range lists {
		l := l
		c.Broker(id).Handle(protocol.ListGroups, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			return l, fakebroker.Action{}
		})
	}
	ctx := clientGroupsCtx(t)
	resp, err := client.ListGroups(ctx, &ListGroupsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ListGroupsResponseGroup{
		{GroupID: "a", Coordinator: 1, ProtocolType: "consumer"},
		{GroupID: "b", Coordinator: 3, ProtocolType: "consumer"},
		{GroupID: "c", Coordinator: 3, ProtocolType: "connect"},
	}
	if !reflect.DeepEqual(resp.Groups, want) {
		t.Errorf("groups %+v, want %+v", resp.Groups, want)
	}
	if !errors.Is(resp.Error, GroupLoadInProgress) {
		t.Errorf("Error = %v, want the code broker 2 answered", resp.Error)
	}
	for _, b := range c.Brokers() {
		if n := b.Requests(protocol.ListGroups); n != 1 {
			t.Errorf("broker %d got %d ListGroups requests, want 1", b.ID(), n)
		}
	}

	// One broker unreachable: the list would be incomplete, so the call fails.
	c.Broker(2).Handle(protocol.ListGroups, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	if _, err := client.ListGroups(ctx, &ListGroupsRequest{}); err == nil {
		t.Error("a broker dropped the request: no error")
	}
	if _, err := client.ListGroups(ctx, nil); err == nil {
		t.Error("nil request: no error")
	}
}

// Groups go to their own coordinators; every result lands in Errors, nil
// for the deleted ones.
func TestClientGroupsDeleteGroupsFake(t *testing.T) {
	c, client := clientGroupsFake(t, 3, 1)
	clientGroupsRouteCoordinators(c, map[string]int32{"gone": 2, "busy": 3, "missing": 2})
	codes := map[string]int16{"gone": 0, "busy": 68, "missing": 69}
	for _, id := range []int32{2, 3} {
		throttle := 10 * id
		c.Broker(id).Handle(protocol.DeleteGroups, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := &protocol.DeleteGroupsResponse{ThrottleTimeMs: throttle}
			for _, g := range req.(*protocol.DeleteGroupsRequest).GroupsNames {
				resp.Results = append(resp.Results, protocol.DeleteGroupsResponseResult{GroupID: g, ErrorCode: codes[g]})
			}
			return resp, fakebroker.Action{}
		})
	}
	ctx := clientGroupsCtx(t)
	resp, err := client.DeleteGroups(ctx, &DeleteGroupsRequest{GroupIDs: []string{"gone", "busy", "missing"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Errors) != 3 || resp.Errors["gone"] != nil || !errors.Is(resp.Errors["busy"], NonEmptyGroup) || !errors.Is(resp.Errors["missing"], GroupIdNotFound) {
		t.Errorf("Errors = %v", resp.Errors)
	}
	if _, ok := resp.Errors["gone"]; !ok {
		t.Error("a deleted group is missing from Errors")
	}
	if resp.Throttle != 30*time.Millisecond {
		t.Errorf("Throttle = %v, want the longest (30ms)", resp.Throttle)
	}
	var got []string
	for _, r := range c.Broker(2).Received(protocol.DeleteGroups) {
		got = append(got, r.Request.(*protocol.DeleteGroupsRequest).GroupsNames...)
	}
	if !reflect.DeepEqual(got, []string{"gone", "missing"}) {
		t.Errorf("broker 2 was asked to delete %q", got)
	}
	if n := c.Broker(1).Requests(protocol.DeleteGroups); n != 0 {
		t.Errorf("broker 1 (no group's coordinator) got %d DeleteGroups", n)
	}

	// An old broker (DeleteGroups v0) gets the same answer.
	c.Broker(2).SetMaxVersion(protocol.DeleteGroups, 0)
	old := &Client{Addr: client.Addr, Transport: &Transport{}} // new connections learn the versions
	defer old.Transport.(*Transport).CloseIdleConnections()
	resp, err = old.DeleteGroups(ctx, &DeleteGroupsRequest{GroupIDs: []string{"missing"}})
	if err != nil || !errors.Is(resp.Errors["missing"], GroupIdNotFound) {
		t.Errorf("v0: %+v, %v", resp, err)
	}
	if rs := c.Broker(2).Received(protocol.DeleteGroups); rs[len(rs)-1].Header.Version != 0 {
		t.Errorf("sent v%d to a v0 broker", rs[len(rs)-1].Header.Version)
	}

	// Nothing to delete: an empty map, nothing sent.
	before := c.Broker(2).Requests(protocol.DeleteGroups) + c.Broker(3).Requests(protocol.DeleteGroups)
	resp, err = client.DeleteGroups(ctx, &DeleteGroupsRequest{})
	if err != nil || resp.Errors == nil || len(resp.Errors) != 0 {
		t.Errorf("no groups: %+v, %v", resp, err)
	}
	if after := c.Broker(2).Requests(protocol.DeleteGroups) + c.Broker(3).Requests(protocol.DeleteGroups); after != before {
		t.Error("DeleteGroups sent with no groups")
	}
	if _, err := client.DeleteGroups(ctx, &DeleteGroupsRequest{GroupIDs: []string{"nowhere"}}); !errors.Is(err, GroupCoordinatorNotAvailable) {
		t.Errorf("no coordinator: err = %v", err)
	}
	if _, err := client.DeleteGroups(ctx, nil); err == nil {
		t.Error("nil request: no error")
	}
}

// InitProducerID goes to any broker without a transactional id, to the
// transaction coordinator with one; zero ids mean "no current producer".
func TestClientGroupsInitProducerIDFake(t *testing.T) {
	c, client := clientGroupsFake(t, 3, 1)
	clientGroupsRouteCoordinators(c, map[string]int32{"txn": 3})
	next := map[int32]int64{1: 100, 2: 200, 3: 300}
	for _, b := range c.Brokers() {
		id := b.ID()
		b.Handle(protocol.InitProducerId, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			r := req.(*protocol.InitProducerIdRequest)
			if r.TransactionTimeoutMs > 900000 {
				return &protocol.InitProducerIdResponse{ErrorCode: 50, ProducerID: -1, ProducerEpoch: -1}, fakebroker.Action{}
			}
			return &protocol.InitProducerIdResponse{ThrottleTimeMs: 2, ProducerID: next[id], ProducerEpoch: int16(r.ProducerEpoch + 1)}, fakebroker.Action{}
		})
	}
	ctx := clientGroupsCtx(t)
	initReceived := func() []*protocol.InitProducerIdRequest {
		var out []*protocol.InitProducerIdRequest
		for _, b := range c.Brokers() {
			for _, r := range b.Received(protocol.InitProducerId) {
				out = append(out, r.Request.(*protocol.InitProducerIdRequest))
			}
		}
		return out
	}

	resp, err := client.InitProducerID(ctx, &InitProducerIDRequest{TransactionTimeoutMs: 1000})
	if err != nil || resp.Error != nil {
		t.Fatalf("idempotent: %+v, %v", resp, err)
	}
	if resp.Producer == nil || resp.Producer.ProducerID < 100 || resp.Producer.ProducerEpoch != 0 || resp.Throttle != 2*time.Millisecond {
		t.Errorf("idempotent: producer %+v, throttle %v", resp.Producer, resp.Throttle)
	}
	if rs := initReceived(); len(rs) != 1 || rs[0].TransactionalID != nil || rs[0].ProducerID != -1 || rs[0].ProducerEpoch != -1 || rs[0].TransactionTimeoutMs != 1000 {
		t.Errorf("idempotent request %+v", rs)
	}
	if n := len(clientGroupsFindKeyTypes(c)); n != 0 {
		t.Errorf("idempotent: %d FindCoordinator requests", n)
	}

	resp, err = client.InitProducerID(ctx, &InitProducerIDRequest{TransactionalID: "txn", TransactionTimeoutMs: 60000, ProducerID: 300, ProducerEpoch: 4})
	if err != nil || resp.Error != nil {
		t.Fatalf("transactional: %+v, %v", resp, err)
	}
	if *resp.Producer != (ProducerSession{ProducerID: 300, ProducerEpoch: 5}) {
		t.Errorf("transactional: producer %+v", resp.Producer)
	}
	if rs := c.Broker(3).Received(protocol.InitProducerId); len(rs) != 1 {
		t.Errorf("the transaction coordinator got %d requests", len(rs))
	} else if r := rs[0].Request.(*protocol.InitProducerIdRequest); r.TransactionalID == nil || *r.TransactionalID != "txn" || r.ProducerID != 300 || r.ProducerEpoch != 4 {
		t.Errorf("transactional request %+v", r)
	}
	if kts := clientGroupsFindKeyTypes(c); len(kts) != 1 || kts[0] != protocol.CoordinatorKeyTypeTransaction {
		t.Errorf("FindCoordinator key types %v, want one transaction lookup", kts)
	}

	resp, err = client.InitProducerID(ctx, &InitProducerIDRequest{TransactionalID: "txn", TransactionTimeoutMs: 1 << 30})
	if err != nil || !errors.Is(resp.Error, InvalidTransactionTimeout) || resp.Producer == nil || resp.Producer.ProducerID != -1 {
		t.Errorf("timeout too long: %+v, %v", resp, err)
	}
	if _, err := client.InitProducerID(ctx, &InitProducerIDRequest{TransactionalID: "unknown"}); !errors.Is(err, GroupCoordinatorNotAvailable) {
		t.Errorf("no transaction coordinator: err = %v", err)
	}
	if _, err := client.InitProducerID(ctx, nil); err == nil {
		t.Error("nil request: no error")
	}
	if _, err := (&Client{}).InitProducerID(ctx, &InitProducerIDRequest{}); err == nil {
		t.Error("no address: no error")
	}

	// An old broker (v2, no producer id fields) is sent what it knows.
	for _, b := range c.Brokers() {
		b.SetMaxVersion(protocol.InitProducerId, 2)
	}
	fresh := &Client{Addr: client.Addr, Transport: &Transport{}}
	defer fresh.Transport.(*Transport).CloseIdleConnections()
	if resp, err := fresh.InitProducerID(ctx, &InitProducerIDRequest{TransactionTimeoutMs: 1000}); err != nil || resp.Error != nil {
		t.Errorf("v2: %+v, %v", resp, err)
	}
}

func TestClientGroupsHelpers(t *testing.T) {
	tps := clientGroupsTopicPartitions(map[string][]int{"b": {2, 1}, "a": {0}, "c": nil})
	want := []protocol.ConsumerProtocolTopicPartitions{{Topic: "a", Partitions: []int32{0}}, {Topic: "b", Partitions: []int32{2, 1}}, {Topic: "c", Partitions: []int32{}}}
	if !reflect.DeepEqual(tps, want) {
		t.Errorf("topic partitions %+v", tps)
	}
	if clientGroupsTopicPartitions(nil) != nil {
		t.Error("nil map gave partitions")
	}
	if u := clientGroupsUnique([]string{"a", "b", "a", "c", "b"}); !sort.StringsAreSorted(u) || len(u) != 3 {
		t.Errorf("unique %q", u)
	}
	if clientGroupsNullable("") != nil || *clientGroupsNullable("x") != "x" {
		t.Error("nullable")
	}
}
