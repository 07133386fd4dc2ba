package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

// kill -9 of a partition's leader that is also the active controller, with
// the Writer's default settings (acks=all): the dead broker stays in the
// metadata until a new controller is elected and then fences it, longer
// than ten attempts last. No WriteMessages call may fail, and every
// acknowledged message is in the log once, in the order each writer wrote.
func TestWriterIntegrationKilledLeaderController(t *testing.T) {
	c := requireRackCluster(t)
	if c.Tool == "" {
		t.Skip("needs the cluster tool to kill a broker")
	}
	ktesting.LockCluster(t)
	ctrl := ktesting.ActiveController(t)
	replicas := []int{ctrl}
	for _, id := range c.BrokerIDs {
		if id != ctrl {
			replicas = append(replicas, id)
		}
	}
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: replicas}}})
	require.Equal(t, ctrl, dialLeader(t, newDialer(), c.Brokers[0], topic, 0).Broker().ID, "leader of the new partition")

	w := &kafka.Writer{Addr: kafka.TCP(c.Brokers...), Topic: topic, RequiredAcks: kafka.RequireAll}
	t.Cleanup(func() { w.Close() })
	ctx := testContext(t, 3*time.Minute)

	const writers = 4
	var (
		mu     sync.Mutex
		acked  [writers][]string
		failed []error
		total  int
	)
	count := func() int { mu.Lock(); defer mu.Unlock(); return total }
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				msgs := make([]kafka.Message, 5)
				vals := make([]string, len(msgs))
				for j := range msgs {
					vals[j] = fmt.Sprintf("w%d-%d", g, i*len(msgs)+j)
					msgs[j] = kafka.Message{Value: []byte(vals[j])}
				}
				err := w.WriteMessages(ctx, msgs...)
				mu.Lock()
				if err == nil {
					acked[g] = append(acked[g], vals...)
					total += len(vals)
				} else if ctx.Err() == nil {
					failed = append(failed, err)
				}
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		}(g)
	}
	eventually(t, 30*time.Second, "200 messages acknowledged", func() bool { return count() >= 200 })
	ktesting.KillBroker(t, ctrl)
	killed := time.Now()
	atKill := count()
	eventually(t, 90*time.Second, "200 more messages acknowledged after the kill", func() bool { return count() >= atKill+200 })
	resumed := time.Since(killed)
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("leader and controller %d killed: writes resumed within %s; %d messages acknowledged, %d calls failed, %d retries",
		ctrl, resumed.Round(100*time.Millisecond), total, len(failed), w.Stats().Retries)
	for i, err := range failed {
		if i == 3 {
			break
		}
		t.Logf("failed: %v", err)
	}
	assert.Empty(t, failed, "WriteMessages calls that failed")

	// The log, read at the new leader: every acknowledged message once, each
	// writer's in the order it wrote them.
	msgs, err := readAll(brokerOtherThan(c, ctrl), topic, 0)
	require.NoError(t, err)
	pos := map[string]int{}
	for i, m := range msgs {
		v := string(m.Value)
		_, dup := pos[v]
		require.False(t, dup, "%s twice in the log", v)
		pos[v] = i
	}
	for g := range acked {
		last := -1
		for _, v := range acked[g] {
			p, ok := pos[v]
			require.True(t, ok, "acknowledged %s is not in the log", v)
			require.Greater(t, p, last, "%s out of order", v)
			last = p
		}
	}
}

// brokerOtherThan returns the address of a broker other than id.
func brokerOtherThan(c *ktesting.Cluster, id int) string {
	for i, b := range c.BrokerIDs {
		if b != id {
			return c.Brokers[i]
		}
	}
	return c.Brokers[0]
}
