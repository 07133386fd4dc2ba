package kafkaotel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaotel"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A rack-b Reader on fake brokers in racks a, b, c (the partition led by
// broker 1, rack a) moves to the rack-b replica: a collection through the
// SDK's ManualReader shows its bytes by broker and rack, the reroute, the
// replica and the lag.
func TestBridgeManualReader(t *testing.T) {
	r := fakeReaders(t, "b")[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	mr := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(mr))
	defer provider.Shutdown(context.Background())
	b, err := kafkaotel.NewBridge(kafkaotel.WithMeterProvider(provider))
	require.NoError(t, err)
	b.Add(r)

	var rm metricdata.ResourceMetrics
	require.Eventually(t, func() bool {
		require.NoError(t, mr.Collect(ctx, &rm))
		lag, ok := point(rm, "kafka.reader.partition.lag", attribute.Int("partition", 0))
		return ok && lag == 0
	}, 10*time.Second, 50*time.Millisecond, "the lag reaches 0 once every record was fetched")

	same, ok := point(rm, "kafka.reader.same_rack_bytes", attribute.String("client_id", "rack-b"))
	require.True(t, ok)
	cross, _ := point(rm, "kafka.reader.cross_rack_bytes")
	fromB, _ := point(rm, "kafka.reader.fetched_bytes", attribute.Int("broker", 2), attribute.String("rack", "b"))
	assert.Positive(t, same)
	assert.Equal(t, same, fromB)
	assert.Equal(t, r.RoutingStats().CrossRackBytes, cross)
	// The label values are the reasons' IDs, which dashboards are written against.
	preferred, _ := point(rm, "kafka.reader.reroutes", attribute.String("reason", "preferred_replica"))
	assert.Equal(t, int64(1), preferred)
	ttl, ok := point(rm, "kafka.reader.reroutes", attribute.String("reason", "preference_expired"))
	assert.True(t, ok && ttl == 0, "every reason observed from the start")
	replica, ok := point(rm, "kafka.reader.partition.replica_info", attribute.String("topic", "t"), attribute.Int("broker", 2), attribute.String("rack", "b"))
	assert.True(t, ok && replica == 1, "read from broker 2 in rack b")
	leader, ok := point(rm, "kafka.reader.partition.leader_info", attribute.String("topic", "t"), attribute.Int("broker", 1))
	assert.True(t, ok && leader == 1, "led by broker 1")
	_, ok = point(rm, "kafka.reader.partition.leader_info", attribute.String("topic", "t"), attribute.Int("broker", 2))
	assert.False(t, ok, "one leader series per partition")

	// Removed or closed, nothing is observed any more.
	b.Remove(r)
	require.NoError(t, mr.Collect(ctx, &rm))
	_, ok = point(rm, "kafka.reader.same_rack_bytes")
	assert.False(t, ok)
	b.Add(r)
	require.NoError(t, b.Close())
	require.NoError(t, mr.Collect(ctx, &rm))
	_, ok = point(rm, "kafka.reader.same_rack_bytes")
	assert.False(t, ok)
}

// point returns the int64 data point of the named metric whose attributes
// include want.
func point(rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (int64, bool) {
	return pointOf[int64](rm, name, want...)
}

// pointOf returns the data point of type N of the named metric whose
// attributes include want.
func pointOf[N int64 | float64](rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (N, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			var points []metricdata.DataPoint[N]
			switch d := m.Data.(type) {
			case metricdata.Sum[N]:
				points = d.DataPoints
			case metricdata.Gauge[N]:
				points = d.DataPoints
			}
		next:
			for _, p := range points {
				for _, kv := range want {
					if v, ok := p.Attributes.Value(kv.Key); !ok || v != kv.Value {
						continue next
					}
				}
				return p.Value, true
			}
		}
	}
	return 0, false
}

// Options: the namespace names every instrument; without partition
// attributes the lag is summed by topic and no partition instrument is
// left; a Reader whose rack has no broker reports rack_inactive.
func TestBridgeOptions(t *testing.T) {
	readers := fakeReaders(t, "b", "z")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mr := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(mr))
	defer provider.Shutdown(context.Background())
	b, err := kafkaotel.NewBridge(kafkaotel.WithMeterProvider(provider), kafkaotel.WithNamespace("app"),
		kafkaotel.WithPartitionAttributes(false), kafkaotel.WithReaders(readers...))
	require.NoError(t, err)
	defer b.Close()

	var rm metricdata.ResourceMetrics
	require.Eventually(t, func() bool {
		require.NoError(t, mr.Collect(ctx, &rm))
		lag, ok := point(rm, "app.reader.topic.lag", attribute.String("client_id", "rack-b"), attribute.String("topic", "t"))
		return ok && lag == 0
	}, 10*time.Second, 20*time.Millisecond, "lag of topic t at 0")
	for _, name := range []string{"app.reader.partition.lag", "app.reader.partition.replica_info", "app.reader.partition.leader_info", "kafka.reader.same_rack_bytes"} {
		_, ok := point(rm, name)
		assert.False(t, ok, name)
	}
	same, _ := point(rm, "app.reader.same_rack_bytes", attribute.String("client_id", "rack-b"))
	assert.Positive(t, same)
	inactive, ok := point(rm, "app.reader.rack_inactive", attribute.String("client_id", "rack-z"), attribute.String("cause", "no_broker_in_rack"))
	assert.True(t, ok && inactive == 1, "rack z has no broker")
	_, ok = point(rm, "app.reader.rack_inactive", attribute.String("client_id", "rack-b"))
	assert.False(t, ok, "rack b is served")
}

// fakeReaders returns Readers in the given racks that have read every
// record of topic t on fake brokers 1, 2, 3 in racks a, b, c (the
// partition led by broker 1).
func fakeReaders(t *testing.T, racks ...string) []*kafka.Reader {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true})
	c.CreateTopic("t", 1, 3)
	const n = 40
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
