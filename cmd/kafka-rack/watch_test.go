package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
)

// -watch runs Readers configured as the plan: with -client-select on
// brokers without a selector, every partition is read from broker 2 in
// rack b, as the plan says, not from the leaders.
func TestKafkaRackWatchClientSelect(t *testing.T) {
	fc := fakeRacks(t, false)
	cfg := fakeConfig(fc)
	cfg.ClientSelect, cfg.JSON = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := buildReport(ctx, cfg)
	require.NoError(t, err)
	want := map[int]int{}
	for _, p := range rep.Partitions {
		want[p.Partition] = p.Read.ID
	}
	require.Equal(t, map[int]int{0: 2, 1: 2, 2: 2}, want, "the plan")

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := &tickWatcher{t: t, want: want, stop: stop}
	err = watch(wctx, cfg, []topicPartition{{"t", 0}, {"t", 1}, {"t", 2}}, w, 100*time.Millisecond, 200)
	require.NoError(t, err)
	require.True(t, w.matched, "no tick in 20 s showed the planned brokers %v; last: %s", want, w.last)
}

// Each tick ends with the bytes of every partition together.
func TestKafkaRackWatchTotal(t *testing.T) {
	tick := watchTick{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Routing: []kafka.PartitionRoutingStats{
			{Topic: "t", Partition: 0, Broker: 2, BrokerRack: "b", Leader: 1, SameRackBytes: 300},
			{Topic: "u", Partition: 1, Broker: 3, BrokerRack: "c", Leader: 3, CrossRackBytes: 100},
		},
		Total: watchTotal{SameRackBytes: 300, CrossRackBytes: 100},
	}
	var out bytes.Buffer
	require.NoError(t, writeTick(&out, tick, &config{Rack: "b"}))
	assert.Contains(t, out.String(), "03:04:05  t/0: broker 2 (b), leader 1, in rack")
	assert.Contains(t, out.String(), "03:04:05  u/1: broker 3 (c), leader 3, out of rack")
	assert.Contains(t, out.String(), "03:04:05  total: 300 B same-rack, 100 B cross-rack (75.0% in rack)\n")
}

func TestKafkaRackWatchReaderConfig(t *testing.T) {
	cfg := &config{Brokers: []string{"h:9092"}, Rack: "b"}
	rc := watchReaderConfig(cfg, nil, topicPartition{"t", 4})
	assert.Nil(t, rc.ReplicaSelector)
	assert.Equal(t, "b", rc.Rack)
	assert.Equal(t, 4, rc.Partition)
	cfg.ClientSelect = true
	assert.Equal(t, kafka.RackAffinityReplicaSelector{}, watchReaderConfig(cfg, nil, topicPartition{"t", 4}).ReplicaSelector)
}
