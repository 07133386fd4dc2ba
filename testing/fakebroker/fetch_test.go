package fakebroker_test

import (
	"testing"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// fetchReq is a consumer fetch of one partition of topic "t".
func fetchReq(c *fakebroker.Cluster, off int64, rack string, epoch int32) *protocol.FetchRequest {
	return &protocol.FetchRequest{
		ReplicaID: -1, ReplicaEpoch: -1, MaxWaitMs: 500, MinBytes: 1, MaxBytes: 1 << 20,
		SessionEpoch: -1, RackID: rack,
		Topics: []protocol.FetchRequestTopic{{Topic: "t", TopicID: c.TopicID("t"), Partitions: []protocol.FetchRequestPartition{{
			CurrentLeaderEpoch: epoch, FetchOffset: off, LastFetchedEpoch: -1, LogStartOffset: -1, PartitionMaxBytes: 1 << 20,
		}}}},
	}
}

func fetchPart(t *testing.T, cl *rawClient, req *protocol.FetchRequest, v int16) protocol.FetchResponsePartition {
	t.Helper()
	resp := cl.roundTrip(req, v).(*protocol.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch v%d: %+v", v, resp)
	}
	return resp.Topics[0].Partitions[0]
}

func values(t *testing.T, p protocol.FetchResponsePartition, from int64) []string {
	t.Helper()
	recs, err := protocol.NewRecordReader(p.Records, protocol.RecordReadOptions{MinOffset: from, MaxOffset: p.HighWatermark}).ReadAll(nil)
	if err != nil {
		t.Fatalf("reading records: %v", err)
	}
	var vs []string
	for _, r := range recs {
		vs = append(vs, string(r.Value))
	}
	return vs
}

func rackCluster(t *testing.T) *fakebroker.Cluster {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true})
	c.CreateTopic("t", 1, 3) // replicas 1, 2, 3; leader 1 in rack a
	c.AppendRecords("t", 0, "x", "y", "z")
	return c
}

func TestRackAwareFetch(t *testing.T) {
	c := rackCluster(t)
	leader, follower := dial(t, c.Broker(1).Addr()), dial(t, c.Broker(2).Addr())

	// The leader sends a consumer in rack b to broker 2, without records.
	for _, v := range []int16{11, 13, 17} {
		p := fetchPart(t, leader, fetchReq(c, 0, "b", 0), v)
		if p.ErrorCode != 0 || p.PreferredReadReplica != 2 || p.Records != nil || p.HighWatermark != 3 {
			t.Fatalf("v%d leader: %+v", v, p)
		}
	}
	// Broker 2 serves it.
	p := fetchPart(t, follower, fetchReq(c, 0, "b", 0), 11)
	if got := values(t, p, 0); p.ErrorCode != 0 || p.PreferredReadReplica != -1 || len(got) != 3 || got[2] != "z" {
		t.Fatalf("follower: %+v %q", p, got)
	}
	if c.Broker(2).FetchBytes() == 0 || c.Broker(3).FetchBytes() != 0 {
		t.Fatalf("fetch bytes: %d %d", c.Broker(2).FetchBytes(), c.Broker(3).FetchBytes())
	}
	// Before v11 a follower refuses consumers.
	if p := fetchPart(t, follower, fetchReq(c, 0, "b", 0), 10); p.ErrorCode != 6 {
		t.Fatalf("follower v10: %+v", p)
	}
	// A consumer in the leader's rack, or with no rack, stays on the leader.
	for _, rack := range []string{"a", ""} {
		if p := fetchPart(t, leader, fetchReq(c, 0, rack, 0), 11); p.PreferredReadReplica != -1 || len(values(t, p, 0)) != 3 {
			t.Fatalf("rack %q: %+v", rack, p)
		}
	}

	// A lagging follower serves up to its high watermark, and the leader
	// stops sending consumers to it for offsets it does not hold.
	c.AppendRecords("t", 0, "w")
	c.SetReplicaHighWatermark("t", 0, 2, 3)
	if p := fetchPart(t, follower, fetchReq(c, 3, "b", 0), 11); p.ErrorCode != 0 || p.HighWatermark != 3 || p.Records != nil {
		t.Fatalf("lagging follower at its end: %+v", p)
	}
	if p := fetchPart(t, follower, fetchReq(c, 4, "b", 0), 11); p.ErrorCode != 1 {
		t.Fatalf("lagging follower past its end: %+v", p)
	}
	if p := fetchPart(t, leader, fetchReq(c, 3, "b", 0), 11); p.PreferredReadReplica != 2 {
		t.Fatalf("leader, offset the follower holds: %+v", p)
	}
	c.SetReplicaHighWatermark("t", 0, 2, 2)
	if p := fetchPart(t, leader, fetchReq(c, 3, "b", 0), 11); p.PreferredReadReplica != -1 || len(values(t, p, 3)) != 1 || p.HighWatermark != 4 {
		t.Fatalf("leader, offset the follower lacks: %+v", p)
	}

	// Without the selector the leader serves everyone.
	c.SetRackAwareSelector(false)
	if p := fetchPart(t, leader, fetchReq(c, 0, "b", 0), 11); p.PreferredReadReplica != -1 || len(values(t, p, 0)) != 4 {
		t.Fatalf("no selector: %+v", p)
	}
}

