package integration

// Acceptance of client-side replica selection (ReaderConfig.ReplicaSelector,
// RackAffinityReplicaSelector) on a real 3-rack cluster WITHOUT
// replica.selector.class, whose leaders never name a replica. One cluster
// serves every subtest (a cluster start costs 20-60 s): the environment's
// when it has no selector, else one started for this test on ports from
// SECOND_CLUSTER_PORT_BASE (as TestRackIntegrationNoSelector does).
//
//	SteadyState     rack-b Readers read ≥ 99 % of their bytes from the rack-b broker (stats and
//	                sockets), one routing change per partition; a leader move keeps them there
//	FollowerKilled  kill -9 of the rack-b broker, its restart: back within 5 s of rejoining the ISR
//	FollowerPaused  SIGSTOP of the rack-b broker, a leader move meanwhile, SIGCONT: the same
//	RollingRestart  every broker restarted in turn (racks a, b, c): back on rack b within 5 s of it
//	                rejoining every ISR
//	FollowerThrottled  the lag bound (follower_lag_integration_test.go) with the client's choice
//	Conn            a Conn dialed to kafka.ReplicaToRead's broker (the rack-b follower) reads the log:
//	                a broker serves a v11+ fetch with a rack from any replica, whatever its selector
//	Group           three group Readers in racks a, b, c over 6 partitions RF 3: 2/2/2, each reads
//	                only from its own rack
//
// Every subtest checks that the Readers returned exactly the log (nothing
// lost, repeated or out of order) and that FetchMessage returned no error.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

func TestRackClientSelection(t *testing.T) {
	start := time.Now()
	c, chaos := csCluster(t)
	t.Run("SteadyState", func(t *testing.T) { csSteadyState(t, c) })
	t.Run("FollowerKilled", func(t *testing.T) { csFollowerKilled(t, c, chaos) })
	t.Run("FollowerPaused", func(t *testing.T) { csFollowerPaused(t, c, chaos) })
	t.Run("RollingRestart", func(t *testing.T) { csRollingRestart(t, c, chaos) })
	t.Run("FollowerThrottled", func(t *testing.T) { flThrottled(t, c, kafka.RackAffinityReplicaSelector{}) })
	t.Run("Group", func(t *testing.T) { csGroup(t, c) })
	t.Run("Conn", func(t *testing.T) { csConn(t, c) })
	rkFigure(t, "clientselect_runtime_s", "%s", rkSeconds(time.Since(start)))
}

// csChaos runs the cluster tool's kill/pause/resume/restart on one cluster.
type csChaos struct {
	tool string
	env  []string
}

// csCluster returns a cluster without a replica selector and its chaos.
func csCluster(t *testing.T) (*ktesting.Cluster, *csChaos) {
	c := requireRackCluster(t)
	if !c.HasSelector() {
		if c.Tool == "" {
			t.Skip("the chaos of these tests needs the cluster tool (KAFKA_CLUSTER_TOOL)")
		}
		ktesting.LockCluster(t) // brokers are taken away: this test alone
		return c, &csChaos{tool: c.Tool, env: os.Environ()}
	}
	if c.Tool == "" {
		t.Skip("the cluster has a replica selector, and without its tool (KAFKA_CLUSTER_TOOL) no selector-less one can be started")
	}
	base := secondClusterPortBase(t)
	dir := filepath.Join(os.TempDir(), "kafka-go-cluster-"+strconv.Itoa(base))
	tool := c.Tool
	c = ktesting.StartCluster(t, ktesting.ClusterOptions{Selector: "none", PortBase: base, StateDir: dir})
	if c.Tool != "" {
		tool = c.Tool
	}
	// The tool's later commands act on the cluster of KAFKA_STATE_DIR.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KAFKA_PORT_BASE=") && !strings.HasPrefix(kv, "KAFKA_STATE_DIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "KAFKA_PORT_BASE="+strconv.Itoa(base), "KAFKA_STATE_DIR="+dir)
	return c, &csChaos{tool: tool, env: env}
}

// run runs `tool cmd id`; a kill or pause registers the broker's start as
// a cleanup, so the next subtest finds every broker serving.
func (x *csChaos) run(t *testing.T, cmd string, id int) {
	t.Helper()
	if cmd == "kill" || cmd == "pause" {
		t.Cleanup(func() {
			if out, err := x.exec("start", id); err != nil {
				t.Errorf("bringing broker %d back: %v\n%s", id, err, out)
			}
		})
	}
	began := time.Now()
	out, err := x.exec(cmd, id)
	require.NoError(t, err, "%s broker %d: %s", cmd, id, out)
	t.Logf("%s broker %d (%.1fs): %s", cmd, id, time.Since(began).Seconds(), strings.TrimSpace(out))
}

