package integration

// Integration tests of Client.ListOffsets, OffsetCommit, OffsetFetch, OffsetDelete and ConsumerOffsets
// against the real 3-rack cluster: first, last and time offsets of partitions led by different brokers,
// and a standalone group's commit, fetch and delete of offsets.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// coffsProduce writes n messages to a partition with the leader's Conn, with times t0, t0+1s, ...
func coffsProduce(t *testing.T, c *ktesting.Cluster, topic string, partition, n int, t0 time.Time) {
	t.Helper()
	if n == 0 {
		return
	}
	conn := dialLeader(t, newDialer(), c.Brokers[0], topic, partition)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: []byte(fmt.Sprintf("m%d", i)), Time: t0.Add(time.Duration(i) * time.Second)}
	}
	if _, err := conn.WriteMessages(msgs...); err != nil {
		t.Fatalf("producing to %s/%d: %v", topic, partition, err)
	}
}

func TestClientOffsetsIntegrationListOffsets(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 3})
	client := cmetaClient(t, c)
	ctx := testContext(t, time.Minute)

	t0 := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
	counts := []int{10, 4, 0}
	for p, n := range counts {
		coffsProduce(t, c, topic, p, n, t0)
	}
	// The partitions' leaders, to check that each got its lookups (a wrong broker answers
	// NOT_LEADER_OR_FOLLOWER).
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int]bool{}
	for _, p := range md.Topics[0].Partitions {
		leaders[p.Leader.ID] = true
	}
	t.Logf("partition leaders: %v", leaders)

	res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {
			kafka.FirstOffsetOf(0), kafka.LastOffsetOf(0), kafka.TimeOffsetOf(0, t0.Add(5*time.Second)),
			kafka.TimeOffsetOf(0, t0.Add(5*time.Second+time.Millisecond)),
			kafka.FirstOffsetOf(1), kafka.LastOffsetOf(1), kafka.TimeOffsetOf(1, t0.Add(time.Hour)),
			kafka.FirstOffsetOf(2), kafka.LastOffsetOf(2),
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []kafka.PartitionOffsets{
		{Partition: 0, FirstOffset: 0, LastOffset: 10, Offsets: map[int64]time.Time{5: t0.Add(5 * time.Second), 6: t0.Add(5*time.Second + time.Millisecond)}},
		{Partition: 1, FirstOffset: 0, LastOffset: 4, Offsets: map[int64]time.Time{-1: t0.Add(time.Hour)}},
		{Partition: 2, FirstOffset: 0, LastOffset: 0, Offsets: map[int64]time.Time{}},
	}
	if got := res.Topics[topic]; !reflect.DeepEqual(got, want) || len(res.Topics) != 1 {
		t.Errorf("ListOffsets:\n got %+v\nwant %+v", res.Topics, want)
	}

	// Read-committed last offsets match without transactions; an unknown partition has its error.
	res, err = client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
		IsolationLevel: kafka.ReadCommitted,
		Topics:         map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(0), kafka.LastOffsetOf(9)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ps := res.Topics[topic]; len(ps) != 2 || ps[0].LastOffset != 10 || ps[0].Error != nil || !errors.Is(ps[1].Error, kafka.UnknownTopicOrPartition) {
		t.Errorf("read-committed ListOffsets = %+v", ps)
	}
}

// coffsCommit commits offsets for a group without members, retrying while the group's coordinator is
// not ready yet (a new cluster creates its offsets topic on first use).
func coffsCommit(t *testing.T, ctx context.Context, client *kafka.Client, group string, topics map[string][]kafka.OffsetCommit) *kafka.OffsetCommitResponse {
	t.Helper()
	var res *kafka.OffsetCommitResponse
	eventually(t, 45*time.Second, "committing for "+group, func() bool {
		r, err := client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1, Topics: topics})
		if errors.Is(err, kafka.GroupCoordinatorNotAvailable) || errors.Is(err, kafka.NotCoordinatorForGroup) {
			return false
		}
		if err != nil {
			t.Fatalf("OffsetCommit: %v", err)
		}
		for _, ps := range r.Topics {
			for _, p := range ps {
				if errors.Is(p.Error, kafka.GroupCoordinatorNotAvailable) || errors.Is(p.Error, kafka.NotCoordinatorForGroup) || errors.Is(p.Error, kafka.GroupLoadInProgress) {
					return false
				}
			}
		}
		res = r
		return true
	})
	return res
}

