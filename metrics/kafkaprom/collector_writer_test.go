package kafkaprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaprom"
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

// The writer series rise with each write and match Writer.Totals; scrapes
// and the application's calls to Stats take nothing from each other.
func TestCollectorWriterCounters(t *testing.T) {
	w, write := fakeWriter(t)
	reg := prometheus.NewPedanticRegistry()
	_, err := kafkaprom.NewCollector(kafkaprom.WithRegisterer(reg), kafkaprom.WithWriters(w))
	require.NoError(t, err)

	write(3)
	fams := gather(t, reg)
	labels := []string{"client_id", "billing", "topic", "t"}
	messages, ok := value(fams, "kafka_writer_messages_total", labels...)
	require.True(t, ok)
	assert.Equal(t, 3.0, messages)
	writes, _ := value(fams, "kafka_writer_writes_total", labels...)
	batches, _ := value(fams, "kafka_writer_batches_total", labels...)
	assert.Equal(t, [2]float64{1, 1}, [2]float64{writes, batches}, "one request of one batch")
	bytes, _ := value(fams, "kafka_writer_bytes_total", labels...)
	assert.Equal(t, float64(w.Totals().Bytes), bytes)
	assert.Positive(t, bytes)
	seconds, _ := value(fams, "kafka_writer_write_seconds_total", labels...)
	assert.Positive(t, seconds)
	for _, name := range []string{"kafka_writer_errors_total", "kafka_writer_retries_total", "kafka_writer_throttle_seconds_total",
		"kafka_writer_same_rack_bytes_total", "kafka_writer_other_rack_bytes_total"} { // the writer has no Rack
		v, ok := value(fams, name, labels...)
		assert.True(t, ok && v == 0, "%s present at 0", name)
	}
	produced, ok := value(fams, "kafka_writer_produced_bytes_total", append(labels, "rack", "")...)
	assert.True(t, ok, "bytes to the leader without a rack")
	assert.Equal(t, float64(w.Totals().RackBytes[""]), produced)
	assert.Positive(t, produced)

	// The scrape left Stats its counts; Stats resets its own only.
	s := w.Stats()
	assert.Equal(t, [2]int64{1, 3}, [2]int64{s.Writes, s.Messages})
	write(2)
	fams = gather(t, reg)
	messages, _ = value(fams, "kafka_writer_messages_total", labels...)
	writes, _ = value(fams, "kafka_writer_writes_total", labels...)
	assert.Equal(t, [2]float64{2, 5}, [2]float64{writes, messages}, "totals since the start")
	s = w.Stats()
	assert.Equal(t, [2]int64{1, 2}, [2]int64{s.Writes, s.Messages}, "stats since the last call")

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// Writers sharing a client ID and topic are summed; a removed one leaves
// the next scrape. The namespace names the writer series too.
func TestCollectorWriterSetAndNamespace(t *testing.T) {
	w1, write1 := fakeWriter(t)
	w2, write2 := fakeWriter(t)
	write1(1)
	write2(2)
	reg := prometheus.NewPedanticRegistry()
	c, err := kafkaprom.NewCollector(kafkaprom.WithRegisterer(reg), kafkaprom.WithNamespace("app"), kafkaprom.WithWriters(w1))
	require.NoError(t, err)
	c.AddWriter(w2)

	fams := gather(t, reg)
	assert.Len(t, fams["app_writer_messages_total"].GetMetric(), 1, "one series for client billing, topic t")
	messages, _ := value(fams, "app_writer_messages_total")
	assert.Equal(t, 3.0, messages)
	assert.NotContains(t, fams, "kafka_writer_messages_total")

	c.RemoveWriter(w1)
	c.RemoveWriter(w2)
	assert.NotContains(t, gather(t, reg), "app_writer_messages_total")
}

// The bytes written to the leaders, by their rack, and split by the
// Writer's Rack: brokers 1 and 2 in racks a and b lead partitions 0 and 1;
// a rack-b Writer writes keyless messages to partition 1, keyed ones
// (placed on the first partition) to partition 0.
func TestCollectorWriterRackBytes(t *testing.T) {
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

	reg := prometheus.NewPedanticRegistry()
	_, err := kafkaprom.NewCollector(kafkaprom.WithRegisterer(reg), kafkaprom.WithWriters(w))
	require.NoError(t, err)
	fams := gather(t, reg)
	labels := []string{"client_id", "billing", "topic", "t"}
	tot := w.Totals()
	require.Positive(t, tot.SameRackBytes)
	require.Positive(t, tot.OtherRackBytes)
	same, _ := value(fams, "kafka_writer_same_rack_bytes_total", labels...)
	other, _ := value(fams, "kafka_writer_other_rack_bytes_total", labels...)
	assert.Equal(t, [2]float64{float64(tot.SameRackBytes), float64(tot.OtherRackBytes)}, [2]float64{same, other})
	inB, _ := value(fams, "kafka_writer_produced_bytes_total", append(labels, "rack", "b")...)
	inA, _ := value(fams, "kafka_writer_produced_bytes_total", append(labels, "rack", "a")...)
	assert.Equal(t, [2]float64{same, other}, [2]float64{inB, inA}, "rack b: the writer's")
	assert.Len(t, fams["kafka_writer_produced_bytes_total"].GetMetric(), 2, "one series per leader rack")

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}
