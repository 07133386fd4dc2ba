package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/protocol"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// These tests need the 3-broker, 3-rack cluster of testing/cluster
// (KAFKA_BROKERS etc. from its env file); they pass with and without
// replica.selector.class (KAFKA_SELECTOR=none).

const krPartitions = 3

// krCluster is the cluster from the environment, which must have 3 brokers
// in 3 racks, and a context that bounds the test.
func krCluster(t *testing.T) (*ktesting.Cluster, context.Context) {
	t.Helper()
	c := ktesting.RequireRackCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c, ctx
}

func krConfig(c *ktesting.Cluster, topic, rack string) *config {
	return &config{Brokers: c.Brokers, Topic: topic, Rack: rack, Timeout: 10 * time.Second, Price: defaultPrice}
}

// krTopic creates a topic of krPartitions partitions, RF 3, waits until
// every partition has a leader and 3 in-sync replicas, writes one batch of
// 10 records to each, and deletes it at the end of the test.
func krTopic(t *testing.T, ctx context.Context, c *ktesting.Cluster) string {
	t.Helper()
	topic := ktesting.UniqueTopic(t)
	cl, _ := krConfig(c, topic, "").client()
	resp, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: krPartitions, ReplicationFactor: 3}}})
	require.NoError(t, err, "creating topic %s", topic)
	require.NoError(t, resp.Errors[topic], "creating topic %s", topic)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	})
	// Every broker must know it: requests go to any of them.
	for _, addr := range c.Brokers {
		require.Eventually(t, func() bool {
			md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Addr: kafka.TCP(addr), Topics: []string{topic}})
			if err != nil || len(md.Topics) != 1 || len(md.Topics[0].Partitions) != krPartitions {
				return false
			}
			for _, p := range md.Topics[0].Partitions {
				if p.Error != nil || p.Leader.Host == "" || len(p.Isr) != 3 {
					return false
				}
			}
			return true
		}, 30*time.Second, 100*time.Millisecond, "topic %s: every partition led and fully in sync at %s", topic, addr)
	}
	// A leader names a follower only once it knows the follower holds the
	// fetch offset, i.e. after the follower's next fetch: a write acked by
	// all replicas (krProduce) makes sure every follower has fetched.
	for p := 0; p < krPartitions; p++ {
		krProduce(t, ctx, c, topic, p, 1)
	}
	return topic
}

// krProduce appends n batches of 10 records to partition p and returns
// the bytes of the batches sent (the broker stores them as they are).
func krProduce(t *testing.T, ctx context.Context, c *ktesting.Cluster, topic string, p, n int) int64 {
	t.Helper()
	cl, _ := krConfig(c, topic, "").client()
	var sent int64
	for i := 0; i < n; i++ {
		b := protocol.NewRecordBatchBuilder()
		for j := 0; j < 10; j++ {
			b.Add(protocol.Record{Timestamp: time.Now().UnixMilli(), Value: bytes.Repeat([]byte{'x'}, 100+i*7+j)})
		}
		raw, err := b.AppendTo(nil)
		require.NoError(t, err)
		res, err := cl.RawProduce(ctx, &kafka.RawProduceRequest{Topic: topic, Partition: p, RequiredAcks: kafka.RequireAll, RawRecords: protocol.RawRecordSet{Reader: bytes.NewReader(raw)}})
		require.NoError(t, err, "producing to %s/%d", topic, p)
		require.NoError(t, res.Error, "producing to %s/%d", topic, p)
		sent += int64(len(raw))
	}
	return sent
}

// The plan names, partition for partition, the broker a Reader in the same
// rack then reads from, in every rack and in a rack no broker has.
func TestKafkaRackPlanMatchesReader(t *testing.T) {
	c, ctx := krCluster(t)
	topic := krTopic(t, ctx, c)
	const batches = 5
	for p := 0; p < krPartitions; p++ {
		krProduce(t, ctx, c, topic, p, batches)
	}
	for _, rack := range []string{c.Rack(c.BrokerIDs[1]), c.Rack(c.BrokerIDs[2]), "no-such-rack"} {
		t.Run(rack, func(t *testing.T) {
			rep, err := buildReport(ctx, krConfig(c, topic, rack))
			require.NoError(t, err)
			require.Len(t, rep.Partitions, krPartitions)
			for _, pp := range rep.Partitions {
				require.Empty(t, pp.Error, "partition %d", pp.Partition)
				got := readerRoute(t, ctx, c, topic, pp.Partition, rack, (batches+1)*10)
				require.Equal(t, pp.Read.ID, got.Broker, "partition %d: plan %+v, Reader routing %+v", pp.Partition, pp, got)
				require.Equal(t, pp.Read.Rack, got.BrokerRack, "partition %d", pp.Partition)
				require.Equal(t, pp.Leader.ID, got.Leader, "partition %d", pp.Partition)
				switch {
				case rack == "no-such-rack":
					require.False(t, pp.InRack)
					require.Equal(t, reasonNoRackReplica, pp.Reason)
				case c.HasSelector():
					// RF 3 over 3 racks: every partition has an in-rack
					// in-sync replica, which the leader names.
					require.True(t, pp.InRack, "partition %d: %+v", pp.Partition, pp)
				case pp.Leader.Rack != rack:
					require.Equal(t, reasonNoSelector, pp.Reason)
					require.False(t, pp.InRack)
				}
			}
			if rack == "no-such-rack" {
				require.True(t, hasWarning(rep.Warnings, `no broker is in rack "no-such-rack"`), "warnings: %q", rep.Warnings)
			}
		})
	}
}

