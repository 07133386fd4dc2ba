package kafka

// A frozen broker (SIGSTOP) holding the control connection, on the real
// 3-rack cluster: metadata refreshes and ListOffsets still answer within
// the control deadline, and Readers of partitions whose leader is up keep
// delivering. Helpers (prefix it) are in integration_helpers_test.go.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ktesting "github.com/rackfetch/kafka-go/testing"
)

func TestClusterIntegrationFrozenControlBroker(t *testing.T) {
	c := ktesting.RequireRackCluster(t)
	// The cluster to this test alone from the start: the leaders and the
	// control connections found below must still hold when the pause comes.
	ktesting.LockCluster(t)
	const partitions = 3
	topic := itTopic(t, c, TopicConfig{NumPartitions: partitions})
	leaders := itLeaders(t, c, topic, partitions)

	// One producer per partition, so that a frozen leader only stalls its
	// own partition's writes.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(stop); wg.Wait() })
	for part := 0; part < partitions; part++ {
		wg.Add(1)
		go func(part int) {
			defer wg.Done()
			send := itSender(c, topic, part)
			defer send(nil)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				_ = send([]byte("m"))
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}(part)
	}

	// One partition Reader per partition (default Dialer: control deadline
	// 2.5 s), recording when each delivered last.
	var mu sync.Mutex
	last := map[int]time.Time{}
	delivered := map[int][]time.Time{} // while the broker is frozen
	var pauseStart, pauseEnd time.Time
	readers := make([]*Reader, partitions)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for part := 0; part < partitions; part++ {
		r := NewReader(ReaderConfig{Brokers: c.Brokers, Topic: topic, Partition: part, MaxWait: 500 * time.Millisecond})
		readers[part] = r
		t.Cleanup(func() { r.Close() })
		wg.Add(1)
		go func(part int) {
			defer wg.Done()
			for {
				if _, err := r.ReadMessage(ctx); err != nil {
					if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
						t.Logf("partition %d: ReadMessage: %v", part, err)
					}
					return
				}
				now := time.Now()
				mu.Lock()
				if !pauseStart.IsZero() && pauseEnd.IsZero() {
					delivered[part] = append(delivered[part], now)
				}
				last[part] = now
				mu.Unlock()
			}
		}(part)
	}
	itEventually(t, 30*time.Second, "every partition delivering", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(last) == partitions
	})

	// The broker holding most Readers' control connections: each Reader has
	// its own cluster view, whose first choice is the lowest broker id among
	// its open control connections (leaders it asked for offsets included).
	first := map[int]int{} // reader → first broker asked
	votes := map[int]int{}
	frozen := -1
	for part, r := range readers {
		require.NoError(t, r.cluster.refresh(ctx, topic))
		first[part] = r.cluster.controlTargets()[0].id
		votes[first[part]]++
		if frozen < 0 || votes[first[part]] > votes[frozen] {
			frozen = first[part]
		}
	}
	var up []int // partitions whose leader stays up
	for part, l := range leaders {
		if l != frozen {
			up = append(up, part)
		}
	}
	require.NotEmpty(t, up)
	deadline := readers[0].cluster.timeout
	t.Logf("leaders %v; freezing broker %d, first asked by readers %v; control deadline %v", leaders, frozen, first, deadline)

	ktesting.PauseBroker(t, frozen)
	mu.Lock()
	pauseStart = time.Now()
	mu.Unlock()

	// When the leaders drop the frozen broker from the ISR: until then no
	// acks=all write to those partitions completes and nothing new can be
	// read, whatever the client does (replica.lag.time.max.ms, 4 s on the
	// test cluster, plus a KRaft controller election when the frozen broker
	// was the active controller).
	var live int
	for _, id := range c.BrokerIDs {
		if id != frozen {
			live = id
			break
		}
	}
	isrOut := map[int]time.Time{}
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		conn, err := DialContext(context.Background(), "tcp", c.Addr(live))
		if err != nil {
			t.Logf("watching the ISR at broker %d: %v", live, err)
			return
		}
		defer conn.Close()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(12 * time.Second); time.Now().Before(deadline); <-tick.C {
			_ = conn.SetDeadline(time.Now().Add(time.Second))
			ps, err := conn.ReadPartitions(topic)
			if err != nil {
				continue
			}
			mu.Lock()
			for _, p := range ps {
				if _, seen := isrOut[p.ID]; seen || p.Leader.ID == frozen {
					continue
				}
				in := false
				for _, r := range p.Isr {
					in = in || r.ID == frozen
				}
				if !in {
					isrOut[p.ID] = time.Now()
				}
			}
			n := len(isrOut)
			mu.Unlock()
			if n >= len(up) {
				return
			}
		}
	}()

	// Metadata: the first refresh of each Reader pays one deadline at most,
	// the next ones go straight to a responsive broker.
	for part, r := range readers {
		start := time.Now()
		err := r.cluster.refresh(context.Background(), topic)
		took1 := time.Since(start)
		require.NoError(t, err, "reader %d: refresh with broker %d frozen", part, frozen)
		start = time.Now()
		require.NoError(t, r.cluster.refresh(context.Background(), topic))
		second := time.Since(start)
		t.Logf("reader %d (control connection to broker %d): metadata refresh with broker %d frozen: first %v, next %v", part, first[part], frozen, took1, second)
		if first[part] == frozen {
			assert.Less(t, took1, deadline+time.Second, "reader %d: first refresh", part)
		} else {
			assert.Less(t, took1, time.Second, "reader %d: first refresh, not at the frozen broker", part)
		}
		assert.Less(t, second, time.Second, "reader %d: refresh after the stall went to the frozen broker", part)
	}

	// ListOffsets at a leader that is up answers at once; at the frozen
	// leader each attempt fails after the deadline and is retried with fresh
	// metadata until the controller names a new leader.
	for _, part := range up {
		start := time.Now()
		_, err := readers[part].listOffset(context.Background(), topic, part, LastOffset)
		took := time.Since(start)
		require.NoError(t, err)
		t.Logf("ListOffsets of partition %d (leader %d, up): %v", part, leaders[part], took)
		assert.Less(t, took, deadline+time.Second)
	}
	for part, l := range leaders {
		if l != frozen {
			continue
		}
		start := time.Now()
		_, err := readers[part].listOffset(context.Background(), topic, part, LastOffset)
		took := time.Since(start)
		p, _ := readers[part].cluster.partition(topic, part)
		t.Logf("ListOffsets of partition %d (leader %d, frozen): %v, err %v, leader now %d", part, l, took, err, p.Leader.ID)
	}

	// Readers of partitions whose leader is up keep delivering for 12 s of
	// the pause. The frozen broker is a follower of those partitions too:
	// their high watermark (and so any delivery) waits until the leader
	// drops it from the ISR, replica.lag.time.max.ms (4 s on the test
	// cluster) after its last fetch, so gaps of ~3-4 s are the broker's.
	time.Sleep(12*time.Second - time.Since(pauseStart)) // the fault's length, not a synchronization
	<-watchDone
	mu.Lock()
	pauseEnd = time.Now()
	for _, part := range up {
		gapFrom := func(from time.Time) time.Duration {
			gap, prev := time.Duration(0), from
			for _, at := range delivered[part] {
				if at.After(from) {
					gap, prev = max(gap, at.Sub(prev)), at
				}
			}
			return max(gap, pauseEnd.Sub(prev))
		}
		out, ok := isrOut[part]
		if !assert.True(t, ok, "partition %d: broker %d never left its ISR", part, frozen) {
			continue
		}
		raw, gap := gapFrom(pauseStart), gapFrom(out)
		t.Logf("partition %d (leader %d): broker %d out of its ISR %v after the pause; longest gap between deliveries %v (%v from the pause)",
			part, leaders[part], frozen, out.Sub(pauseStart), gap, raw)
		assert.Less(t, gap, 5*time.Second, "partition %d stalled while its leader was up and its ISR writable", part)
	}
	mu.Unlock()
	ktesting.ResumeBroker(t, frozen)
}

