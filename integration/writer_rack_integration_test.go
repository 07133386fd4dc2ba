package integration

// Rack-aware partitioning of the Writer (Writer.Rack, KIP-1123) on the real 3-rack cluster: a rack-b
// Writer's keyless messages go to the partitions led in rack b, counted in the produce request bytes at
// its sockets; keyed messages keep their partitions.

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
)

// wrTopic creates a topic of six partitions led in racks a, b, c, a, b, c, each replicated on all three.
func wrTopic(a, b, cc int) []kafka.ReplicaAssignment {
	out := make([]kafka.ReplicaAssignment, 6)
	for p := range out {
		out[p] = kafka.ReplicaAssignment{Partition: p, Replicas: [][]int{{a, b, cc}, {b, cc, a}, {cc, a, b}}[p%3]}
	}
	return out
}

func TestWriterIntegrationRackKeylessStaysInRack(t *testing.T) {
	c := requireRackCluster(t)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: wrTopic(a, b, cc)})
	ctx := testContext(t, time.Minute)

	spy := &apiSpy{}
	w := &kafka.Writer{
		Addr:         kafka.TCP(c.Brokers...),
		Topic:        topic,
		Rack:         "b",
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond,
		Transport:    &kafka.Transport{Dial: spy.dial},
	}
	defer w.Close()
	const n = 3000
	for i := 0; i < n; i += 100 {
		msgs := make([]kafka.Message, 100)
		for j := range msgs {
			msgs[j] = kafka.Message{Value: []byte(fmt.Sprintf("value-%06d-%s", i+j, "padding-padding-padding"))}
		}
		require.NoError(t, w.WriteMessages(ctx, msgs...))
	}

	var local, other int
	for _, r := range spy.requests(apiProduce) {
		if r.addr == c.Addr(b) {
			local += r.size
		} else {
			other += r.size
		}
	}
	require.Positive(t, local+other)
	share := float64(local) / float64(local+other)
	t.Logf("WRITERRACKFIGURE produce request bytes to the rack-b leader: %d of %d (%.2f %%)", local, local+other, 100*share)
	assert.GreaterOrEqual(t, share, 0.99, "produce bytes to the rack-b leader")

	// Where the records are: partitions 1 and 4, led in rack b.
	counts := wrCounts(t, c.Brokers[0], topic)
	assert.Equal(t, []int64{0, counts[1], 0, 0, counts[4], 0}, counts)
	assert.Equal(t, int64(n), counts[1]+counts[4])
	assert.Positive(t, counts[1])
	assert.Positive(t, counts[4])
}

// Keyed messages under Hash and Murmur2Balancer go where they would without a rack.
func TestWriterIntegrationRackKeyedKeepPartitions(t *testing.T) {
	c := requireRackCluster(t)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	for _, bc := range []struct {
		name string
		b    kafka.Balancer
	}{{"Hash", &kafka.Hash{}}, {"Murmur2Balancer", kafka.Murmur2Balancer{}}} {
		t.Run(bc.name, func(t *testing.T) {
			topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: wrTopic(a, b, cc)})
			ctx := testContext(t, time.Minute)
			w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, Rack: "b", Balancer: bc.b,
				RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: 1000}
			defer w.Close()
			const keys = 100000
			msgs := make([]kafka.Message, keys)
			for i := range msgs {
				msgs[i] = kafka.Message{Key: []byte("key-" + strconv.Itoa(i)), Value: []byte("v")}
			}
			require.NoError(t, w.WriteMessages(ctx, msgs...))
			all := []int{0, 1, 2, 3, 4, 5}
			read, misplaced := 0, 0
			for p := 0; p < 6; p++ {
				for _, m := range wrRead(t, c.Brokers[0], topic, p) {
					read++
					if bc.b.Balance(m, all...) != p {
						misplaced++
					}
				}
			}
			assert.Equal(t, keys, read)
			assert.Zero(t, misplaced, "keyed messages in another partition than without a rack")
		})
	}
}

// wrRead returns the records of partition p of topic.
func wrRead(t *testing.T, broker, topic string, p int) []kafka.Message {
	t.Helper()
	conn := dialLeader(t, newDialer(), broker, topic, p)
	defer conn.Close()
	last, err := conn.ReadLastOffset()
	require.NoError(t, err)
	var out []kafka.Message
	for int64(len(out)) < last {
		_, err := conn.Seek(int64(len(out)), kafka.SeekAbsolute)
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		batch := conn.ReadBatch(1, 10<<20)
		for {
			m, err := batch.ReadMessage()
			if err != nil {
				break
			}
			out = append(out, kafka.Message{Key: m.Key, Value: m.Value})
		}
		require.NoError(t, batch.Close(), "reading partition %d from %d", p, len(out))
	}
	return out
}

// wrCounts returns the number of records in each partition of topic (its end offsets).
func wrCounts(t *testing.T, broker, topic string) []int64 {
	t.Helper()
	out := make([]int64, 6)
	for p := range out {
		conn := dialLeader(t, newDialer(), broker, topic, p)
		last, err := conn.ReadLastOffset()
		conn.Close()
		require.NoError(t, err, "the end of partition %d", p)
		out[p] = last
	}
	return out
}
