package kafkaprom_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaprom"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// fakeReaders returns Readers in the given racks that have read every
// record of topic t on fake brokers 1, 2, 3 in racks a, b, c (the
// partition led by broker 1).
func fakeReaders(t *testing.T, racks ...string) []*kafka.Reader {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true})
	c.CreateTopic("t", 1, 3)
	const n = 20
	for i := 0; i < n; i += 4 {
		c.AppendRecords("t", 0, fmt.Sprint(i), fmt.Sprint(i+1), fmt.Sprint(i+2), fmt.Sprint(i+3))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var readers []*kafka.Reader
	for _, rack := range racks {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: c.Addrs()[:1], Topic: "t", Rack: rack, MaxBytes: 1, MaxWait: 500 * time.Millisecond,
			ReadLagInterval: -1, Dialer: &kafka.Dialer{ClientID: "rack-" + rack, Timeout: 5 * time.Second},
		})
		t.Cleanup(func() { r.Close() })
		for i := 0; i < n; i++ {
			_, err := r.FetchMessage(ctx)
			require.NoError(t, err)
		}
		readers = append(readers, r)
	}
	return readers
}

// The broker identities are info series (value 1, the broker id a label):
// one replica and one leader series for the partition.
func TestCollectorInfoSeries(t *testing.T) {
	readers := fakeReaders(t, "b")
	reg := prometheus.NewPedanticRegistry()
	_, err := kafkaprom.NewCollector(kafkaprom.WithRegisterer(reg), kafkaprom.WithReaders(readers...))
	require.NoError(t, err)

	fams := gather(t, reg)
	replica, ok := value(fams, "kafka_reader_partition_replica_info", "topic", "t", "partition", "0", "broker", "2", "rack", "b")
	assert.True(t, ok && replica == 1, "read from broker 2 in rack b")
	assert.Len(t, fams["kafka_reader_partition_replica_info"].GetMetric(), 1)
	leader, ok := value(fams, "kafka_reader_partition_leader_info", "topic", "t", "partition", "0", "broker", "1")
	assert.True(t, ok && leader == 1, "led by broker 1")
	assert.Len(t, fams["kafka_reader_partition_leader_info"].GetMetric(), 1)
	// The reason label is the reason's ID, which dashboards are written
	// against; every known reason has a series.
	preferred, ok := value(fams, "kafka_reader_reroutes_total", "reason", "preferred_replica")
	assert.True(t, ok && preferred == 1, "one move to the preferred replica")
	lagging, ok := value(fams, "kafka_reader_reroutes_total", "reason", "follower_lagging")
	assert.True(t, ok && lagging == 0, "a series from the first scrape")
	assert.Len(t, fams["kafka_reader_reroutes_total"].GetMetric(), len(kafka.RerouteReasons()))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// Options: the namespace names every series; without partition labels the
// lag is summed by topic and no partition series is left; a Reader whose
// rack has no broker reports rack_inactive.
func TestCollectorOptions(t *testing.T) {
	readers := fakeReaders(t, "b", "z")
	reg := prometheus.NewPedanticRegistry()
	_, err := kafkaprom.NewCollector(kafkaprom.WithRegisterer(reg), kafkaprom.WithNamespace("app"),
		kafkaprom.WithPartitionLabels(false), kafkaprom.WithReaders(readers...))
	require.NoError(t, err)

	// The fetcher records the position of its last fetch after handing
	// the records over: poll until it is there.
	var fams map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		fams = gather(t, reg)
		lag, ok := value(fams, "app_reader_topic_lag", "client_id", "rack-b", "topic", "t")
		return ok && lag == 0
	}, 10*time.Second, 20*time.Millisecond, "lag of topic t at 0")
	for _, name := range []string{"app_reader_partition_lag", "app_reader_partition_replica_info", "app_reader_partition_leader_info", "kafka_reader_same_rack_bytes_total"} {
		assert.NotContains(t, fams, name)
	}
	same, _ := value(fams, "app_reader_same_rack_bytes_total", "client_id", "rack-b")
	assert.Positive(t, same)
	inactive, ok := value(fams, "app_reader_rack_inactive", "client_id", "rack-z", "cause", "no_broker_in_rack")
	assert.True(t, ok && inactive == 1, "rack z has no broker")
	_, ok = value(fams, "app_reader_rack_inactive", "client_id", "rack-b")
	assert.False(t, ok, "rack b is served")
}
