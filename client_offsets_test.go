package kafka

import (
	"errors"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// clientOffsetsAppend writes records with timestamps t0, t0+1s, ... to a
// partition of the fake.
func clientOffsetsAppend(cl *fakebroker.Cluster, topic string, p int32, t0 time.Time, n int) {
	recs := make([]protocol.Record, n)
	for i := range recs {
		recs[i] = protocol.Record{Timestamp: t0.Add(time.Duration(i) * time.Second).UnixMilli(), Value: []byte("v")}
	}
	cl.Append(topic, p, recs...)
}

// clientOffsetsListed returns, per broker id, the (topic, partition,
// timestamp) lookups of every ListOffsets request the broker got, one
// string per request.
func clientOffsetsListed(cl *fakebroker.Cluster) map[int32][]string {
	out := map[int32][]string{}
	for _, b := range cl.Brokers() {
		for _, r := range b.Received(protocol.ListOffsets) {
			var parts []string
			for _, t := range r.Request.(*protocol.ListOffsetsRequest).Topics {
				for _, p := range t.Partitions {
					parts = append(parts, t.Name+"/"+strconv.Itoa(int(p.PartitionIndex))+"@"+strconv.FormatInt(p.Timestamp, 10))
				}
			}
			sort.Strings(parts)
			out[b.ID()] = append(out[b.ID()], strings.Join(parts, ","))
		}
		sort.Strings(out[b.ID()])
	}
	return out
}

func TestClientOffsetsListToLeaders(t *testing.T) {
	cl, c := clientMetadataFake(t)
	cl.CreateTopic("u", 2, 2)
	t0 := time.UnixMilli(1_700_000_000_000).UTC()
	clientOffsetsAppend(cl, "t", 0, t0, 3)
	clientOffsetsAppend(cl, "t", 1, t0, 5)
	clientOffsetsAppend(cl, "u", 1, t0, 2)
	cl.SetLogStartOffset("t", 1, 2)

	res, err := c.ListOffsets(clientMetadataCtx(t), &ListOffsetsRequest{
		Topics: map[string][]OffsetRequest{
			"t": {FirstOffsetOf(0), LastOffsetOf(0), TimeOffsetOf(0, t0.Add(1500*time.Millisecond)),
				FirstOffsetOf(1), LastOffsetOf(1), LastOffsetOf(1), // a repeat is asked once
				LastOffsetOf(2), TimeOffsetOf(2, t0)},
			"u": {FirstOffsetOf(1), TimeOffsetOf(1, t0.Add(time.Hour))},
		},
		IsolationLevel: ReadCommitted,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]PartitionOffsets{
		"t": {
			{Partition: 0, FirstOffset: 0, LastOffset: 3, Offsets: map[int64]time.Time{2: t0.Add(1500 * time.Millisecond)}},
			{Partition: 1, FirstOffset: 2, LastOffset: 5, Offsets: map[int64]time.Time{}},
			{Partition: 2, FirstOffset: -1, LastOffset: 0, Offsets: map[int64]time.Time{-1: t0}},
		},
		"u": {
			{Partition: 1, FirstOffset: 0, LastOffset: -1, Offsets: map[int64]time.Time{-1: t0.Add(time.Hour)}},
		},
	}
	if !reflect.DeepEqual(res.Topics, want) {
		t.Errorf("Topics:\n got %+v\nwant %+v", res.Topics, want)
	}

	// Each leader got its partitions, one lookup per partition and request:
	// t/0 and t/2 (and u/1) have several lookups, so rounds.
	got := clientOffsetsListed(cl)
	wantSent := map[int32][]string{
		1: {"t/0@-1", "t/0@-2", "t/0@1700000001500"},
		2: {"t/1@-1,u/1@1700003600000", "t/1@-2,u/1@-2"},
		3: {"t/2@-1", "t/2@1700000000000"},
	}
	if !reflect.DeepEqual(got, wantSent) {
		t.Errorf("requests sent:\n got %q\nwant %q", got, wantSent)
	}
	for _, b := range cl.Brokers() {
		for _, r := range b.Received(protocol.ListOffsets) {
			lr := r.Request.(*protocol.ListOffsetsRequest)
			if lr.ReplicaID != -1 || lr.IsolationLevel != 1 {
				t.Errorf("broker %d: request %+v", b.ID(), lr)
			}
		}
	}
}

func TestClientOffsetsListErrors(t *testing.T) {
	cl, c := clientMetadataFake(t)
	// t/1's leader answers NOT_LEADER_OR_FOLLOWER.
	cl.Broker(2).Script(protocol.ListOffsets, 1, fakebroker.Step{ErrorCode: 6})
	res, err := c.ListOffsets(clientMetadataCtx(t), &ListOffsetsRequest{Topics: map[string][]OffsetRequest{
		"t":    {LastOffsetOf(0), LastOffsetOf(1), FirstOffsetOf(7)},
		"nope": {FirstOffsetOf(0)},
		"none": {},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Topics["none"]; ok || len(res.Topics) != 2 {
		t.Errorf("Topics = %+v; want t and nope only", res.Topics)
	}
	ts := res.Topics["t"]
	if len(ts) != 3 {
		t.Fatalf("t: %+v", ts)
	}
	if ts[0].Partition != 0 || ts[0].Error != nil || ts[0].LastOffset != 0 {
		t.Errorf("t/0 = %+v", ts[0])
	}
	if ts[1].Partition != 1 || !errors.Is(ts[1].Error, NotLeaderForPartition) || ts[1].LastOffset != -1 {
		t.Errorf("t/1 = %+v; want NotLeaderForPartition", ts[1])
	}
	if ts[2].Partition != 7 || !errors.Is(ts[2].Error, UnknownTopicOrPartition) {
		t.Errorf("t/7 = %+v; want UnknownTopicOrPartition", ts[2])
	}
	if n := res.Topics["nope"]; len(n) != 1 || !errors.Is(n[0].Error, UnknownTopicOrPartition) || n[0].FirstOffset != -1 {
		t.Errorf("nope = %+v; want UnknownTopicOrPartition", n)
	}
	if n := cl.Broker(3).Requests(protocol.ListOffsets); n != 0 {
		t.Errorf("broker 3 leads nothing asked for but got %d requests", n)
	}
}

func TestClientOffsetsListLeaderDownOrFailing(t *testing.T) {
	cl, c := clientMetadataFake(t)
	cl.Broker(3).Stop() // t/2 has no leader
	// Broker 2 drops the connection of every ListOffsets request.
	cl.Broker(2).Handle(protocol.ListOffsets, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return nil, fakebroker.Action{Close: true}
	})
	ctx := clientMetadataCtx(t)
	res, err := c.ListOffsets(ctx, &ListOffsetsRequest{
		Addr:   TCP(cl.Broker(1).Addr()),
		Topics: map[string][]OffsetRequest{"t": {LastOffsetOf(0), LastOffsetOf(1), LastOffsetOf(2)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := res.Topics["t"]
	if len(ts) != 3 || ts[0].Error != nil {
		t.Fatalf("t = %+v", ts)
	}
	if !errors.Is(ts[1].Error, Unknown) || !strings.Contains(ts[1].Error.Error(), "ListOffsets") {
		t.Errorf("t/1 (failed request) = %+v; want Unknown with the cause", ts[1])
	}
	if !errors.Is(ts[2].Error, LeaderNotAvailable) {
		t.Errorf("t/2 (leader down) = %+v; want LeaderNotAvailable", ts[2])
	}

	// When every request fails, the method fails.
	_, err = c.ListOffsets(ctx, &ListOffsetsRequest{
		Addr:   TCP(cl.Broker(1).Addr()),
		Topics: map[string][]OffsetRequest{"t": {LastOffsetOf(1), FirstOffsetOf(1)}},
	})
	if err == nil || !strings.Contains(err.Error(), "kafka.(*Client).ListOffsets") {
		t.Errorf("every request failed: err = %v", err)
	}
}

func TestClientOffsetsListBadInput(t *testing.T) {
	cl, c := clientMetadataFake(t)
	ctx := clientMetadataCtx(t)
	if _, err := c.ListOffsets(ctx, nil); err == nil {
		t.Error("ListOffsets(nil) succeeded")
	}
	if _, err := (&Client{}).ListOffsets(ctx, &ListOffsetsRequest{}); err == nil {
		t.Error("ListOffsets without an address succeeded")
	}
	res, err := c.ListOffsets(ctx, &ListOffsetsRequest{})
	if err != nil || res.Topics == nil || len(res.Topics) != 0 {
		t.Errorf("empty request: %+v, %v", res, err)
	}
	for _, b := range cl.Brokers() {
		if n := b.Requests(protocol.Metadata) + b.Requests(protocol.ListOffsets); n != 0 {
			t.Errorf("empty request: broker %d got %d requests", b.ID(), n)
		}
	}
}

func TestClientOffsetsHelpers(t *testing.T) {
	at := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	if r := TimeOffsetOf(3, at); r.Partition != 3 || r.Timestamp != at.UnixMilli() {
		t.Errorf("TimeOffsetOf = %+v", r)
	}
	if r := TimeOffsetOf(0, time.Time{}); r.Timestamp != 0 {
		t.Errorf("TimeOffsetOf(zero time) = %+v", r)
	}
	if r := FirstOffsetOf(2); r != (OffsetRequest{2, FirstOffset}) {
		t.Errorf("FirstOffsetOf = %+v", r)
	}
	if r := LastOffsetOf(2); r != (OffsetRequest{2, LastOffset}) {
		t.Errorf("LastOffsetOf = %+v", r)
	}
}

// clientOffsetsOnlyAt checks that only broker id got requests of kind key.
func clientOffsetsOnlyAt(t *testing.T, cl *fakebroker.Cluster, key protocol.ApiKey, id int32, n int) {
	t.Helper()
	for _, b := range cl.Brokers() {
		want := 0
		if b.ID() == id {
			want = n
		}
		if got := b.Requests(key); got != want {
			t.Errorf("broker %d got %d %s requests; want %d", b.ID(), got, key, want)
		}
	}
}

func TestClientOffsetsCommitFetch(t *testing.T) {
	for _, max := range []int16{9, 7} { // batched (v8+) and single-group OffsetFetch
		cl, c := clientMetadataFake(t)
		cl.CreateTopic("u", 1, 1)
		for _, b := range cl.Brokers() {
			b.SetMaxVersion(protocol.OffsetFetch, max)
		}
		ctx := clientMetadataCtx(t)
		com, err := c.OffsetCommit(ctx, &OffsetCommitRequest{
			GroupID:      "g",
			GenerationID: -1,
			Topics: map[string][]OffsetCommit{
				"t": {{Partition: 0, Offset: 10, Metadata: "m0"}, {Partition: 2, Offset: 20}},
				"u": {{Partition: 0, Offset: 5}, {Partition: 4, Offset: 1}},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		wantCom := map[string][]OffsetCommitPartition{
			"t": {{Partition: 0}, {Partition: 2}},
			"u": {{Partition: 0}, {Partition: 4, Error: UnknownTopicOrPartition}},
		}
		if !reflect.DeepEqual(com.Topics, wantCom) {
			t.Errorf("v%d: OffsetCommit = %+v; want %+v", max, com.Topics, wantCom)
		}
		clientOffsetsOnlyAt(t, cl, protocol.OffsetCommit, 2, 1)
		sent := cl.Broker(2).Received(protocol.OffsetCommit)[0].Request.(*protocol.OffsetCommitRequest)
		if sent.GenerationID != -1 || sent.MemberID != "" || sent.GroupInstanceID != nil {
			t.Errorf("v%d: commit sent %+v", max, sent)
		}

		fe, err := c.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"t": {0, 1, 2}}})
		if err != nil || fe.Error != nil {
			t.Fatalf("v%d: OffsetFetch = %+v, %v", max, fe, err)
		}
		wantFe := map[string][]OffsetFetchPartition{"t": {
			{Partition: 0, CommittedOffset: 10, Metadata: "m0"},
			{Partition: 1, CommittedOffset: -1},
			{Partition: 2, CommittedOffset: 20},
		}}
		if !reflect.DeepEqual(fe.Topics, wantFe) {
			t.Errorf("v%d: OffsetFetch = %+v; want %+v", max, fe.Topics, wantFe)
		}

		// nil Topics: every committed offset of the group.
		all, err := c.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: "g"})
		if err != nil || all.Error != nil {
			t.Fatalf("v%d: OffsetFetch(all) = %+v, %v", max, all, err)
		}
		wantAll := map[string][]OffsetFetchPartition{
			"t": {{Partition: 0, CommittedOffset: 10, Metadata: "m0"}, {Partition: 2, CommittedOffset: 20}},
			"u": {{Partition: 0, CommittedOffset: 5}},
		}
		if !reflect.DeepEqual(all.Topics, wantAll) {
			t.Errorf("v%d: OffsetFetch(all) = %+v; want %+v", max, all.Topics, wantAll)
		}
		clientOffsetsOnlyAt(t, cl, protocol.OffsetFetch, 2, 2)
		last := cl.Broker(2).Received(protocol.OffsetFetch)[1].Request.(*protocol.OffsetFetchRequest)
		if max >= 8 && (len(last.Groups) != 1 || last.Groups[0].GroupID != "g" || last.Groups[0].Topics != nil) {
			t.Errorf("v%d: fetch-all sent %+v", max, last)
		}
		if max < 8 && (last.GroupID != "g" || last.Topics != nil) {
			t.Errorf("v%d: fetch-all sent %+v", max, last)
		}

		// ConsumerOffsets reads every partition of the topic.
		co, err := c.ConsumerOffsets(ctx, TopicAndGroup{Topic: "t", GroupId: "g"})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int64{0: 10, 1: -1, 2: 20}; !reflect.DeepEqual(co, want) {
			t.Errorf("v%d: ConsumerOffsets = %v; want %v", max, co, want)
		}
	}
}

func TestClientOffsetsCommitInstanceAndErrors(t *testing.T) {
	cl, c := clientMetadataFake(t)
	ctx := clientMetadataCtx(t)
	cl.Broker(2).Script(protocol.OffsetCommit, 1, fakebroker.Step{ErrorCode: 27}) // REBALANCE_IN_PROGRESS
	res, err := c.OffsetCommit(ctx, &OffsetCommitRequest{
		GroupID: "g", GenerationID: 4, MemberID: "m-1", InstanceID: "static-1",
		Topics: map[string][]OffsetCommit{"t": {{Partition: 1, Offset: 3}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Topics["t"]; len(p) != 1 || p[0].Partition != 1 || !errors.Is(p[0].Error, RebalanceInProgress) {
		t.Errorf("OffsetCommit = %+v; want RebalanceInProgress", res.Topics)
	}
	sent := cl.Broker(2).Received(protocol.OffsetCommit)[0].Request.(*protocol.OffsetCommitRequest)
	if sent.GenerationID != 4 || sent.MemberID != "m-1" || sent.GroupInstanceID == nil || *sent.GroupInstanceID != "static-1" {
		t.Errorf("commit sent %+v", sent)
	}
	if p := sent.Topics[0].Partitions[0]; p.CommittedLeaderEpoch != -1 || p.CommittedMetadata == nil || *p.CommittedMetadata != "" {
		t.Errorf("commit partition sent %+v", p)
	}

	if _, err := c.OffsetCommit(ctx, nil); err == nil {
		t.Error("OffsetCommit(nil) succeeded")
	}
	if _, err := (&Client{}).OffsetCommit(ctx, &OffsetCommitRequest{GroupID: "g"}); err == nil {
		t.Error("OffsetCommit without an address succeeded")
	}
}

func TestClientOffsetsFetchGroupError(t *testing.T) {
	ctx := clientMetadataCtx(t)
	for _, max := range []int16{9, 5} {
		cl, c := clientMetadataFake(t)
		b2 := cl.Broker(2)
		b2.SetMaxVersion(protocol.OffsetFetch, max)
		b2.Handle(protocol.OffsetFetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := &protocol.OffsetFetchResponse{ThrottleTimeMs: 5}
			if hdr.Version < 8 {
				resp.ErrorCode = 30 // GROUP_AUTHORIZATION_FAILED
			} else {
				resp.Groups = []protocol.OffsetFetchResponseGroup{{GroupID: "g", ErrorCode: 30}}
			}
			return resp, fakebroker.Action{}
		})
		res, err := c.OffsetFetch(ctx, &OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"t": {0}}})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(res.Error, GroupAuthorizationFailed) || len(res.Topics) != 0 || res.Throttle != 5*time.Millisecond {
			t.Errorf("v%d: OffsetFetch = %+v; want GroupAuthorizationFailed", max, res)
		}
		if _, err := c.ConsumerOffsets(ctx, TopicAndGroup{Topic: "t", GroupId: "g"}); !errors.Is(err, GroupAuthorizationFailed) {
			t.Errorf("v%d: ConsumerOffsets: %v; want GroupAuthorizationFailed", max, err)
		}
	}
	_, c := clientMetadataFake(t)
	if _, err := c.OffsetFetch(ctx, nil); err == nil {
		t.Error("OffsetFetch(nil) succeeded")
	}
	if _, err := c.ConsumerOffsets(ctx, TopicAndGroup{Topic: "nope", GroupId: "g"}); !errors.Is(err, UnknownTopicOrPartition) {
		t.Errorf("ConsumerOffsets of an unknown topic: %v", err)
	}
}

func TestClientOffsetsCoordinatorUnavailable(t *testing.T) {
	cl, c := clientMetadataFake(t)
	cl.Broker(2).Stop() // the coordinator
	ctx := clientMetadataCtx(t)
	addr := TCP(cl.Broker(1).Addr())
	_, err := c.OffsetFetch(ctx, &OffsetFetchRequest{Addr: addr, GroupID: "g"})
	if !errors.Is(err, GroupCoordinatorNotAvailable) || !strings.Contains(err.Error(), "kafka.(*Client).OffsetFetch") {
		t.Errorf("OffsetFetch: %v", err)
	}
	_, err = c.OffsetCommit(ctx, &OffsetCommitRequest{Addr: addr, GroupID: "g", GenerationID: -1, Topics: map[string][]OffsetCommit{"t": {{Partition: 0, Offset: 1}}}})
	if !errors.Is(err, GroupCoordinatorNotAvailable) {
		t.Errorf("OffsetCommit: %v", err)
	}
	_, err = c.OffsetDelete(ctx, &OffsetDeleteRequest{Addr: addr, GroupID: "g", Topics: map[string][]int{"t": {0}}})
	if !errors.Is(err, GroupCoordinatorNotAvailable) {
		t.Errorf("OffsetDelete: %v", err)
	}
}

func TestClientOffsetsDelete(t *testing.T) {
	cl, c := clientMetadataFake(t)
	ctx := clientMetadataCtx(t)
	b2 := cl.Broker(2)
	b2.Handle(protocol.OffsetDelete, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		r := req.(*protocol.OffsetDeleteRequest)
		resp := &protocol.OffsetDeleteResponse{ThrottleTimeMs: 3}
		if r.GroupID == "missing" {
			resp.ErrorCode = 69 // GROUP_ID_NOT_FOUND
			return resp, fakebroker.Action{}
		}
		for _, t := range r.Topics {
			rt := protocol.OffsetDeleteResponseTopic{Name: t.Name}
			for _, p := range t.Partitions {
				code := int16(0)
				if t.Name == "busy" {
					code = 86 // GROUP_SUBSCRIBED_TO_TOPIC
				}
				rt.Partitions = append(rt.Partitions, protocol.OffsetDeleteResponsePartition{PartitionIndex: p.PartitionIndex, ErrorCode: code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, fakebroker.Action{}
	})

	res, err := c.OffsetDelete(ctx, &OffsetDeleteRequest{GroupID: "g", Topics: map[string][]int{"t": {0, 2}, "busy": {1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := &OffsetDeleteResponse{Throttle: 3 * time.Millisecond, Topics: map[string][]OffsetDeletePartition{
		"t":    {{Partition: 0}, {Partition: 2}},
		"busy": {{Partition: 1, Error: GroupSubscribedToTopic}},
	}}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("OffsetDelete = %+v; want %+v", res, want)
	}
	wantSent := &protocol.OffsetDeleteRequest{GroupID: "g", Topics: []protocol.OffsetDeleteRequestTopic{
		{Name: "busy", Partitions: []protocol.OffsetDeleteRequestPartition{{PartitionIndex: 1}}},
		{Name: "t", Partitions: []protocol.OffsetDeleteRequestPartition{{PartitionIndex: 0}, {PartitionIndex: 2}}},
	}}
	got := b2.Received(protocol.OffsetDelete)
	if len(got) != 1 || !reflect.DeepEqual(got[0].Request, wantSent) {
		t.Errorf("sent %+v; want %+v", got, wantSent)
	}

	res, err = c.OffsetDelete(ctx, &OffsetDeleteRequest{GroupID: "missing", Topics: map[string][]int{"t": {0}}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Error, GroupIdNotFound) || len(res.Topics) != 0 {
		t.Errorf("OffsetDelete of a missing group = %+v; want GroupIdNotFound", res)
	}
	clientOffsetsOnlyAt(t, cl, protocol.OffsetDelete, 2, 2)

	if _, err := c.OffsetDelete(ctx, nil); err == nil {
		t.Error("OffsetDelete(nil) succeeded")
	}
}