// A topic deleted and created again under the same name: the cache follows
// the new topic ID although its leader epochs (0) are below the old ones.
func TestClusterIntegrationRecreatedTopic(t *testing.T) {
	c := ktesting.RequireRackCluster(t)
	topic := itTopic(t, c, TopicConfig{NumPartitions: 1})
	ctx := itCtx(t, 2*time.Minute)
	cl := newCluster(itDialer(), c.Brokers)
	t.Cleanup(cl.close)

	// Raise partition 0's leader epoch: another replica first, elected.
	require.NoError(t, cl.refresh(ctx, topic))
	p, _ := cl.partition(topic, 0)
	replicas := []int{p.Replicas[1].ID, p.Replicas[0].ID, p.Replicas[2].ID}
	admin := itDialController(t, c)
	client := &Client{Addr: admin.RemoteAddr(), Timeout: 30 * time.Second}
	moved, err := client.AlterPartitionReassignments(ctx, &AlterPartitionReassignmentsRequest{
		Topic:       topic,
		Assignments: []AlterPartitionReassignmentsRequestAssignment{{PartitionID: 0, BrokerIDs: replicas}},
		Timeout:     30 * time.Second,
	})
	require.NoError(t, err)
	require.NoError(t, moved.Error)
	for _, r := range moved.PartitionResults {
		require.NoError(t, r.Error, "reordering the replicas of %s/%d", topic, r.PartitionID)
	}
	itEventually(t, 30*time.Second, "leader epoch of the first incarnation above 0", func() bool {
		// Not yet in sync, or already led by the first replica: the poll
		// tries again.
		_, _ = client.ElectLeaders(ctx, &ElectLeadersRequest{Topic: topic, Partitions: []int{0}, Timeout: 10 * time.Second})
		if cl.refresh(ctx, topic) != nil {
			return false
		}
		p, _ := cl.partition(topic, 0)
		return p.LeaderEpoch > 0
	})
	oldID, gen := cl.topicID(topic)
	require.NotZero(t, oldID, "Metadata v10+ carries topic IDs")
	require.Equal(t, 1, gen)
	p, _ = cl.partition(topic, 0)
	oldEpoch := p.LeaderEpoch

	admin.SetDeadline(time.Now().Add(30 * time.Second))
	require.NoError(t, admin.DeleteTopics(topic))
	itEventually(t, 30*time.Second, "topic "+topic+" created again", func() bool {
		return admin.CreateTopics(TopicConfig{Topic: topic, NumPartitions: 1, ReplicationFactor: 3}) == nil
	})
	itEventually(t, 30*time.Second, "the new incarnation in the cache", func() bool {
		if cl.refresh(ctx, topic) != nil {
			return false
		}
		p, ok := cl.partition(topic, 0)
		id, _ := cl.topicID(topic)
		return ok && id != oldID && p.Leader.ID >= 0
	})
	newID, gen := cl.topicID(topic)
	p, _ = cl.partition(topic, 0)
	t.Logf("first incarnation %x at leader epoch %d; second %x at leader epoch %d (leader %d)", oldID, oldEpoch, newID, p.LeaderEpoch, p.Leader.ID)
	assert.Equal(t, 2, gen)
	assert.Less(t, p.LeaderEpoch, oldEpoch, "the new incarnation's epoch should restart below the old one")
}

// itSender returns a function that writes one message with value v to
// topic/part through its leader (acks=all), dialing the leader again after a
// failure; send(nil) closes its connection.
func itSender(c *ktesting.Cluster, topic string, part int) func(v []byte) error {
	var conn *Conn
	boot := 0 // bootstrap broker of the next leader lookup: moves on after failures
	return func(v []byte) error {
		if v == nil {
			if conn != nil {
				conn.Close()
			}
			return nil
		}
		if conn == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			d := &Dialer{ClientID: "kafka-go-itest-producer", Timeout: 5 * time.Second}
			c, err := d.DialLeader(ctx, "tcp", c.Brokers[boot%len(c.Brokers)], topic, part)
			if err != nil {
				boot++
				return err
			}
			conn = c
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.WriteMessages(Message{Value: v}); err != nil {
			conn.Close()
			conn = nil
			return err
		}
		return nil
	}
}