func (x *csChaos) exec(cmd string, id int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	c := exec.CommandContext(ctx, x.tool, cmd, strconv.Itoa(id))
	c.Env = x.env
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if err != nil {
		err = fmt.Errorf("kafka-cluster %s %d: %w", cmd, id, err)
	}
	return out.String(), err
}

// csMoveLeader makes replicas partition p's replica list and elects its
// first as leader, then logs as figure how long until every partition
// delivered a message produced after the move.
func csMoveLeader(t *testing.T, h *rkHarness, p int, replicas []int, figure string) {
	t.Helper()
	ctx := testContext(t, 60*time.Second)
	admin := dialController(t, h.c)
	h.poll(30*time.Second, fmt.Sprintf("partition %d's replicas reordered", p), func() bool {
		return reorderReplicas(ctx, admin, h.topic, p, replicas) == nil
	})
	h.poll(30*time.Second, fmt.Sprintf("partition %d led by broker %d", p, replicas[0]), func() bool {
		electPreferredLeader(ctx, admin, h.topic, p)
		ps, err := partitionsOn(h.bootAddr, h.topic)
		return err == nil && len(ps) == rkPartitions && ps[p].Leader.ID == replicas[0]
	})
	movedAt := time.Now()
	rkFigure(t, figure, "%s", rkSeconds(h.deliveredPast(movedAt, 20*time.Second, "every partition returning messages produced after the leader move")))
}

func csOptions(o rkOptions) rkOptions {
	o.selector = kafka.RackAffinityReplicaSelector{}
	return o
}

// csReturn waits until every partition reads from the follower again, and
// fails the test when that took more than 5 s after it was back in every
// ISR.
func csReturn(t *testing.T, h *rkHarness, name string) {
	t.Helper()
	h.poll(120*time.Second, "the rack-b broker back in every ISR", func() bool { return h.inEveryISR(h.follower) })
	rejoinedAt := time.Now()
	h.poll(60*time.Second, "every partition reading from the rack-b broker again", func() bool { return h.mon.routedTo(h.follower) })
	back := time.Since(rejoinedAt)
	rkFigure(t, name+"_return_after_isr_rejoin_s", "%s", rkSeconds(back))
	assert.LessOrEqual(t, back, 5*time.Second, "every partition back on broker %d after it rejoined every ISR", h.follower)
}

// csFinish checks the whole log, the routing log lines and that the
// application saw no error.
func csFinish(t *testing.T, h *rkHarness, since time.Time, s0 [rkPartitions]rkPartStats) {
	t.Helper()
	h.finish()
	s1 := h.mon.snapshot()
	h.checkLogMatchesStats(since, time.Now(), s0, s1)
	t.Logf("routing changes: %v", rkReroutes(s0, s1))
	assert.Zero(t, h.appErrors(), "errors FetchMessage returned")
}

// Bytes stay in the rack from the first fetch on; a leader move does not
// take the partition off the follower.
func csSteadyState(t *testing.T, c *ktesting.Cluster) {
	steady := rkEnvDuration(t, "RACK_CLIENTSELECT_STEADY", 15*time.Second)
	h := newRKHarness(t, c, csOptions(rkOptions{backlog: 1000}))
	k0, s0 := h.sockets.snapshot(), h.mon.snapshot()
	toAll := h.poll(60*time.Second, "every partition reading from the rack-b broker", func() bool { return h.mon.routedTo(h.follower) })
	rkFigure(t, "clientselect_time_to_all_partitions_on_follower_s", "%s", rkSeconds(toAll))
	h.poll(60*time.Second, "the backlog read", func() bool {
		var want [rkPartitions]int64
		for p := range want {
			want[p] = 1000
		}
		return h.caughtUp(want)
	})
	h.hold(steady)
	k1, s1 := h.sockets.snapshot(), h.mon.snapshot()
	stats, sock := h.shares("clientselect", s0, s1, k0, k1)
	assert.GreaterOrEqual(t, stats, 0.99, "same-rack share per the stats")
	assert.GreaterOrEqual(t, sock, 0.99, "same-rack share at the sockets")
	for p, rr := range rkReroutes(s0, s1) {
		assert.Equal(t, map[string]int64{string(kafka.RerouteClientChoice): 1}, rr, "partition %d: one move, to the client's choice", p)
	}

	// Partition 1 (led in rack c) moves its leadership to rack a: the
	// follower still in the ISR keeps serving it.
	a, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "c")
	moveStart := time.Now()
	csMoveLeader(t, h, 1, []int{a, h.follower, cc}, "clientselect_leader_move_recovery_s")
	for _, ch := range h.info.changes(moveStart, time.Now()) {
		t.Errorf("routing change at the leader move: %+v", ch)
	}
	assert.True(t, h.mon.routedTo(h.follower), "every partition still on broker %d", h.follower)
	csFinish(t, h, h.start, s0)
}

