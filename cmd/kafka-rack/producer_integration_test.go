package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
)

// The producer plan names the partitions a Writer with Rack writes its
// keyless messages to on the real cluster: the ones whose end offsets move.
func TestKafkaRackProducerPlanMatchesWriter(t *testing.T) {
	c, ctx := krCluster(t)
	topic := krTopic(t, ctx, c)
	for _, rack := range []string{c.Rack(c.BrokerIDs[0]), c.Rack(c.BrokerIDs[1]), "no-such-rack"} {
		t.Run(rack, func(t *testing.T) {
			rep, err := buildReport(ctx, krConfig(c, topic, rack))
			require.NoError(t, err)
			require.NotNil(t, rep.Producer)
			before := krEnds(t, ctx, c.Brokers, topic)
			w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, Rack: rack, RequiredAcks: kafka.RequireAll}
			msgs := make([]kafka.Message, 300)
			for i := range msgs {
				msgs[i] = kafka.Message{Value: []byte("keyless")}
			}
			require.NoError(t, w.WriteMessages(ctx, msgs...))
			require.NoError(t, w.Close())
			after := krEnds(t, ctx, c.Brokers, topic)
			var written []int
			for p := range after {
				if after[p] > before[p] {
					written = append(written, p)
				}
			}
			require.Equal(t, rep.Producer.Used, written, "plan %+v", rep.Producer)
			require.Equal(t, rack == "no-such-rack", rep.Producer.AllPartitions)
		})
	}
}

// krEnds returns the end offset of every partition of topic.
func krEnds(t *testing.T, ctx context.Context, brokers []string, topic string) []int64 {
	t.Helper()
	out := make([]int64, krPartitions)
	for p := range out {
		conn, err := kafka.DialLeader(ctx, "tcp", brokers[0], topic, p)
		require.NoError(t, err)
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		out[p], err = conn.ReadLastOffset()
		conn.Close()
		require.NoError(t, err, "the end of partition %d", p)
	}
	return out
}