func TestPreferredReplicaNeedsISRAndLiveBroker(t *testing.T) {
	c := rackCluster(t)
	leader := dial(t, c.Broker(1).Addr())
	c.SetPartition("t", 0, fakebroker.PartitionState{Leader: 1, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 3}})
	if p := fetchPart(t, leader, fetchReq(c, 0, "b", 0), 11); p.PreferredReadReplica != -1 {
		t.Fatalf("out-of-sync replica preferred: %+v", p)
	}
	if p := fetchPart(t, leader, fetchReq(c, 0, "c", 0), 11); p.PreferredReadReplica != 3 {
		t.Fatalf("rack c: %+v", p)
	}
	c.Broker(3).Stop()
	if p := fetchPart(t, leader, fetchReq(c, 0, "c", 0), 11); p.PreferredReadReplica != -1 {
		t.Fatalf("stopped replica preferred: %+v", p)
	}
}

func TestFetchErrors(t *testing.T) {
	c := rackCluster(t)
	leader := dial(t, c.Broker(1).Addr())
	if p := fetchPart(t, leader, fetchReq(c, 4, "", 0), 12); p.ErrorCode != 1 {
		t.Fatalf("past the end: %+v", p)
	}
	if p := fetchPart(t, leader, fetchReq(c, 3, "", 0), 12); p.ErrorCode != 0 || p.Records != nil {
		t.Fatalf("at the end: %+v", p)
	}
	c.SetLogStartOffset("t", 0, 2)
	if p := fetchPart(t, leader, fetchReq(c, 1, "", 0), 12); p.ErrorCode != 1 || p.LogStartOffset != 2 {
		t.Fatalf("before the start: %+v", p)
	}

	// Leadership moves to broker 3: epoch 1.
	c.SetLeader("t", 0, 3)
	if p := fetchPart(t, leader, fetchReq(c, 2, "", 0), 12); p.ErrorCode != 74 {
		t.Fatalf("stale epoch: %+v", p)
	}
	if p := fetchPart(t, leader, fetchReq(c, 2, "", 5), 12); p.ErrorCode != 75 {
		t.Fatalf("future epoch: %+v", p)
	}
	// Old consumer fetch at the old leader: NOT_LEADER_OR_FOLLOWER, and from
	// v16 the new leader and its address (KIP-951).
	resp := leader.roundTrip(fetchReq(c, 2, "", 1), 16).(*protocol.FetchResponse)
	p := resp.Topics[0].Partitions[0]
	// v16 consumers may read from followers; epoch -1 skips the check.
	if p.ErrorCode != 0 {
		t.Fatalf("v16 follower read: %+v", p)
	}
	if p := fetchPart(t, leader, fetchReq(c, 2, "", 1), 10); p.ErrorCode != 6 {
		t.Fatalf("v10 at the old leader: %+v", p)
	}
	resp = leader.roundTrip(fetchReq(c, 2, "", 0), 16).(*protocol.FetchResponse)
	p = resp.Topics[0].Partitions[0]
	if p.ErrorCode != 74 || p.CurrentLeader == nil || p.CurrentLeader.LeaderID != 3 || p.CurrentLeader.LeaderEpoch != 1 ||
		len(resp.NodeEndpoints) != 1 || resp.NodeEndpoints[0].Port != c.Broker(3).Port() {
		t.Fatalf("v16 fenced: %+v %+v", p, resp.NodeEndpoints)
	}

	// Unknown topic, by name and by id.
	req := fetchReq(c, 0, "", -1)
	req.Topics[0].Topic, req.Topics[0].TopicID = "nope", [16]byte{1}
	if p := fetchPart(t, leader, req, 12); p.ErrorCode != 3 {
		t.Fatalf("unknown topic: %+v", p)
	}
	if p := fetchPart(t, leader, req, 13); p.ErrorCode != 100 {
		t.Fatalf("unknown topic id: %+v", p)
	}
}