// readerRoute reads n messages of topic/partition with a Reader in rack
// and returns the partition's routing once they are read.
func readerRoute(t *testing.T, ctx context.Context, c *ktesting.Cluster, topic string, partition int, rack string, n int) kafka.PartitionRoutingStats {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: c.Brokers, Topic: topic, Partition: partition, Rack: rack, MaxWait: 500 * time.Millisecond})
	defer r.Close()
	for i := 0; i < n; i++ {
		m, err := r.FetchMessage(ctx)
		require.NoError(t, err, "reading %s/%d in rack %q", topic, partition, rack)
		require.Equal(t, int64(i), m.Offset)
	}
	for _, pr := range r.Stats().Routing {
		if pr.Topic == topic && pr.Partition == partition {
			return pr
		}
	}
	t.Fatalf("Reader of %s/%d: no routing in its stats", topic, partition)
	return kafka.PartitionRoutingStats{}
}

func hasWarning(ws []string, s string) bool {
	for _, w := range ws {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// DescribeConfigs reads every broker's broker.rack and
// replica.selector.class as the cluster was started with; without a
// selector the report warns and points at client-side selection.
func TestKafkaRackBrokerConfigs(t *testing.T) {
	c, ctx := krCluster(t)
	cl, _ := krConfig(c, "", "b").client()
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}})
	require.NoError(t, err)
	checks, warnings := checkBrokers(ctx, cl, md.Brokers, c.Rack(c.BrokerIDs[1]))
	require.Len(t, checks, 3)
	for _, b := range checks {
		require.Empty(t, b.Error, "broker %d", b.ID)
		require.Equal(t, c.Rack(b.ID), b.BrokerRack, "broker %d broker.rack", b.ID)
		require.Equal(t, c.Rack(b.ID), b.Rack, "broker %d rack in metadata", b.ID)
		if c.HasSelector() {
			require.Equal(t, c.Selector, b.SelectorClass, "broker %d", b.ID)
		} else {
			require.Empty(t, b.SelectorClass, "broker %d", b.ID)
		}
	}
	if c.HasSelector() {
		require.Empty(t, warnings)
	} else {
		require.True(t, hasWarning(warnings, "replica.selector.class is unset on broker(s) 1, 2, 3"), "warnings: %q", warnings)
		require.True(t, hasWarning(warnings, "ReaderConfig.ReplicaSelector"), "warnings: %q", warnings)
	}
}

// -json prints a report that parses back, with a plan for every partition
// and the cost estimate of -rate.
func TestKafkaRackJSONOutput(t *testing.T) {
	c, ctx := krCluster(t)
	topic := krTopic(t, ctx, c)
	rack := c.Rack(c.BrokerIDs[1])
	var out, errOut bytes.Buffer
	err := run(ctx, []string{"-brokers", strings.Join(c.Brokers, ","), "-topic", topic, "-rack", rack, "-json", "-rate", "10"}, &out, &errOut)
	require.NoError(t, err, "stderr: %s", errOut.String())
	var rep Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), "output: %s", out.String())
	require.Equal(t, topic, rep.Topic)
	require.Equal(t, rack, rep.Rack)
	require.Len(t, rep.Brokers, 3)
	require.Len(t, rep.Partitions, krPartitions)
	for i, p := range rep.Partitions {
		require.Equal(t, i, p.Partition)
		require.NotEmpty(t, p.Reason)
		require.Len(t, p.ISR, 3)
	}
	require.NotNil(t, rep.Cost)
	require.Equal(t, 10e6, rep.Cost.BytesPerSecond)
	require.InDelta(t, 10e6*secondsPerMonth/1e9, rep.Cost.GBPerMonth, 1e-6)
	if c.HasSelector() {
		require.Equal(t, 1.0, rep.Cost.InRackShare)
		require.InDelta(t, rep.Cost.CrossGBWithoutRack*2*defaultPrice, rep.Cost.SavedUSDPerMonth, 1e-6)
	}
}