// csTakeAway starts six rack-b Readers (cooldowns and TTL of 5 s), waits
// until they read from the rack-b broker, then takes it away with cmd (kill,
// pause) and waits until every partition reads elsewhere and delivers what
// was produced after. It returns the harness, the stats before, and when
// cmd was run.
func csTakeAway(t *testing.T, c *ktesting.Cluster, chaos *csChaos, cmd string) (*rkHarness, [rkPartitions]rkPartStats, time.Time) {
	t.Helper()
	h := newRKHarness(t, c, csOptions(rkOptions{backlog: 300, cooldown: 5 * time.Second, ttl: 5 * time.Second}))
	h.started(300)
	s0 := h.mon.snapshot()
	at := time.Now()
	chaos.run(t, cmd, h.follower)
	done := time.Now()
	h.poll(30*time.Second, "every partition away from the broker taken away", func() bool { return h.mon.routedAway(h.follower) })
	rkFigure(t, "clientselect_"+cmd+"_route_away_s", "%s", rkSeconds(time.Since(at)))
	rkFigure(t, "clientselect_"+cmd+"_recovery_s", "%s", rkSeconds(h.deliveredPast(done, 20*time.Second, "every partition returning messages produced after "+cmd)))
	return h, s0, at
}

// Kill -9 of the rack-b broker: reads go to the leaders, nothing is lost;
// after its restart reads return to it.
func csFollowerKilled(t *testing.T, c *ktesting.Cluster, chaos *csChaos) {
	const cooldown = 5 * time.Second
	h, s0, killAt := csTakeAway(t, c, chaos, "kill")
	h.poll(30*time.Second, "the killed broker out of every ISR", func() bool { return h.outOfISR(h.follower) })
	k0 := h.sockets.snapshot()
	h.hold(time.Until(killAt.Add(4 * cooldown)))
	fromB, total := rkShare(k0, h.sockets.snapshot(), c.Addr(h.follower))
	assert.Zero(t, fromB, "bytes read from the dead broker")
	assert.NotZero(t, total, "bytes read from the leaders meanwhile")
	tries := 0
	for _, ch := range h.info.changes(killAt, time.Now()) {
		if ch.to == h.follower {
			tries++
		}
	}
	rkFigure(t, "clientselect_kill_leases_of_dead_broker", "%d", tries)
	assert.LessOrEqual(t, tries, 2*rkPartitions, "moves to the dead broker: cooldowns must grow")

	chaos.run(t, "restart", h.follower)
	csReturn(t, h, "clientselect_kill")
	csFinish(t, h, killAt, s0)
}

// SIGSTOP of the rack-b broker for 30 s, partition 0's leadership moved
// from rack a to rack c meanwhile, then SIGCONT.
func csFollowerPaused(t *testing.T, c *ktesting.Cluster, chaos *csChaos) {
	const pause = 30 * time.Second
	a, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "c")
	h, s0, pausedAt := csTakeAway(t, c, chaos, "pause")

	csMoveLeader(t, h, 0, []int{cc, h.follower, a}, "clientselect_pause_leader_move_recovery_s")
	h.poll(30*time.Second, "partition 0 read from its new leader", func() bool {
		s := h.mon.snapshot()
		return s[0].broker == cc
	})
	h.poll(pause, "the paused broker out of every ISR", func() bool { return h.outOfISR(h.follower) })
	h.hold(time.Until(pausedAt.Add(pause)))
	chaos.run(t, "resume", h.follower)
	csReturn(t, h, "clientselect_pause")
	csFinish(t, h, pausedAt, s0)
}

