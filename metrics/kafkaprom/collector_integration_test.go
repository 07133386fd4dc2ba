package kafkaprom_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaprom"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

const itMessages = 300

// The acceptance: a scrape of Readers reading from the real 3-rack
// cluster shows per-rack bytes and reroutes. Two rack-b Readers (one per
// partition, both led outside rack b) move to the rack-b follower; a third
// Reader without a rack reads partition 0 from its rack-a leader, and its
// bytes by rack are the baseline before turning Rack on.
func TestCollectorIntegration(t *testing.T) {
	c := ktesting.RequireCluster(t)
	require.True(t, c.HasSelector(), "the cluster needs replica.selector.class (KAFKA_SELECTOR=%q)", c.Selector)
	a, b, cc := inRack(t, c, "a"), inRack(t, c, "b"), inRack(t, c, "c")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	topic := ktesting.UniqueTopic(t)
	client := &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 30 * time.Second}
	res, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: -1, ReplicationFactor: -1,
		ReplicaAssignments: []kafka.ReplicaAssignment{
			{Partition: 0, Replicas: []int{a, b, cc}},
			{Partition: 1, Replicas: []int{cc, b, a}},
		},
	}}})
	require.NoError(t, err)
	require.NoError(t, res.Errors[topic])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
	})

	// Every broker must know the topic and its leaders before the writes.
	for _, addr := range c.Brokers {
		require.Eventually(t, func() bool {
			md, err := client.Metadata(ctx, &kafka.MetadataRequest{Addr: kafka.TCP(addr), Topics: []string{topic}})
			if err != nil || len(md.Topics) != 1 || md.Topics[0].Error != nil || len(md.Topics[0].Partitions) != 2 {
				return false
			}
			for _, p := range md.Topics[0].Partitions {
				if p.Leader.ID < 0 || len(p.Isr) != 3 {
					return false
				}
			}
			return true
		}, 30*time.Second, 100*time.Millisecond, "topic %s settled on %s", topic, addr)
	}

	w := &kafka.Writer{
		Addr: kafka.TCP(c.Brokers...), Topic: topic, RequiredAcks: kafka.RequireAll,
		Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.Partition }),
	}
	defer w.Close()
	msgs := make([]kafka.Message, 0, 2*itMessages)
	for i := 0; i < itMessages; i++ {
		for p := 0; p < 2; p++ {
			msgs = append(msgs, kafka.Message{Partition: p, Value: []byte(fmt.Sprintf("message %d of partition %d, padded to be worth counting", i, p))})
		}
	}
	require.NoError(t, w.WriteMessages(ctx, msgs...))

	reader := func(clientID, rack string, partition int) *kafka.Reader {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: c.Brokers, Topic: topic, Partition: partition, Rack: rack,
			MaxWait: 500 * time.Millisecond, MaxBytes: 4096, // several fetches per partition
			Dialer: &kafka.Dialer{ClientID: clientID, Timeout: 10 * time.Second},
		})
		t.Cleanup(func() { r.Close() })
		return r
	}
	rackB0, rackB1 := reader("prom-rack", "b", 0), reader("prom-rack", "b", 1)
	noRack := reader("prom-norack", "", 0)
	reg := prometheus.NewPedanticRegistry()
	coll, err := kafkaprom.NewCollector(kafkaprom.WithRegisterer(reg), kafkaprom.WithReaders(rackB0, rackB1))
	require.NoError(t, err)
	coll.Add(noRack)
	for _, r := range []*kafka.Reader{rackB0, rackB1, noRack} {
		for i := 0; i < itMessages; i++ {
			_, err := r.FetchMessage(ctx)
			require.NoError(t, err)
		}
	}

	problems, err := testutil.CollectAndLint(coll)
	require.NoError(t, err)
	assert.Empty(t, problems)

	// The fetcher records the position of its last fetch after handing
	// the records over: poll until it is there.
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		fams = gather(t, reg)
		lag0, ok0 := value(fams, "kafka_reader_partition_lag", "client_id", "prom-rack", "partition", "0")
		lag1, ok1 := value(fams, "kafka_reader_partition_lag", "client_id", "prom-rack", "partition", "1")
		return ok0 && ok1 && lag0 == 0 && lag1 == 0
	}, 30*time.Second, 100*time.Millisecond, "rack-b readers' lag at 0")

	// Rack b: the bytes come from broker b, in rack b, after one move per
	// partition to the preferred replica.
	same, _ := value(fams, "kafka_reader_same_rack_bytes_total", "client_id", "prom-rack")
	cross, _ := value(fams, "kafka_reader_cross_rack_bytes_total", "client_id", "prom-rack")
	fromB, ok := value(fams, "kafka_reader_fetched_bytes_total", "client_id", "prom-rack", "broker", strconv.Itoa(b), "rack", "b")
	require.True(t, ok, "no rack-b broker series")
	t.Logf("rack-b readers: same-rack %.0f B, cross-rack %.0f B (%.1f %% in the rack)", same, cross, 100*same/(same+cross))
	assert.Greater(t, same, 0.0)
	assert.Equal(t, same, fromB)
	assert.Greater(t, same, 9*cross, "at least 90 %% of the bytes from rack b")
	preferred, _ := value(fams, "kafka_reader_reroutes_total", "client_id", "prom-rack", "reason", string(kafka.ReroutePreferredReplica))
	assert.GreaterOrEqual(t, preferred, 2.0, "one move per partition to the rack-b replica")
	ttl, ok := value(fams, "kafka_reader_reroutes_total", "client_id", "prom-rack", "reason", string(kafka.RerouteTTL))
	assert.True(t, ok && ttl == 0, "every reason has a series from the start")
	for p, leader := range []int{a, cc} {
		replica, ok := value(fams, "kafka_reader_partition_replica_info", "client_id", "prom-rack", "partition", strconv.Itoa(p), "broker", strconv.Itoa(b), "rack", "b")
		assert.True(t, ok && replica == 1, "partition %d read from broker %d", p, b)
		l, ok := value(fams, "kafka_reader_partition_leader_info", "client_id", "prom-rack", "partition", strconv.Itoa(p), "broker", strconv.Itoa(leader))
		assert.True(t, ok && l == 1, "partition %d led by broker %d", p, leader)
	}

	// No rack: every byte is cross-rack, yet labelled with the leader's
	// rack, a.
	same, _ = value(fams, "kafka_reader_same_rack_bytes_total", "client_id", "prom-norack")
	cross, _ = value(fams, "kafka_reader_cross_rack_bytes_total", "client_id", "prom-norack")
	fromA, _ := value(fams, "kafka_reader_fetched_bytes_total", "client_id", "prom-norack", "broker", strconv.Itoa(a), "rack", "a")
	assert.Zero(t, same)
	assert.Greater(t, cross, 0.0)
	assert.Equal(t, cross, fromA)
	assert.Equal(t, 1.0, noRack.RoutingStats().RackShare("a"))

	// Counters never go down between scrapes, and Stats() resets none.
	rackB0.Stats()
	again := gather(t, reg)
	sameAgain, _ := value(again, "kafka_reader_same_rack_bytes_total", "client_id", "prom-rack")
	assert.GreaterOrEqual(t, sameAgain, fromB)

	// A closed Reader reads no partition: its gauges go, its counters stay.
	require.NoError(t, noRack.Close())
	closed := gather(t, reg)
	_, ok = value(closed, "kafka_reader_partition_replica_info", "client_id", "prom-norack")
	assert.False(t, ok, "a closed reader's partition still reported")
	crossAfter, _ := value(closed, "kafka_reader_cross_rack_bytes_total", "client_id", "prom-norack")
	assert.Equal(t, cross, crossAfter)
}

func inRack(t *testing.T, c *ktesting.Cluster, rack string) int {
	ids := c.BrokersInRack(rack)
	require.Len(t, ids, 1, "brokers of rack %s (KAFKA_RACKS %v)", rack, c.Racks)
	return ids[0]
}

func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value returns the value of the series of name whose labels include the
// given name/value pairs (the sum when several match).
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		found = true
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		}
	}
	return sum, found
}