func TestClientOffsetsIntegrationCommitFetchDelete(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 3})
	client := cmetaClient(t, c)
	ctx := testContext(t, time.Minute)
	group := ktesting.UniqueTopic(t) // a fresh group id

	com := coffsCommit(t, ctx, client, group, map[string][]kafka.OffsetCommit{
		topic: {{Partition: 0, Offset: 7, Metadata: "seven"}, {Partition: 2, Offset: 3}},
	})
	if want := map[string][]kafka.OffsetCommitPartition{topic: {{Partition: 0}, {Partition: 2}}}; !reflect.DeepEqual(com.Topics, want) {
		t.Fatalf("OffsetCommit = %+v; want %+v", com.Topics, want)
	}

	fe, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2}}})
	if err != nil || fe.Error != nil {
		t.Fatalf("OffsetFetch = %+v, %v", fe, err)
	}
	wantFe := map[string][]kafka.OffsetFetchPartition{topic: {
		{Partition: 0, CommittedOffset: 7, Metadata: "seven"},
		{Partition: 1, CommittedOffset: -1},
		{Partition: 2, CommittedOffset: 3},
	}}
	if !reflect.DeepEqual(fe.Topics, wantFe) {
		t.Errorf("OffsetFetch:\n got %+v\nwant %+v", fe.Topics, wantFe)
	}
	// nil Topics: every offset the group committed.
	all, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group})
	if err != nil || all.Error != nil {
		t.Fatalf("OffsetFetch(all) = %+v, %v", all, err)
	}
	got := all.Topics[topic]
	if len(all.Topics) != 1 || len(got) != 2 {
		t.Fatalf("OffsetFetch(all) = %+v", all.Topics)
	}
	if !reflect.DeepEqual(got, []kafka.OffsetFetchPartition{wantFe[topic][0], wantFe[topic][2]}) {
		t.Errorf("OffsetFetch(all) = %+v", got)
	}
	co, err := client.ConsumerOffsets(ctx, kafka.TopicAndGroup{Topic: topic, GroupId: group})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]int64{0: 7, 1: -1, 2: 3}; !reflect.DeepEqual(co, want) {
		t.Errorf("ConsumerOffsets = %v; want %v", co, want)
	}

	// Deleting partition 0's offset leaves partition 2's.
	del, err := client.OffsetDelete(ctx, &kafka.OffsetDeleteRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
	if err != nil || del.Error != nil {
		t.Fatalf("OffsetDelete = %+v, %v", del, err)
	}
	if want := map[string][]kafka.OffsetDeletePartition{topic: {{Partition: 0}}}; !reflect.DeepEqual(del.Topics, want) {
		t.Errorf("OffsetDelete = %+v; want %+v", del.Topics, want)
	}
	fe, err = client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 2}}})
	if err != nil || fe.Error != nil {
		t.Fatalf("OffsetFetch after delete = %+v, %v", fe, err)
	}
	if ps := fe.Topics[topic]; len(ps) != 2 || ps[0].CommittedOffset != -1 || ps[1].CommittedOffset != 3 {
		t.Errorf("OffsetFetch after delete = %+v; want partition 0 gone, 2 at 3", ps)
	}
	co, err = client.ConsumerOffsets(ctx, kafka.TopicAndGroup{Topic: topic, GroupId: group})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]int64{0: -1, 1: -1, 2: 3}; !reflect.DeepEqual(co, want) {
		t.Errorf("ConsumerOffsets after delete = %v; want %v", co, want)
	}
}

func TestClientOffsetsIntegrationErrors(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	client := cmetaClient(t, c)
	ctx := testContext(t, time.Minute)
	group := ktesting.UniqueTopic(t)

	// A partition that does not exist is refused, the others committed.
	com := coffsCommit(t, ctx, client, group, map[string][]kafka.OffsetCommit{topic: {{Partition: 0, Offset: 1}, {Partition: 5, Offset: 1}}})
	ps := com.Topics[topic]
	if len(ps) != 2 || ps[0].Error != nil || !errors.Is(ps[1].Error, kafka.UnknownTopicOrPartition) {
		t.Errorf("OffsetCommit = %+v; want partition 5 UnknownTopicOrPartition", com.Topics)
	}

	// A group that never existed.
	del, err := client.OffsetDelete(ctx, &kafka.OffsetDeleteRequest{GroupID: group + "-none", Topics: map[string][]int{topic: {0}}})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(del.Error, kafka.GroupIdNotFound) {
		t.Errorf("OffsetDelete of a missing group: %+v; want GroupIdNotFound", del)
	}
	if _, err := client.ConsumerOffsets(ctx, kafka.TopicAndGroup{Topic: ktesting.UniqueTopic(t), GroupId: group}); !errors.Is(err, kafka.UnknownTopicOrPartition) {
		t.Errorf("ConsumerOffsets of a missing topic: %v", err)
	}
}
