package integration

// Metadata faults on the real cluster, with a rack-b Reader: a
// topic deleted and created again under the same name (a new topic ID,
// leader epochs from 0), and a partition left without a leader.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// The Reader notices the new incarnation, says so, and reads the new topic
// from its start instead of waiting at the old topic's offset forever.
func TestReaderIntegrationRecreatedTopic(t *testing.T) {
	c := requireRackCluster(t)
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	assign := []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: assign})
	riProduce(t, c, topic, 0, 100, nil)
	ctx := testContext(t, 120*time.Second)
	errLog := &riLogger{t: t, prefix: "reader error: "}
	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) { cfg.Rack, cfg.ErrorLogger = "b", errLog })
	require.Zero(t, riExpect(t, ctx, r, 0, 100))

	recreateTopic(t, c, kafka.TopicConfig{Topic: topic, NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignments: assign})
	riProduce(t, c, topic, 0, 50, nil)
	assert.Zero(t, riExpect(t, ctx, r, 0, 50), "errors returned to the application")
	assert.NotEmpty(t, errLog.find("deleted and created again"))
}

// The same with a group reader, which then keeps the partition across a
// rebalance (a member joins for another topic): it goes on after the last
// message it returned from the new topic, not at the old topic's offset.
func TestReaderGroupIntegrationRecreatedTopicRebalance(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	other := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})
	riProduce(t, c, topic, 0, 100, nil)
	ctx := testContext(t, 120*time.Second)
	group := ktesting.UniqueTopic(t)
	log := &riLogger{t: t, prefix: "a: "}
	member := func(topic string, l kafka.Logger) *kafka.Reader {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: c.Brokers, GroupID: group, Topic: topic, Dialer: newDialer(), Rack: "b",
			MaxWait: 500 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 6 * time.Second,
			RebalanceTimeout: 5 * time.Second, JoinGroupBackoff: 200 * time.Millisecond, Logger: l, ErrorLogger: l,
		})
		t.Cleanup(func() { r.Close() })
		return r
	}
	a := member(topic, log)
	read := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			m, err := a.ReadMessage(ctx)
			require.NoError(t, err, "ReadMessage, want offset %d", i)
			require.Equal(t, fmt.Sprintf("%d v%d", i, i), fmt.Sprintf("%d %s", m.Offset, m.Value))
		}
	}
	read(0, 100)

	recreateTopic(t, c, kafka.TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: 3})
	riProduce(t, c, topic, 0, 50, nil)
	read(0, 2)
	require.NotEmpty(t, log.find("deleted and created again"))

	require.Equal(t, 1, log.count(": assigned "))
	member(other, &riLogger{t: t, prefix: "b: "})
	eventually(t, 60*time.Second, "a second generation", func() bool { return log.count(": assigned ") >= 2 })
	read(2, 50)
}

// recreateTopic deletes cfg's one-partition topic, creates it again with
// cfg and waits until every broker has its partition led and in sync.
func recreateTopic(t *testing.T, c *ktesting.Cluster, cfg kafka.TopicConfig) {
	t.Helper()
	require.NoError(t, dialController(t, c).DeleteTopics(cfg.Topic))
	eventually(t, 60*time.Second, "the topic recreated", func() bool {
		err := dialController(t, c).CreateTopics(cfg)
		if err != nil {
			t.Logf("creating %s again: %v", cfg.Topic, err)
		}
		return err == nil
	})
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, fmt.Sprintf("topic %s settled on %s", cfg.Topic, addr), func() bool {
			ps, err := partitionsOn(addr, cfg.Topic)
			return err == nil && settled(ps, 1)
		})
	}
}

// The only replica of a partition dies: metadata names no leader (-1). The
// Reader keeps asking, returns no error, and reads on once the broker is
// back, nothing lost or repeated.
func TestReaderIntegrationLeaderless(t *testing.T) {
	c := requireRackCluster(t)
	only := brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{only}}}})
	riProduce(t, c, topic, 0, 100, nil)
	ctx := testContext(t, 180*time.Second)
	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) { cfg.Rack, cfg.MaxAttempts = "b", 1 })
	require.Zero(t, riExpect(t, ctx, r, 0, 100))

	ktesting.KillBroker(t, only)
	var other string
	for _, id := range c.BrokerIDs {
		if id != only {
			other = c.Addr(id)
			break
		}
	}
	eventually(t, 60*time.Second, "the partition without a leader", func() bool {
		ps, err := partitionsOn(other, topic)
		return err == nil && len(ps) == 1 && ps[0].Leader.ID < 0
	})
	ktesting.RestartBroker(t, only)
	eventually(t, 60*time.Second, "the partition led again", func() bool {
		ps, err := partitionsOn(other, topic)
		return err == nil && len(ps) == 1 && ps[0].Leader.ID == only
	})
	riProduce(t, c, topic, 100, 50, nil)
	assert.Zero(t, riExpect(t, ctx, r, 100, 50), "errors returned to the application")
}

// The cluster behind the Reader's and Writer's addresses is rebuilt: every
// broker stopped, its storage wiped and formatted afresh (a new cluster
// ID), the topic created again under the same name. The metadata cache
// forgets what the old cluster told (internal/metadata, Cache.seenCluster); the
// Reader reads the new log from its start, not at the old offset, and the
// same Writer writes into the new cluster. Nothing reaches the application
// as an error.
func TestReaderIntegrationRecreatedCluster(t *testing.T) {
	c := requireRackCluster(t)
	if c.Tool == "" {
		t.Skip("rebuilding a cluster needs the cluster tool (KAFKA_CLUSTER_TOOL)")
	}
	c = ktesting.StartCluster(t, ktesting.ClusterOptions{PortBase: secondClusterPortBase(t)})
	topic := ktesting.UniqueTopic(t)
	create := func(c *ktesting.Cluster) {
		a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
		createTopic(t, c, kafka.TopicConfig{Topic: topic, ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	}
	clusterID := func(c *ktesting.Cluster) string {
		md, err := (&kafka.Client{Addr: kafka.TCP(c.Brokers...)}).Metadata(testContext(t, 30*time.Second), &kafka.MetadataRequest{Topics: []string{topic}})
		require.NoError(t, err)
		return md.ClusterID
	}
	w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: 10 * time.Millisecond, Transport: &kafka.Transport{}}
	t.Cleanup(func() { w.Close() })
	write := func(ctx context.Context, n int) {
		msgs := make([]kafka.Message, n)
		for i := range msgs {
			msgs[i] = kafka.Message{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("v%d", i))}
		}
		require.NoError(t, w.WriteMessages(ctx, msgs...))
	}
	ctx := testContext(t, 4*time.Minute)

	create(c)
	oldID := clusterID(c)
	write(ctx, 100)
	errLog := &riLogger{t: t, prefix: "reader error: "}
	r := riReader(t, c, topic, func(cfg *kafka.ReaderConfig) { cfg.Rack, cfg.ErrorLogger = "b", errLog })
	require.Zero(t, riExpect(t, ctx, r, 0, 100))

	c = ktesting.RecreateCluster(t, c)
	create(c)
	require.NotEqual(t, oldID, clusterID(c), "the cluster was formatted afresh")
	// More records than the old log had: a Reader still at offset 100 of
	// the old one would return offset 100 first.
	write(ctx, 150)
	assert.Zero(t, riExpect(t, ctx, r, 0, 150), "errors returned to the application")
	assert.NotEmpty(t, errLog.find("deleted and created again"))
}