// A rolling restart, rack a's broker first, then rack b's (the one read),
// then rack c's, each back in every ISR before the next: nothing lost, and
// reads back on rack b within 5 s of it rejoining.
func csRollingRestart(t *testing.T, c *ktesting.Cluster, chaos *csChaos) {
	h := newRKHarness(t, c, csOptions(rkOptions{backlog: 300, cooldown: 5 * time.Second, ttl: 5 * time.Second}))
	h.started(300)
	s0 := h.mon.snapshot()
	at := time.Now()
	for _, rack := range []string{"a", "b", "c"} {
		id := brokerInRack(t, c, rack)
		began := time.Now()
		chaos.run(t, "restart", id)
		if id == h.follower {
			csReturn(t, h, "clientselect_roll")
		} else {
			h.poll(120*time.Second, fmt.Sprintf("broker %d back in every ISR", id), func() bool { return h.inEveryISR(id) })
		}
		rkFigure(t, "clientselect_roll_"+rack+"_recovery_s", "%s", rkSeconds(h.deliveredPast(began, 20*time.Second, "every partition returning messages produced after the restart of rack "+rack)))
	}
	csFinish(t, h, at, s0)
}

// Three group Readers in racks a, b and c, each with the rack-affinity
// balancer and the client selector, over rkPartitions partitions replicated in every
// rack: a third of the partitions each, every byte read in the member's own rack.
func csGroup(t *testing.T, c *ktesting.Cluster) {
	const n = 1000 // messages per partition: the group protocol's own bytes (to the coordinator) stay under 1 %
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	racks := map[string]int{"a": a, "b": b, "c": cc}
	orders := [][]int{{a, b, cc}, {b, cc, a}, {cc, a, b}}
	var assign []kafka.ReplicaAssignment
	for p := 0; p < rkPartitions; p++ {
		assign = append(assign, kafka.ReplicaAssignment{Partition: p, Replicas: orders[p%3]})
	}
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: assign})
	for p := 0; p < rkPartitions; p++ {
		conn := dialLeader(t, newDialer(), c.Addr(a), topic, p)
		for i := 0; i < n; i += 200 { // batches under the broker's message.max.bytes
			msgs := make([]kafka.Message, 200)
			for j := range msgs {
				msgs[j] = kafka.Message{Value: rkValue(p, i+j)}
			}
			eventually(t, 30*time.Second, fmt.Sprintf("partition %d written", p), func() bool {
				_, err := conn.WriteMessages(msgs...)
				return err == nil
			})
		}
	}

	group := "clientselect-" + topic
	type member struct {
		rack    string
		sockets *rkSockets
		r       *kafka.Reader
		mu      sync.Mutex
		next    map[int]int64 // partition → next offset expected
		errs    []error
		same    int64
		other   int64
		parts   map[int]string // partition → rack read from, as last seen
		badSeq  []string
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var members []*member
	for _, rack := range []string{"a", "b", "c"} {
		m := &member{rack: rack, sockets: newRKSockets(), next: map[int]int64{}, parts: map[int]string{}}
		m.r = kafka.NewReader(kafka.ReaderConfig{
			Brokers:         c.Brokers,
			GroupID:         group,
			Topic:           topic,
			Rack:            rack,
			GroupBalancers:  []kafka.GroupBalancer{kafka.RackAffinityGroupBalancer{Rack: rack}},
			ReplicaSelector: kafka.RackAffinityReplicaSelector{},
			Dialer:          &kafka.Dialer{ClientID: "clientselect-" + rack, Timeout: 5 * time.Second, DialFunc: m.sockets.dial},
			MaxWait:         500 * time.Millisecond,
			ReadLagInterval: -1,
		})
		t.Cleanup(func() { m.r.Close() })
		members = append(members, m)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				msg, err := m.r.FetchMessage(ctx)
				if ctx.Err() != nil {
					return
				}
				m.mu.Lock()
				if err != nil {
					m.errs = append(m.errs, err)
				} else {
					// A partition may start anywhere (a rebalance hands
					// it over uncommitted), then goes on without gaps.
					if want, ok := m.next[msg.Partition]; ok && msg.Offset != want {
						m.badSeq = append(m.badSeq, fmt.Sprintf("partition %d: offset %d after %d", msg.Partition, msg.Offset, want-1))
					}
					m.next[msg.Partition] = msg.Offset + 1
				}
				m.mu.Unlock()
			}
		}()
	}
	poll := func() {
		for _, m := range members {
			st := m.r.Stats()
			m.mu.Lock()
			for _, pr := range st.Routing {
				m.same += pr.SameRackBytes
				m.other += pr.CrossRackBytes
				if pr.Broker >= 0 {
					m.parts[pr.Partition] = pr.BrokerRack
				} else {
					delete(m.parts, pr.Partition)
				}
			}
			m.mu.Unlock()
		}
	}
	eventually(t, 90*time.Second, "each member reading a third of the partitions to their end", func() bool {
		poll()
		seen := map[int]bool{}
		for _, m := range members {
			m.mu.Lock()
			ok := len(m.parts) == rkPartitions/3
			for p := range m.parts {
				seen[p] = true
				ok = ok && m.next[p] == n
			}
			m.mu.Unlock()
			if !ok {
				return false
			}
		}
		return len(seen) == rkPartitions
	})
	poll()
	for _, m := range members {
		m.mu.Lock()
		t.Logf("member in rack %s: partitions %v, %d same-rack / %d other-rack bytes, sockets %v", m.rack, m.parts, m.same, m.other, m.sockets.snapshot())
		for p, rack := range m.parts {
			assert.Equal(t, m.rack, rack, "member in rack %s reads partition %d from rack %s", m.rack, p, rack)
		}
		assert.Zero(t, m.other, "member in rack %s: other-rack bytes", m.rack)
		assert.NotZero(t, m.same, "member in rack %s: same-rack bytes", m.rack)
		fromOwn, total := rkShare(nil, m.sockets.snapshot(), c.Addr(racks[m.rack]))
		if total > 0 {
			rkFigure(t, "clientselect_group_"+m.rack+"_same_rack_share_socket", "%.5f", float64(fromOwn)/float64(total))
			assert.GreaterOrEqual(t, float64(fromOwn)/float64(total), 0.99, "member in rack %s: socket bytes from its broker", m.rack)
		}
		assert.Empty(t, m.errs, "member in rack %s: errors FetchMessage returned", m.rack)
		assert.Empty(t, m.badSeq, "member in rack %s: gaps or repeats", m.rack)
		m.mu.Unlock()
	}
}

