package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientMetadataFake starts a fake cluster of 3 brokers in racks a, b, c
// with group coordinator 2 and topic "t" (3 partitions, partition p led by
// broker p+1), and a Client for it.
func clientMetadataFake(t *testing.T) (*fakebroker.Cluster, *Client) {
	t.Helper()
	cl := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, Coordinator: 2})
	cl.CreateTopic("t", 3, 3)
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return cl, &Client{Addr: TCP(cl.Addrs()...), Transport: tr}
}

func clientMetadataCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// clientMetadataBroker is the Broker a fake broker should be described as.
func clientMetadataBroker(b *fakebroker.Broker) Broker {
	return Broker{ID: int(b.ID()), Host: b.Host(), Port: int(b.Port()), Rack: b.Rack()}
}

func TestClientMetadataBrokersAndTopics(t *testing.T) {
	cl, c := clientMetadataFake(t)
	cl.CreateTopic("u", 1, 2)
	res, err := c.Metadata(clientMetadataCtx(t), &MetadataRequest{Topics: []string{"t", "u"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ClusterID != "fake-cluster" {
		t.Errorf("ClusterID = %q", res.ClusterID)
	}
	var want []Broker
	for _, b := range cl.Brokers() {
		want = append(want, clientMetadataBroker(b))
	}
	if len(res.Brokers) != 3 {
		t.Fatalf("Brokers = %+v", res.Brokers)
	}
	for i := range want {
		if res.Brokers[i] != want[i] {
			t.Errorf("Brokers[%d] = %+v; want %+v", i, res.Brokers[i], want[i])
		}
	}
	if res.Controller != want[0] { // the fake's controller is its first live broker
		t.Errorf("Controller = %+v; want %+v", res.Controller, want[0])
	}
	if len(res.Topics) != 2 || res.Topics[0].Name != "t" || res.Topics[1].Name != "u" {
		t.Fatalf("Topics = %+v", res.Topics)
	}
	tt := res.Topics[0]
	if tt.Error != nil || tt.Internal || len(tt.Partitions) != 3 {
		t.Fatalf("topic t = %+v", tt)
	}
	for i, p := range tt.Partitions {
		if p.Topic != "t" || p.ID != i || p.Error != nil {
			t.Errorf("partition %d = %+v", i, p)
		}
		if p.Leader != want[i] {
			t.Errorf("partition %d: leader %+v; want %+v", i, p.Leader, want[i])
		}
		if len(p.Replicas) != 3 || len(p.Isr) != 3 || p.Replicas[0] != want[i] || p.Isr[0] != want[i] {
			t.Errorf("partition %d: replicas %+v, isr %+v", i, p.Replicas, p.Isr)
		}
		for _, r := range append(append([]Broker(nil), p.Replicas...), p.Isr...) {
			if r.Rack == "" || r.Host == "" {
				t.Errorf("partition %d: replica %+v not filled in", i, r)
			}
		}
	}
	if u := res.Topics[1]; len(u.Partitions) != 1 || len(u.Partitions[0].Replicas) != 2 {
		t.Errorf("topic u = %+v", u)
	}
}

func TestClientMetadataAllTopicsOrNone(t *testing.T) {
	cl, c := clientMetadataFake(t)
	cl.CreateTopic("u", 1, 1)
	ctx := clientMetadataCtx(t)

	all, err := c.Metadata(ctx, &MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Topics) != 2 || all.Topics[0].Name != "t" || all.Topics[1].Name != "u" {
		t.Errorf("nil Topics: got %+v; want every topic", all.Topics)
	}
	none, err := c.Metadata(ctx, &MetadataRequest{Topics: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Topics) != 0 || len(none.Brokers) != 3 {
		t.Errorf("empty Topics: got %d topics and %d brokers; want 0 and 3", len(none.Topics), len(none.Brokers))
	}
	// What went on the wire: null, then an empty array.
	var got []protocol.MetadataRequest
	for _, b := range cl.Brokers() {
		for _, r := range b.Received(protocol.Metadata) {
			got = append(got, *r.Request.(*protocol.MetadataRequest))
		}
	}
	if len(got) != 2 || got[0].Topics != nil || got[1].Topics == nil || len(got[1].Topics) != 0 {
		t.Errorf("requests sent: %+v", got)
	}
	for _, r := range got {
		if r.AllowAutoTopicCreation {
			t.Error("Metadata allowed topic auto-creation")
		}
	}
}

func TestClientMetadataUnknownTopicAndLeaderless(t *testing.T) {
	cl, c := clientMetadataFake(t)
	cl.Broker(3).Stop() // leader of t/2
	res, err := c.Metadata(clientMetadataCtx(t), &MetadataRequest{Addr: TCP(cl.Broker(1).Addr()), Topics: []string{"nope", "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Topics) != 2 {
		t.Fatalf("Topics = %+v", res.Topics)
	}
	if nope := res.Topics[0]; nope.Name != "nope" || !errors.Is(nope.Error, UnknownTopicOrPartition) {
		t.Errorf("unknown topic = %+v; want UnknownTopicOrPartition", nope)
	}
	p2 := res.Topics[1].Partitions[2]
	if !errors.Is(p2.Error, LeaderNotAvailable) || p2.Leader.ID != -1 {
		t.Errorf("partition 2 with its leader down = %+v", p2)
	}
	if len(res.Brokers) != 2 {
		t.Errorf("Brokers = %+v; want the 2 running", res.Brokers)
	}
}

func TestClientMetadataBadInput(t *testing.T) {
	ctx := clientMetadataCtx(t)
	c := &Client{}
	if _, err := c.Metadata(ctx, nil); err == nil {
		t.Error("Metadata(nil) succeeded")
	}
	if _, err := c.Metadata(ctx, &MetadataRequest{}); err == nil || !strings.Contains(err.Error(), "no address") {
		t.Errorf("Metadata without an address: %v", err)
	}
	if _, err := c.ApiVersions(ctx, nil); err == nil {
		t.Error("ApiVersions(nil) succeeded")
	}
	if _, err := c.ApiVersions(ctx, &ApiVersionsRequest{}); err == nil {
		t.Error("ApiVersions without an address succeeded")
	}
	if _, err := c.FindCoordinator(ctx, nil); err == nil {
		t.Error("FindCoordinator(nil) succeeded")
	}
	if _, err := c.FindCoordinator(ctx, &FindCoordinatorRequest{Key: "g"}); err == nil {
		t.Error("FindCoordinator without an address succeeded")
	}
}

func TestClientMetadataUnreachable(t *testing.T) {
	cl, c := clientMetadataFake(t)
	for _, b := range cl.Brokers() {
		b.Stop()
	}
	_, err := c.Metadata(clientMetadataCtx(t), &MetadataRequest{})
	if err == nil || !strings.Contains(err.Error(), "kafka.(*Client).Metadata") {
		t.Errorf("Metadata of a stopped cluster: %v", err)
	}
}

func TestClientMetadataTimeout(t *testing.T) {
	cl, c := clientMetadataFake(t)
	hold := make(chan struct{})
	defer close(hold)
	for _, b := range cl.Brokers() {
		b := b
		b.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			return b.Default(req, hdr), fakebroker.Action{Wait: hold}
		})
	}
	c.Timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := c.Metadata(context.Background(), &MetadataRequest{})
	if err == nil {
		t.Fatal("Metadata answered while every broker held its answer")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Metadata returned after %v; the Client's Timeout is %v", d, c.Timeout)
	}
}

func TestClientMetadataApiVersions(t *testing.T) {
	cl, c := clientMetadataFake(t)
	b2 := cl.Broker(2)
	b2.SetMaxVersion(protocol.Fetch, 11)
	res, err := c.ApiVersions(clientMetadataCtx(t), &ApiVersionsRequest{Addr: TCP(b2.Addr())})
	if err != nil || res.Error != nil {
		t.Fatalf("ApiVersions = %+v, %v", res, err)
	}
	got := map[int]ApiVersionsResponseApiKey{}
	for _, k := range res.ApiKeys {
		got[k.ApiKey] = k
	}
	if len(got) != len(b2.Versions()) {
		t.Errorf("%d keys; the broker advertises %d", len(got), len(b2.Versions()))
	}
	if f := got[1]; f.ApiName != "Fetch" || f.MaxVersion != 11 {
		t.Errorf("Fetch = %+v; want max version 11", f)
	}
	if m := got[3]; m.ApiName != "Metadata" || m.MinVersion != 1 || m.MaxVersion != 12 {
		t.Errorf("Metadata = %+v", m)
	}
	if d := got[47]; d.ApiName != "OffsetDelete" {
		t.Errorf("OffsetDelete = %+v", d)
	}
	if n := b2.Requests(protocol.ApiVersions); n < 2 { // the connection's own, then ours
		t.Errorf("broker 2 got %d ApiVersions requests", n)
	}
}

func TestClientMetadataApiVersionsError(t *testing.T) {
	cl, c := clientMetadataFake(t)
	b1 := cl.Broker(1)
	// The connection negotiates first; answer the Client's request (the
	// second) with an error.
	b1.Script(protocol.ApiVersions, 2, fakebroker.Step{ErrorCode: 35})
	res, err := c.ApiVersions(clientMetadataCtx(t), &ApiVersionsRequest{Addr: TCP(b1.Addr())})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Error, UnsupportedVersion) || len(res.ApiKeys) != 0 {
		t.Errorf("ApiVersions = %+v; want UnsupportedVersion", res)
	}
}

func TestClientMetadataApiNames(t *testing.T) {
	for k, want := range map[protocol.ApiKey]string{0: "Produce", 18: "ApiVersions", 47: "OffsetDelete", 51: "AlterUserScramCredentials", 75: "DescribeTopicPartitions", 9999: "9999", -1: "-1"} {
		if got := clientMetadataApiName(k); got != want {
			t.Errorf("name of %d = %q; want %q", k, got, want)
		}
	}
}

func TestClientMetadataFindCoordinator(t *testing.T) {
	for _, max := range []int16{6, 3} { // batched (v4+) and single-key answers
		cl, c := clientMetadataFake(t)
		for _, b := range cl.Brokers() {
			b.SetMaxVersion(protocol.FindCoordinator, max)
		}
		ctx := clientMetadataCtx(t)
		res, err := c.FindCoordinator(ctx, &FindCoordinatorRequest{Key: "g", KeyType: CoordinatorKeyTypeConsumer})
		if err != nil || res.Error != nil {
			t.Fatalf("v%d: FindCoordinator = %+v, %v", max, res, err)
		}
		b2 := cl.Broker(2)
		if want := (FindCoordinatorResponseCoordinator{NodeID: 2, Host: b2.Host(), Port: int(b2.Port())}); *res.Coordinator != want {
			t.Errorf("v%d: coordinator %+v; want %+v", max, *res.Coordinator, want)
		}
		var sent []*protocol.FindCoordinatorRequest
		for _, b := range cl.Brokers() {
			for _, r := range b.Received(protocol.FindCoordinator) {
				sent = append(sent, r.Request.(*protocol.FindCoordinatorRequest))
			}
		}
		if len(sent) != 1 || sent[0].KeyType != 0 {
			t.Fatalf("v%d: sent %+v", max, sent)
		}
		if max >= 4 && (len(sent[0].CoordinatorKeys) != 1 || sent[0].CoordinatorKeys[0] != "g") {
			t.Errorf("v%d: keys %q", max, sent[0].CoordinatorKeys)
		}
		if max < 4 && sent[0].CoordinatorKey != "g" {
			t.Errorf("v%d: key %q", max, sent[0].CoordinatorKey)
		}

		// A transactional id's lookup carries its key type.
		if _, err := c.FindCoordinator(ctx, &FindCoordinatorRequest{Key: "tx", KeyType: CoordinatorKeyTypeTransaction}); err != nil {
			t.Fatal(err)
		}
		var types []int8
		for _, b := range cl.Brokers() {
			for _, r := range b.Received(protocol.FindCoordinator) {
				types = append(types, r.Request.(*protocol.FindCoordinatorRequest).KeyType)
			}
		}
		if len(types) != 2 || types[0]+types[1] != 1 {
			t.Errorf("v%d: key types sent %v", max, types)
		}
	}
}

func TestClientMetadataFindCoordinatorError(t *testing.T) {
	for _, max := range []int16{6, 3} {
		cl, c := clientMetadataFake(t)
		msg := "loading"
		for _, b := range cl.Brokers() {
			b.SetMaxVersion(protocol.FindCoordinator, max)
			b.Handle(protocol.FindCoordinator, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
				r := req.(*protocol.FindCoordinatorRequest)
				resp := &protocol.FindCoordinatorResponse{ThrottleTimeMs: 20}
				if hdr.Version < 4 {
					resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Port = 15, &msg, -1, -1
				} else {
					for _, k := range r.CoordinatorKeys {
						resp.Coordinators = append(resp.Coordinators, protocol.FindCoordinatorResponseCoordinator{
							CoordinatorKey: k, NodeID: -1, Port: -1, ErrorCode: 15, ErrorMessage: &msg,
						})
					}
				}
				return resp, fakebroker.Action{}
			})
		}
		res, err := c.FindCoordinator(clientMetadataCtx(t), &FindCoordinatorRequest{Key: "g"})
		if err != nil {
			t.Fatalf("v%d: %v", max, err)
		}
		if !errors.Is(res.Error, GroupCoordinatorNotAvailable) || !strings.Contains(res.Error.Error(), "loading") {
			t.Errorf("v%d: Error = %v; want CoordinatorNotAvailable with the broker's message", max, res.Error)
		}
		if res.Coordinator == nil || res.Coordinator.NodeID != -1 || res.Throttle != 20*time.Millisecond {
			t.Errorf("v%d: response %+v", max, res)
		}
	}
}
