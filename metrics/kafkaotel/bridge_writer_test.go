package kafkaotel_test

import (
	"context"
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

// fakeWriter returns a Writer of topic t on a fake broker, with client ID
// "billing", and a function writing n messages through it.
func fakeWriter(t *testing.T) (*kafka.Writer, func(n int)) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 1})
	c.CreateTopic("t", 1, 1)
	w := &kafka.Writer{Addr: kafka.TCP(c.Addrs()...), Topic: "t", Transport: &kafka.Transport{ClientID: "billing"}}
	t.Cleanup(func() { w.Close() })
	return w, func(n int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		msgs := make([]kafka.Message, n)
		for i := range msgs {
			msgs[i].Value = []byte("paid")
		}
		require.NoError(t, w.WriteMessages(ctx, msgs...))
	}
}

// The writer counters rise with each write and match Writer.Totals;
// collections and the application's calls to Stats take nothing from each
// other. A removed Writer is observed no more.
func TestBridgeWriterCounters(t *testing.T) {
	w, write := fakeWriter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mr := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(mr))
	defer provider.Shutdown(context.Background())
	b, err := kafkaotel.NewBridge(kafkaotel.WithMeterProvider(provider), kafkaotel.WithWriters(w))
	require.NoError(t, err)
	defer b.Close()

	write(3)
	var rm metricdata.ResourceMetrics
	require.NoError(t, mr.Collect(ctx, &rm))
	attrs := []attribute.KeyValue{attribute.String("client_id", "billing"), attribute.String("topic", "t")}
	messages, ok := point(rm, "kafka.writer.messages", attrs...)
	require.True(t, ok)
	assert.Equal(t, int64(3), messages)
	writes, _ := point(rm, "kafka.writer.writes", attrs...)
	batches, _ := point(rm, "kafka.writer.batches", attrs...)
	assert.Equal(t, [2]int64{1, 1}, [2]int64{writes, batches}, "one request of one batch")
	bytes, _ := point(rm, "kafka.writer.bytes", attrs...)
	assert.Equal(t, w.Totals().Bytes, bytes)
	assert.Positive(t, bytes)
	seconds, ok := pointOf[float64](rm, "kafka.writer.write_time", attrs...)
	assert.True(t, ok && seconds > 0, "time spent in the produce request")
	for _, name := range []string{"kafka.writer.errors", "kafka.writer.retries",
		"kafka.writer.same_rack_bytes", "kafka.writer.other_rack_bytes"} { // the writer has no Rack
		v, ok := point(rm, name, attrs...)
		assert.True(t, ok && v == 0, "%s observed at 0", name)
	}
	produced, ok := point(rm, "kafka.writer.produced_bytes", append(attrs, attribute.String("rack", ""))...)
	assert.True(t, ok, "bytes to the leader without a rack")
	assert.Equal(t, w.Totals().RackBytes[""], produced)
	assert.Positive(t, produced)

	// The collection left Stats its counts; Stats resets its own only.
	s := w.Stats()
	assert.Equal(t, [2]int64{1, 3}, [2]int64{s.Writes, s.Messages})
	write(2)
	require.NoError(t, mr.Collect(ctx, &rm))
	messages, _ = point(rm, "kafka.writer.messages", attrs...)
	writes, _ = point(rm, "kafka.writer.writes", attrs...)
	assert.Equal(t, [2]int64{2, 5}, [2]int64{writes, messages}, "totals since the start")
	s = w.Stats()
	assert.Equal(t, [2]int64{1, 2}, [2]int64{s.Writes, s.Messages}, "stats since the last call")

	b.RemoveWriter(w)
	require.NoError(t, mr.Collect(ctx, &rm))
	_, ok = point(rm, "kafka.writer.messages")
	assert.False(t, ok)
}

// Writers sharing a client ID and topic are summed; the namespace names
// the writer instruments too.
func TestBridgeWriterSetAndNamespace(t *testing.T) {
	w1, write1 := fakeWriter(t)
	w2, write2 := fakeWriter(t)
	write1(1)
	write2(2)
	mr := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(mr))
	defer provider.Shutdown(context.Background())
	b, err := kafkaotel.NewBridge(kafkaotel.WithMeterProvider(provider), kafkaotel.WithNamespace("app"), kafkaotel.WithWriters(w1))
	require.NoError(t, err)
	defer b.Close()
	b.AddWriter(w2)

	var rm metricdata.ResourceMetrics
	require.NoError(t, mr.Collect(context.Background(), &rm))
	messages, ok := point(rm, "app.writer.messages", attribute.String("client_id", "billing"), attribute.String("topic", "t"))
	assert.True(t, ok && messages == 3, "3 messages from both writers, got %d", messages)
	_, ok = point(rm, "kafka.writer.messages")
	assert.False(t, ok)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "app.writer.messages" {
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "a counter")
			assert.Len(t, sum.DataPoints, 1, "one series for client billing, topic t")
		}
	}
}

// The bytes written to the leaders, by their rack, and split by the
// Writer's Rack: brokers 1 and 2 in racks a and b lead partitions 0 and 1;
// a rack-b Writer writes keyless messages to partition 1, keyed ones
// (placed on the first partition) to partition 0.
func TestBridgeWriterRackBytes(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2, Racks: []string{"a", "b"}})
	c.CreateTopic("t", 2, 1)
	w := &kafka.Writer{
		Addr: kafka.TCP(c.Addrs()...), Topic: "t", Rack: "b", Transport: &kafka.Transport{ClientID: "billing"},
		Balancer: kafka.BalancerFunc(func(_ kafka.Message, ps ...int) int { return ps[0] }),
	}
	t.Cleanup(func() { w.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, w.WriteMessages(ctx, kafka.Message{Value: []byte("local")}, kafka.Message{Value: []byte("local")}))
	require.NoError(t, w.WriteMessages(ctx, kafka.Message{Key: []byte("k"), Value: []byte("remote")}))
	require.Len(t, c.Records("t", 0), 1)
	require.Len(t, c.Records("t", 1), 2)

	mr := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(mr))
	defer provider.Shutdown(context.Background())
	b, err := kafkaotel.NewBridge(kafkaotel.WithMeterProvider(provider), kafkaotel.WithWriters(w))
	require.NoError(t, err)
	defer b.Close()
	var rm metricdata.ResourceMetrics
	require.NoError(t, mr.Collect(ctx, &rm))
	attrs := []attribute.KeyValue{attribute.String("client_id", "billing"), attribute.String("topic", "t")}
	tot := w.Totals()
	require.Positive(t, tot.SameRackBytes)
	require.Positive(t, tot.OtherRackBytes)
	same, _ := point(rm, "kafka.writer.same_rack_bytes", attrs...)
	other, _ := point(rm, "kafka.writer.other_rack_bytes", attrs...)
	assert.Equal(t, [2]int64{tot.SameRackBytes, tot.OtherRackBytes}, [2]int64{same, other})
	inB, _ := point(rm, "kafka.writer.produced_bytes", append(attrs, attribute.String("rack", "b"))...)
	inA, _ := point(rm, "kafka.writer.produced_bytes", append(attrs, attribute.String("rack", "a"))...)
	assert.Equal(t, [2]int64{same, other}, [2]int64{inB, inA}, "rack b: the writer's")
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "kafka.writer.produced_bytes" {
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "a counter")
			assert.Len(t, sum.DataPoints, 2, "one point per leader rack")
		}
	}
}