// The bytes measured between two end offsets are exactly the bytes of the
// batches produced between them.
func TestKafkaRackGrownBytes(t *testing.T) {
	c, ctx := krCluster(t)
	topic := krTopic(t, ctx, c)
	cfg := krConfig(c, topic, "b")
	cl, _ := cfg.client()
	parts := []kafka.Partition{{Topic: topic, ID: 0}, {Topic: topic, ID: 1}, {Topic: topic, ID: 2}}
	krProduce(t, ctx, c, topic, 0, 3) // before the window (with krTopic's batch): not counted
	before, err := lastOffsets(ctx, cl, topic, parts)
	require.NoError(t, err)
	want := map[int]int64{0: krProduce(t, ctx, c, topic, 0, 40), 1: krProduce(t, ctx, c, topic, 1, 2), 2: 0}
	after, err := lastOffsets(ctx, cl, topic, parts)
	require.NoError(t, err)
	require.Equal(t, before[0]+400, after[0])
	got, err := grownBytes(ctx, cfg, before, after)
	require.NoError(t, err)
	require.Equal(t, want, got)

	// Fetches that cut batches off are fetched again from the cut.
	defer func(n int64) { rangeFetchBytes = n }(rangeFetchBytes)
	rangeFetchBytes = 5000
	got, err = grownBytes(ctx, cfg, before, after)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// -watch shows each partition read where the plan says, from Readers it
// runs itself.
func TestKafkaRackWatch(t *testing.T) {
	c, ctx := krCluster(t)
	topic := krTopic(t, ctx, c)
	cfg := krConfig(c, topic, c.Rack(c.BrokerIDs[1]))
	cfg.JSON = true
	rep, err := buildReport(ctx, cfg)
	require.NoError(t, err)
	want := map[int]int{}
	for _, p := range rep.Partitions {
		want[p.Partition] = p.Read.ID
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := &tickWatcher{t: t, want: want, stop: stop}
	err = watch(wctx, cfg, []topicPartition{{topic, 0}, {topic, 1}, {topic, 2}}, w, 200*time.Millisecond, 100)
	require.NoError(t, err)
	require.True(t, w.matched, "no tick in 20 s showed the planned brokers %v; last: %s", want, w.last)
}

// tickWatcher reads -watch's JSON ticks and ends the watch at the first
// one showing every partition on the broker in want.
type tickWatcher struct {
	t       *testing.T
	want    map[int]int
	stop    func()
	last    string
	matched bool
}

func (w *tickWatcher) Write(b []byte) (int, error) {
	w.last = string(b)
	var tick watchTick
	require.NoError(w.t, json.Unmarshal(b, &tick))
	got := map[int]int{}
	for _, r := range tick.Routing {
		got[r.Partition] = r.Broker
	}
	if fmt.Sprint(got) == fmt.Sprint(w.want) {
		w.matched = true
		w.stop()
	}
	return len(b), nil
}

// With -client-select every partition is planned in the rack: named by the
// leader when the brokers have a selector, chosen on the client otherwise.
func TestKafkaRackClientSelectPlan(t *testing.T) {
	c, ctx := krCluster(t)
	topic := krTopic(t, ctx, c)
	rack := c.Rack(c.BrokerIDs[1])
	cfg := krConfig(c, topic, rack)
	cfg.ClientSelect = true
	rep, err := buildReport(ctx, cfg)
	require.NoError(t, err)
	for _, p := range rep.Partitions {
		require.True(t, p.InRack, "partition %d: %+v", p.Partition, p)
		require.Equal(t, c.BrokerIDs[1], p.Read.ID, "partition %d", p.Partition)
		switch {
		case p.Leader.Rack == rack:
			require.Equal(t, reasonLeaderInRack, p.Reason)
		case c.HasSelector():
			require.Equal(t, reasonPreferred, p.Reason)
		default:
			require.Equal(t, reasonClientSelect, p.Reason)
		}
	}
}

// -observe measures over the window it is given; with nothing written the
// partitions weigh the same.
func TestKafkaRackObserveIdle(t *testing.T) {
	c, ctx := krCluster(t)
	topic := krTopic(t, ctx, c)
	var out, errOut bytes.Buffer
	err := run(ctx, []string{"-brokers", strings.Join(c.Brokers, ","), "-topic", topic, "-rack", c.Rack(c.BrokerIDs[1]), "-json", "-observe", "1s"}, &out, &errOut)
	require.NoError(t, err, "stderr: %s", errOut.String())
	var rep Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.NotNil(t, rep.Cost)
	require.Equal(t, "-observe", rep.Cost.Source)
	require.Zero(t, rep.Cost.ObservedBytes)
	require.Zero(t, rep.Cost.BytesPerSecond)
	require.GreaterOrEqual(t, rep.Cost.ObservedSeconds, 1.0)
	require.Contains(t, rep.Cost.Assumptions, "nothing was written while observed: partitions weigh the same")
}
