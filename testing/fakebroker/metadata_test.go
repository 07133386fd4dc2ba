package fakebroker_test

import (
	"testing"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

func TestMetadataBrokersRacksTopics(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}})
	c.CreateTopic("orders", 3, 3)
	c.CreateTopic("audit", 1, 1)

	for _, v := range []int16{1, 7, 9, 12} {
		resp := dial(t, c.Broker(2).Addr()).roundTrip(&protocol.MetadataRequest{}, v).(*protocol.MetadataResponse)
		if len(resp.Brokers) != 3 {
			t.Fatalf("v%d: %d brokers", v, len(resp.Brokers))
		}
		for i, b := range resp.Brokers {
			br := c.Broker(b.NodeID)
			if b.NodeID != int32(i+1) || b.Host != "127.0.0.1" || b.Port != br.Port() || b.Rack == nil || *b.Rack != br.Rack() {
				t.Fatalf("v%d: broker %d: %+v", v, i, b)
			}
		}
		if len(resp.Topics) != 2 || resp.Topics[0].Name != "audit" || resp.Topics[1].Name != "orders" {
			t.Fatalf("v%d: topics %+v", v, resp.Topics)
		}
		orders := resp.Topics[1]
		if v >= 10 && orders.TopicID != c.TopicID("orders") {
			t.Fatalf("v%d: topic id %x", v, orders.TopicID)
		}
		for i, p := range orders.Partitions {
			want := int32(i + 1)
			if p.ErrorCode != 0 || p.PartitionIndex != int32(i) || p.LeaderID != want || len(p.ReplicaNodes) != 3 || p.ReplicaNodes[0] != want || len(p.IsrNodes) != 3 {
				t.Fatalf("v%d: partition %+v", v, p)
			}
		}
	}

	// A new leader and epoch show; an unknown topic is an error.
	if e := c.SetLeader("orders", 0, 3); e != 1 {
		t.Fatalf("SetLeader epoch %d", e)
	}
	resp := dial(t, c.Broker(1).Addr()).roundTrip(&protocol.MetadataRequest{Topics: []protocol.MetadataRequestTopic{{Name: "orders"}, {Name: "nope"}}}, 9).(*protocol.MetadataResponse)
	if p := resp.Topics[0].Partitions[0]; p.LeaderID != 3 || p.LeaderEpoch != 1 {
		t.Fatalf("after SetLeader: %+v", p)
	}
	if resp.Topics[1].ErrorCode != 3 {
		t.Fatalf("unknown topic: %+v", resp.Topics[1])
	}

	// A stopped broker leaves the broker list; partitions it leads have
	// no leader until the test moves leadership.
	c.Broker(3).Stop()
	resp = dial(t, c.Broker(1).Addr()).roundTrip(&protocol.MetadataRequest{}, 9).(*protocol.MetadataResponse)
	if len(resp.Brokers) != 2 {
		t.Fatalf("%d brokers with one stopped", len(resp.Brokers))
	}
	p := resp.Topics[1].Partitions[0]
	if p.ErrorCode != 5 || p.LeaderID != -1 || len(p.OfflineReplicas) != 1 || p.OfflineReplicas[0] != 3 {
		t.Fatalf("partition led by a stopped broker: %+v", p)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2, AutoCreateTopics: true})
	req := &protocol.MetadataRequest{Topics: []protocol.MetadataRequestTopic{{Name: "new"}}, AllowAutoTopicCreation: true}
	resp := dial(t, c.Broker(1).Addr()).roundTrip(req, 12).(*protocol.MetadataResponse)
	if tp := resp.Topics[0]; tp.ErrorCode != 0 || len(tp.Partitions) != 1 || len(tp.Partitions[0].ReplicaNodes) != 2 {
		t.Fatalf("auto-created topic: %+v", tp)
	}
}

