package integration

// The rack check on the real 3-rack cluster: a Reader with a Rack says,
// once, through its ErrorLogger and in ReaderStats.RackInactive, why rack-
// aware fetching does nothing — brokers without a replica selector (a
// cluster of its own unless the environment's has none, as for
// TestRackIntegrationNoSelector), a rack no broker has — and says nothing
// when it reads in its rack. Brokers below Fetch v11 are the fake broker's
// (reader_rack_check_test.go).

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const riRackLine = "rack-aware fetching is inactive"

// riRackCase is a Reader in rack reading a one-partition topic led in rack
// a, with its replica in rack b second.
type riRackCase struct {
	c          *ktesting.Cluster
	topic      string
	leader     int
	follower   int // the rack-b replica
	r          *kafka.Reader
	info, errs *riLogger
	ctx        context.Context
	next       int // the next value to write and read
	start      time.Time
}

func newRIRackCase(t *testing.T, c *ktesting.Cluster, rack string) *riRackCase {
	t.Helper()
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	k := &riRackCase{c: c, leader: a, follower: b, ctx: testContext(t, 2*time.Minute),
		info: &riLogger{t: t, prefix: "reader: "}, errs: &riLogger{t: t, prefix: "reader error: "}}
	k.topic = createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	k.start = time.Now()
	k.r = riReader(t, c, k.topic, func(cfg *kafka.ReaderConfig) {
		cfg.Rack, cfg.Logger, cfg.ErrorLogger = rack, k.info, k.errs
	})
	k.more(t, 50)
	return k
}

// more writes n values and reads them back.
func (k *riRackCase) more(t *testing.T, n int) {
	t.Helper()
	riProduce(t, k.c, k.topic, k.next, n, nil)
	require.Zero(t, riExpect(t, k.ctx, k.r, k.next, n), "errors returned by FetchMessage")
	k.next += n
}

// lines returns the log lines of l that contain sub.
func (l *riLogger) linesWith(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// found waits until the Reader has found a cause, keeping it reading, and
// checks it is the only one, logged once.
func (k *riRackCase) found(t *testing.T, cause kafka.RackInactiveCause) kafka.RackInactive {
	t.Helper()
	var st kafka.ReaderStats
	eventually(t, 60*time.Second, "the rack check's finding", func() bool {
		k.more(t, 5)
		st = k.r.Stats()
		return len(st.RackInactive) > 0
	})
	k.more(t, 20) // still reading; nothing more to say
	require.Len(t, st.RackInactive, 1, "%+v", st.RackInactive)
	ri := st.RackInactive[0]
	t.Logf("found %q %.1f s after the Reader started", ri.Cause, ri.Since.Sub(k.start).Seconds())
	assert.Equal(t, cause, ri.Cause)
	assert.Equal(t, st.RackInactive, k.r.Stats().RackInactive, "Stats does not reset it")
	lines := k.errs.linesWith(riRackLine)
	require.Len(t, lines, 1, "error log lines naming the cause")
	assert.Contains(t, lines[0], "("+cause.Sentence()+")")
	assert.Contains(t, lines[0], ri.Detail)
	assert.Empty(t, k.info.linesWith(riRackLine), "logged through ErrorLogger only")
	return ri
}

func TestRackInactiveIntegration(t *testing.T) {
	c := requireRackCluster(t)

	// No replica.selector.class: the leader names no replica though the
	// rack-b replica is in sync.
	t.Run("no replica selector", func(t *testing.T) {
		nc := c
		if c.HasSelector() {
			if c.Tool == "" {
				t.Skip("the cluster has a replica selector, and without its tool (KAFKA_CLUSTER_TOOL) no selector-less one can be started")
			}
			nc = ktesting.StartCluster(t, ktesting.ClusterOptions{Selector: "none", PortBase: secondClusterPortBase(t)})
		}
		k := newRIRackCase(t, nc, "b")
		ri := k.found(t, kafka.RackNoReplicaSelector)
		assert.Equal(t, []int{k.leader}, ri.Brokers)
		assert.Contains(t, ri.Detail, fmt.Sprintf("in-sync replica %d is in that rack", k.follower))
		assert.Equal(t, k.leader, k.r.Stats().Routing[0].Broker, "read from the leader")
	})

	// A rack no broker has (AZ names where brokers have other names).
	t.Run("unknown rack", func(t *testing.T) {
		k := newRIRackCase(t, c, "us-east-1a")
		ri := k.found(t, kafka.RackNoBrokerInRack)
		var racks []string
		for _, id := range c.BrokerIDs {
			racks = append(racks, fmt.Sprintf("%q", c.Rack(id)))
		}
		sort.Strings(racks)
		assert.Contains(t, ri.Detail, `no broker is in rack "us-east-1a"; the brokers' racks are `+strings.Join(racks, ", "))
	})

	// The right rack on brokers with a selector: nothing found while the
	// Reader reads from the rack-b replica for longer than the check
	// needs to decide.
	t.Run("rack in use", func(t *testing.T) {
		sc := c
		if !c.HasSelector() {
			if c.Tool == "" {
				t.Skip("the cluster has no replica selector, and without its tool (KAFKA_CLUSTER_TOOL) none can be started")
			}
			sc = ktesting.StartCluster(t, ktesting.ClusterOptions{Selector: "rack", PortBase: secondClusterPortBase(t)})
		}
		k := newRIRackCase(t, sc, "b")
		eventually(t, 30*time.Second, "reading from the rack-b replica", func() bool {
			k.more(t, 5)
			st := k.r.Stats()
			return len(st.Routing) == 1 && st.Routing[0].Broker == k.follower
		})
		tick := time.NewTicker(time.Second) // paces the writes
		defer tick.Stop()
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); <-tick.C {
			k.more(t, 5)
			require.Nil(t, k.r.Stats().RackInactive)
		}
		assert.Empty(t, k.errs.linesWith(riRackLine))
		assert.Empty(t, k.info.linesWith(riRackLine))
	})
}