func TestScriptedFetch(t *testing.T) {
	c := rackCluster(t)
	b := c.Broker(1)
	b.Script(protocol.Fetch, 3, fakebroker.Step{ErrorCode: 6}) // an error on the 3rd fetch
	b.Script(protocol.Fetch, 4, fakebroker.Step{Edit: fakebroker.PreferReplica(3)})
	cl := dial(t, b.Addr())
	for i := 1; i <= 5; i++ {
		p := fetchPart(t, cl, fetchReq(c, 0, "", 0), 12)
		switch i {
		case 3:
			if p.ErrorCode != 6 || p.Records != nil {
				t.Fatalf("fetch %d: %+v", i, p)
			}
		case 4:
			if p.ErrorCode != 0 || p.PreferredReadReplica != 3 || p.Records != nil || p.HighWatermark != 3 {
				t.Fatalf("fetch %d: %+v", i, p)
			}
		default:
			if p.ErrorCode != 0 || len(values(t, p, 0)) != 3 {
				t.Fatalf("fetch %d: %+v", i, p)
			}
		}
	}
	if n := b.Requests(protocol.Fetch); n != 5 {
		t.Fatalf("Requests(Fetch) = %d", n)
	}
	if got := b.Received(protocol.Fetch); len(got) != 5 || got[0].Header.Version != 12 {
		t.Fatalf("Received: %d", len(got))
	}

	// A held fetch is answered from the log as it is when released.
	release := make(chan struct{})
	n := b.ScriptNext(protocol.Fetch, fakebroker.Step{Action: fakebroker.Action{Wait: release}})
	req := fetchReq(c, 3, "", 0)
	corr := cl.send(req, 12)
	<-b.Await(protocol.Fetch, n)
	c.AppendRecords("t", 0, "late")
	close(release)
	resp, err := cl.recv(req, 12, corr)
	if err != nil {
		t.Fatal(err)
	}
	if got := values(t, resp.(*protocol.FetchResponse).Topics[0].Partitions[0], 3); len(got) != 1 || got[0] != "late" {
		t.Fatalf("held fetch: %q", got)
	}
}

func TestOldBrokerFetchVersion(t *testing.T) {
	c := rackCluster(t)
	b := c.Broker(2)
	b.SetMaxVersion(protocol.Fetch, 10)
	cl := dial(t, b.Addr())
	if vs := cl.roundTrip(&protocol.ApiVersionsRequest{}, 3).(*protocol.ApiVersionsResponse).Versions(); vs[protocol.Fetch].Max != 10 {
		t.Fatalf("advertised %+v", vs[protocol.Fetch])
	}
	if _, err := cl.tryRoundTrip(fetchReq(c, 0, "b", 0), 11); err == nil {
		t.Fatal("a v11 fetch to a broker limited to v10 was answered")
	}
}

