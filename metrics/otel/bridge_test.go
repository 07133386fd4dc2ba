package otel_test

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
	kafkaotel "github.com/rackfetch/kafka-go/metrics/otel"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A rack-b Reader on fake brokers in racks a, b, c (the partition led by
// broker 1, rack a) moves to the rack-b replica: a collection through the
// SDK's ManualReader shows its bytes by broker and rack, the reroute, the
// replica and the lag.
func TestBridgeManualReader(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true})
	c.CreateTopic("t", 1, 3)
	const n = 40
	for i := 0; i < n; i += 4 {
		c.AppendRecords("t", 0, fmt.Sprint(i), fmt.Sprint(i+1), fmt.Sprint(i+2), fmt.Sprint(i+3))
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.Addrs()[:1], Topic: "t", Rack: "b", MaxBytes: 1, MaxWait: 500 * time.Millisecond,
		ReadLagInterval: -1, Dialer: &kafka.Dialer{ClientID: "otel-test", Timeout: 5 * time.Second},
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		_, err := r.FetchMessage(ctx)
		require.NoError(t, err)
	}

	mr := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(mr))
	defer provider.Shutdown(context.Background())
	b, err := kafkaotel.NewBridge(provider.Meter("kafka-test"))
	require.NoError(t, err)
	b.Add(r)

	var rm metricdata.ResourceMetrics
	require.Eventually(t, func() bool {
		require.NoError(t, mr.Collect(ctx, &rm))
		lag, ok := point(rm, "kafka.reader.partition.lag", attribute.Int("partition", 0))
		return ok && lag == 0
	}, 10*time.Second, 50*time.Millisecond, "the lag reaches 0 once every record was fetched")

	same, ok := point(rm, "kafka.reader.same_rack_bytes", attribute.String("client_id", "otel-test"))
	require.True(t, ok)
	cross, _ := point(rm, "kafka.reader.cross_rack_bytes")
	fromB, _ := point(rm, "kafka.reader.fetched_bytes", attribute.Int("broker", 2), attribute.String("rack", "b"))
	assert.Positive(t, same)
	assert.Equal(t, same, fromB)
	assert.Equal(t, r.RoutingStats().CrossRackBytes, cross)
	preferred, _ := point(rm, "kafka.reader.reroutes", attribute.String("reason", string(kafka.ReroutePreferredReplica)))
	assert.Equal(t, int64(1), preferred)
	ttl, ok := point(rm, "kafka.reader.reroutes", attribute.String("reason", string(kafka.RerouteTTL)))
	assert.True(t, ok && ttl == 0, "every reason observed from the start")
	replica, _ := point(rm, "kafka.reader.partition.replica", attribute.String("topic", "t"), attribute.String("rack", "b"))
	assert.Equal(t, int64(2), replica)
	leader, _ := point(rm, "kafka.reader.partition.leader", attribute.String("topic", "t"))
	assert.Equal(t, int64(1), leader)

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
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			var points []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				points = d.DataPoints
			case metricdata.Gauge[int64]:
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