func TestCreateDeleteTopics(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	cl := dial(t, c.Broker(2).Addr())
	create := &protocol.CreateTopicsRequest{Topics: []protocol.CreateTopicsRequestTopic{
		{Name: "a", NumPartitions: 2, ReplicationFactor: 2},
		{Name: "b", NumPartitions: -1, ReplicationFactor: -1, Assignments: []protocol.CreateTopicsRequestAssignment{{PartitionIndex: 0, BrokerIDs: []int32{3, 1}}}},
		{Name: "c", NumPartitions: 1, ReplicationFactor: 4},
	}}
	resp := cl.roundTrip(create, 7).(*protocol.CreateTopicsResponse)
	if got := [3]int16{resp.Topics[0].ErrorCode, resp.Topics[1].ErrorCode, resp.Topics[2].ErrorCode}; got != [3]int16{0, 0, 38} {
		t.Fatalf("create errors %v", got)
	}
	if resp.Topics[0].TopicID != c.TopicID("a") || resp.Topics[0].NumPartitions != 2 {
		t.Fatalf("create a: %+v", resp.Topics[0])
	}
	if s := c.Partition("b", 0); s.Leader != 3 || len(s.Replicas) != 2 {
		t.Fatalf("b/0: %+v", s)
	}
	if r := cl.roundTrip(create, 2).(*protocol.CreateTopicsResponse); r.Topics[0].ErrorCode != 36 {
		t.Fatalf("re-create: %+v", r.Topics[0])
	}

	del := cl.roundTrip(&protocol.DeleteTopicsRequest{Topics: []protocol.DeleteTopicsRequestTopic{{TopicID: c.TopicID("a")}, {Name: "zz"}}}, 6).(*protocol.DeleteTopicsResponse)
	if del.Responses[0].ErrorCode != 0 || del.Responses[0].Name != "a" || del.Responses[1].ErrorCode != 3 {
		t.Fatalf("delete: %+v", del.Responses)
	}
	del = cl.roundTrip(&protocol.DeleteTopicsRequest{TopicNames: []string{"b", "a"}}, 1).(*protocol.DeleteTopicsResponse)
	if del.Responses[0].ErrorCode != 0 || del.Responses[1].ErrorCode != 3 {
		t.Fatalf("delete by name: %+v", del.Responses)
	}
}

func TestSASLPlain(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{SASL: &fakebroker.Plain{User: "alice", Password: "secret"}})
	c.CreateTopic("t", 1, 1)
	addr := c.Broker(1).Addr()

	// Unauthenticated requests other than ApiVersions close the connection.
	cl := dial(t, addr)
	cl.roundTrip(&protocol.ApiVersionsRequest{}, 3)
	if _, err := cl.tryRoundTrip(&protocol.MetadataRequest{}, 9); err == nil {
		t.Fatal("metadata answered before authentication")
	}

	// A wrong password is SASL_AUTHENTICATION_FAILED, then the connection closes.
	cl = dial(t, addr)
	if r := cl.roundTrip(&protocol.SaslHandshakeRequest{Mechanism: "SCRAM-SHA-256"}, 1).(*protocol.SaslHandshakeResponse); r.ErrorCode != 33 || len(r.Mechanisms) != 1 || r.Mechanisms[0] != "PLAIN" {
		t.Fatalf("handshake SCRAM: %+v", r)
	}
	cl.roundTrip(&protocol.SaslHandshakeRequest{Mechanism: "PLAIN"}, 1)
	if r := cl.roundTrip(&protocol.SaslAuthenticateRequest{AuthBytes: []byte("\x00alice\x00wrong")}, 2).(*protocol.SaslAuthenticateResponse); r.ErrorCode != 58 {
		t.Fatalf("wrong password: %+v", r)
	}
	if _, err := cl.tryRoundTrip(&protocol.ApiVersionsRequest{}, 3); err == nil {
		t.Fatal("connection still open after a failed authentication")
	}

	cl = dial(t, addr)
	cl.roundTrip(&protocol.SaslHandshakeRequest{Mechanism: "PLAIN"}, 1)
	if r := cl.roundTrip(&protocol.SaslAuthenticateRequest{AuthBytes: []byte("\x00alice\x00secret")}, 1).(*protocol.SaslAuthenticateResponse); r.ErrorCode != 0 {
		t.Fatalf("right password: %+v", r)
	}
	if r := cl.roundTrip(&protocol.MetadataRequest{}, 9).(*protocol.MetadataResponse); len(r.Topics) != 1 {
		t.Fatalf("metadata after authentication: %+v", r)
	}
}