func TestListOffsets(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic("t", 1, 2)
	c.Append("t", 0, protocol.Record{Value: []byte("a"), Timestamp: 1000}, protocol.Record{Value: []byte("b"), Timestamp: 3000})
	c.Append("t", 0, protocol.Record{Value: []byte("c"), Timestamp: 2000})
	c.SetLogStartOffset("t", 0, 1)

	list := func(b int32, ts int64, epoch int32) protocol.ListOffsetsResponsePartition {
		req := &protocol.ListOffsetsRequest{ReplicaID: -1, Topics: []protocol.ListOffsetsRequestTopic{{Name: "t", Partitions: []protocol.ListOffsetsRequestPartition{{CurrentLeaderEpoch: epoch, Timestamp: ts}}}}}
		return dial(t, c.Broker(b).Addr()).roundTrip(req, 7).(*protocol.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		ts, off, stamp int64
	}{{-1, 3, -1}, {-2, 1, -1}, {-3, 1, 3000}, {1500, 1, 3000}, {2500, 1, 3000}, {3001, -1, -1}, {0, 1, 3000}} {
		p := list(1, tc.ts, -1)
		if p.ErrorCode != 0 || p.Offset != tc.off || p.Timestamp != tc.stamp {
			t.Fatalf("timestamp %d: %+v", tc.ts, p)
		}
	}
	c.SetReplicaHighWatermark("t", 0, 1, 2)
	if p := list(1, -1, 0); p.Offset != 2 || p.LeaderEpoch != 0 {
		t.Fatalf("latest below a pinned high watermark: %+v", p)
	}
	if p := list(2, -1, -1); p.ErrorCode != 6 {
		t.Fatalf("follower: %+v", p)
	}
	if p := list(1, -1, 3); p.ErrorCode != 75 {
		t.Fatalf("future epoch: %+v", p)
	}
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic("t", 1, 2)
	c.AppendRecords("t", 0, "a", "b")
	c.SetLeader("t", 0, 2) // epoch 1 starts at 2
	c.AppendRecords("t", 0, "c")
	c.SetLeader("t", 0, 1) // epoch 2 starts at 3
	c.AppendRecords("t", 0, "d", "e")

	ask := func(b int32, current, epoch int32) protocol.OffsetForLeaderEpochResponsePartition {
		req := &protocol.OffsetForLeaderEpochRequest{ReplicaID: -1, Topics: []protocol.OffsetForLeaderEpochRequestTopic{{Topic: "t", Partitions: []protocol.OffsetForLeaderEpochRequestPartition{{CurrentLeaderEpoch: current, LeaderEpoch: epoch}}}}}
		return dial(t, c.Broker(b).Addr()).roundTrip(req, 4).(*protocol.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
	}
	for _, tc := range []struct {
		epoch, gotEpoch int32
		end             int64
	}{{0, 0, 2}, {1, 1, 3}, {2, 2, 5}, {3, -1, -1}} {
		if p := ask(1, 2, tc.epoch); p.ErrorCode != 0 || p.LeaderEpoch != tc.gotEpoch || p.EndOffset != tc.end {
			t.Fatalf("epoch %d: %+v", tc.epoch, p)
		}
	}
	if p := ask(2, 2, 0); p.ErrorCode != 6 {
		t.Fatalf("follower: %+v", p)
	}
	if p := ask(1, 1, 0); p.ErrorCode != 74 {
		t.Fatalf("fenced: %+v", p)
	}

	// A fetch whose last fetched epoch diverged learns where to truncate.
	req := fetchReq(c, 3, "", 2)
	req.Topics[0].Partitions[0].LastFetchedEpoch = 1
	req.Topics[0].Partitions[0].FetchOffset = 4
	if p := fetchPart(t, dial(t, c.Broker(1).Addr()), req, 12); p.DivergingEpoch == nil || p.DivergingEpoch.Epoch != 1 || p.DivergingEpoch.EndOffset != 3 {
		t.Fatalf("diverging: %+v", p)
	}
}

func TestProduce(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic("t", 2, 1) // partition 0 on broker 1, partition 1 on broker 2
	bb := protocol.NewRecordBatchBuilder()
	bb.Add(protocol.Record{Key: []byte("k"), Value: []byte("v1"), Timestamp: 5})
	bb.Add(protocol.Record{Value: []byte("v2"), Timestamp: 6})
	batch, err := bb.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	produce := func(acks int16, records []byte) *protocol.ProduceRequest {
		return &protocol.ProduceRequest{Acks: acks, TimeoutMs: 1000, Topics: []protocol.ProduceRequestTopic{{Name: "t", Partitions: []protocol.ProduceRequestPartition{
			{Index: 0, Records: records}, {Index: 1, Records: records},
		}}}}
	}
	cl := dial(t, c.Broker(1).Addr())
	c.AppendRecords("t", 0, "first")
	resp := cl.roundTrip(produce(-1, batch), 10).(*protocol.ProduceResponse)
	p0, p1 := resp.Topics[0].Partitions[0], resp.Topics[0].Partitions[1]
	if p0.ErrorCode != 0 || p0.BaseOffset != 1 || p1.ErrorCode != 6 || p1.CurrentLeader == nil || p1.CurrentLeader.LeaderID != 2 || len(resp.NodeEndpoints) != 1 {
		t.Fatalf("produce: %+v", resp)
	}
	// acks=0: no answer; the next request's answer comes next.
	cl.send(produce(0, batch), 10)
	cl.roundTrip(&protocol.ApiVersionsRequest{}, 3)
	// A corrupt batch is refused.
	bad := append([]byte(nil), batch...)
	bad[len(bad)-1] ^= 0xff
	if r := cl.roundTrip(produce(1, bad), 3).(*protocol.ProduceResponse); r.Topics[0].Partitions[0].ErrorCode != 2 {
		t.Fatalf("corrupt batch: %+v", r)
	}

	recs := c.Records("t", 0)
	if len(recs) != 5 || string(recs[1].Key) != "k" || recs[2].Offset != 2 || recs[4].Offset != 4 || recs[4].Timestamp != 6 {
		t.Fatalf("log: %+v", recs)
	}
	if p := fetchPartT(t, cl, c, 1); len(values(t, p, 1)) != 4 {
		t.Fatalf("fetch after produce: %+v", p)
	}
}

// fetchPartT fetches partition 0 of "t" from off at v12.
func fetchPartT(t *testing.T, cl *rawClient, c *fakebroker.Cluster, off int64) protocol.FetchResponsePartition {
	return fetchPart(t, cl, fetchReq(c, off, "", -1), 12)
}