// A Conn reads the partition from the follower ReplicaToRead names: the
// selector-less broker serves a fetch carrying the client's rack from a
// replica it does not lead.
func csConn(t *testing.T, c *ktesting.Cluster) {
	const n = 100
	a, b, cc := brokerInRack(t, c, "a"), brokerInRack(t, c, "b"), brokerInRack(t, c, "c")
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{a, b, cc}}}})
	leader := dialLeader(t, newDialer(), c.Addr(a), topic, 0)
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		msgs[i] = kafka.Message{Value: rkValue(0, i)}
	}
	eventually(t, 30*time.Second, "the messages written", func() bool {
		_, err := leader.WriteMessages(msgs...)
		return err == nil
	})
	// Offsets are resolved at the leader; the follower is read at them.
	first, last, err := leader.ReadOffsets()
	require.NoError(t, err)
	require.Equal(t, int64(n), last-first)
	var p kafka.Partition
	eventually(t, 30*time.Second, "the follower in the ISR", func() bool {
		ps, err := partitionsOn(c.Addr(a), topic)
		if err != nil || len(ps) != 1 || !hasBroker(ps[0].Isr, b) {
			return false
		}
		p = ps[0]
		return true
	})
	to := kafka.ReplicaToRead(kafka.RackAffinityReplicaSelector{}, "b", p)
	require.Equal(t, b, to.ID, "the rack-b replica")
	p.Leader = to // DialPartition dials the Leader field's address
	conn, err := (&kafka.Dialer{ClientID: "clientselect-conn", Timeout: 5 * time.Second, RackID: "b"}).DialPartition(testContext(t, 30*time.Second), "tcp", "", p)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = conn.Seek(first, kafka.SeekAbsolute|kafka.SeekDontCheck)
	require.NoError(t, err)
	var got int
	eventually(t, 30*time.Second, "the log read from the follower", func() bool {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		batch := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 500 * time.Millisecond})
		for {
			m, err := batch.ReadMessage()
			if err != nil {
				break
			}
			require.Equal(t, first+int64(got), m.Offset)
			require.Equal(t, rkValue(0, got), m.Value)
			got++
		}
		require.NoError(t, batch.Close(), "fetching from follower %d", b)
		require.Equal(t, -1, batch.PreferredReadReplica(), "a broker without a selector names no replica")
		return got == n
	})
}
