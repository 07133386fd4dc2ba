package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/require"
)

// Tests of ConsumerGroup against the fake broker's group coordinator. The
// fake answers at once, so the intervals are short; waits poll with a
// deadline (cgEventually) or block on the fake's counters (Await).

const cgTopic = "cg-topic"

// cgFake starts a fake cluster holding cgTopic with n partitions.
func cgFake(t *testing.T, brokers, partitions int) *fakebroker.Cluster {
	t.Helper()
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: brokers})
	c.CreateTopic(cgTopic, partitions, 1)
	return c
}

// cgConfig is a group config for the fake: fast heartbeats and backoff.
func cgConfig(c *fakebroker.Cluster, group string) ConsumerGroupConfig {
	return ConsumerGroupConfig{
		ID:                group,
		Brokers:           c.Addrs(),
		Topics:            []string{cgTopic},
		HeartbeatInterval: 20 * time.Millisecond,
		JoinGroupBackoff:  100 * time.Millisecond,
		RebalanceTimeout:  2 * time.Second,
		SessionTimeout:    6 * time.Second,
		Timeout:           2 * time.Second,
	}
}

func cgNew(t *testing.T, cfg ConsumerGroupConfig) *ConsumerGroup {
	t.Helper()
	cg, err := NewConsumerGroup(cfg)
	if err != nil {
		t.Fatalf("NewConsumerGroup: %v", err)
	}
	t.Cleanup(func() { cg.Close() })
	return cg
}

// cgNext returns the next generation, skipping setup errors, or fails the
// test after d.
func cgNext(t *testing.T, cg *ConsumerGroup, d time.Duration) *Generation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		gen, err := cg.Next(ctx)
		if err == nil {
			return gen
		}
		if ctx.Err() != nil || errors.Is(err, ErrGroupClosed) {
			t.Fatalf("Next: %v", err)
		}
	}
}

func cgEventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func cgWait(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
}

// cgPartitions lists the partition ids of a generation's topic.
func cgPartitions(gen *Generation, topic string) []int {
	var ids []int
	for _, pa := range gen.Assignments[topic] {
		ids = append(ids, pa.ID)
	}
	sort.Ints(ids)
	return ids
}

// cgMember runs a consumer loop: every generation is recorded and kept
// busy by a function that waits for its end, until the group closes.
type cgMember struct {
	cg   *ConsumerGroup
	mu   sync.Mutex
	gens []*Generation
	errs []error
	done chan struct{}
}

func cgRun(t *testing.T, cg *ConsumerGroup, onGen func(*Generation)) *cgMember {
	m := &cgMember{cg: cg, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			gen, err := cg.Next(context.Background())
			if errors.Is(err, ErrGroupClosed) {
				return
			}
			m.mu.Lock()
			if err != nil {
				m.errs = append(m.errs, err)
			} else {
				m.gens = append(m.gens, gen)
			}
			m.mu.Unlock()
			if err != nil {
				continue
			}
			if onGen != nil {
				onGen(gen)
			} else {
				gen.Start(func(ctx context.Context) { <-ctx.Done() })
			}
		}
	}()
	t.Cleanup(func() {
		cg.Close()
		<-m.done
	})
	return m
}

func (m *cgMember) latest() *Generation {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.gens) == 0 {
		return nil
	}
	return m.gens[len(m.gens)-1]
}

func (m *cgMember) count() (gens, errs int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.gens), len(m.errs)
}

func (m *cgMember) errors() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]error(nil), m.errs...)
}

// cgJoinTimes records when the coordinator received each join round: a
// JoinGroup without member id and the rejoin with the id it was given
// (MemberIDRequired) are one round.
type cgJoinTimes struct {
	mu     sync.Mutex
	times  []time.Time
	prevID bool // the previous JoinGroup carried a member id
}

func cgRecordJoins(b *fakebroker.Broker) *cgJoinTimes {
	jt := &cgJoinTimes{prevID: true}
	b.Handle(protocol.JoinGroup, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		hasID := req.(*protocol.JoinGroupRequest).MemberID != ""
		jt.mu.Lock()
		if !hasID || jt.prevID {
			jt.times = append(jt.times, time.Now())
		}
		jt.prevID = hasID
		jt.mu.Unlock()
		return b.Default(req, hdr), fakebroker.Action{}
	})
	return jt
}

func (jt *cgJoinTimes) get() []time.Time {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	return append([]time.Time(nil), jt.times...)
}

// checkPaced fails unless consecutive join rounds are about min apart. The
// member paces the starts of its rounds, but the broker sees a round when
// its JoinGroup arrives, after any coordinator lookup and dial: a round
// that had to look the coordinator up (the first) arrives later into its
// window than the next, so a gap may fall short of min by that lookup (CI
// saw 143.7ms for 150ms). A quarter of min covers it and still catches a
// hot loop, whose rounds come milliseconds apart.
func (jt *cgJoinTimes) checkPaced(t *testing.T, min time.Duration) {
	t.Helper()
	ts := jt.get()
	for i := 1; i < len(ts); i++ {
		if gap := ts[i].Sub(ts[i-1]); gap < min-min/4 {
			t.Errorf("join rounds %d and %d only %v apart, want about %v (at least %v)", i, i+1, gap, min, min-min/4)
		}
	}
}

func TestConsumerGroupConfigValidate(t *testing.T) {
	cfg := ConsumerGroupConfig{ID: "g", Brokers: []string{"b:9092"}, Topics: []string{"t"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	want := ConsumerGroupConfig{
		HeartbeatInterval:      3 * time.Second,
		SessionTimeout:         30 * time.Second,
		RebalanceTimeout:       30 * time.Second,
		JoinGroupBackoff:       5 * time.Second,
		PartitionWatchInterval: 5 * time.Second,
		RetentionTime:          -1 * time.Millisecond,
		StartOffset:            FirstOffset,
		Timeout:                5 * time.Second,
	}
	got := []time.Duration{cfg.HeartbeatInterval, cfg.SessionTimeout, cfg.RebalanceTimeout, cfg.JoinGroupBackoff, cfg.PartitionWatchInterval, cfg.RetentionTime, cfg.Timeout}
	exp := []time.Duration{want.HeartbeatInterval, want.SessionTimeout, want.RebalanceTimeout, want.JoinGroupBackoff, want.PartitionWatchInterval, want.RetentionTime, want.Timeout}
	for i := range got {
		if got[i] != exp[i] {
			t.Errorf("default %d: got %v, want %v", i, got[i], exp[i])
		}
	}
	if cfg.StartOffset != FirstOffset || cfg.Dialer != DefaultDialer {
		t.Errorf("StartOffset %d, Dialer %p: want FirstOffset and DefaultDialer", cfg.StartOffset, cfg.Dialer)
	}
	if len(cfg.GroupBalancers) != 2 || cfg.GroupBalancers[0].ProtocolName() != "range" || cfg.GroupBalancers[1].ProtocolName() != "roundrobin" {
		t.Errorf("GroupBalancers: %v", cfg.GroupBalancers)
	}

	bad := []func(*ConsumerGroupConfig){
		func(c *ConsumerGroupConfig) { c.ID = "" },
		func(c *ConsumerGroupConfig) { c.Brokers = nil },
		func(c *ConsumerGroupConfig) { c.Topics = nil },
		func(c *ConsumerGroupConfig) { c.StartOffset = 42 },
		func(c *ConsumerGroupConfig) { c.RetentionTime = -2 * time.Millisecond },
		func(c *ConsumerGroupConfig) { c.HeartbeatInterval = -time.Second },
		func(c *ConsumerGroupConfig) { c.SessionTimeout = 1 << 62 },
		func(c *ConsumerGroupConfig) { c.Timeout = -1 },
	}
	for i, f := range bad {
		c := ConsumerGroupConfig{ID: "g", Brokers: []string{"b:9092"}, Topics: []string{"t"}}
		f(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("bad config %d accepted", i)
		}
	}
	c := ConsumerGroupConfig{ID: "g", Brokers: []string{"b:9092"}, Topics: []string{"t"}, StartOffset: LastOffset, RetentionTime: time.Hour}
	if err := c.Validate(); err != nil || c.StartOffset != LastOffset || c.RetentionTime != time.Hour {
		t.Errorf("LastOffset/RetentionTime config: %v %+v", err, c)
	}
}

func TestConsumerGroupJoinsWithMemberIDAndHeartbeats(t *testing.T) {
	c := cgFake(t, 1, 4)
	b := c.Broker(1)
	cg := cgNew(t, cgConfig(c, "g-join"))
	gen := cgNext(t, cg, 5*time.Second)

	if gen.ID < 1 || gen.GroupID != "g-join" || gen.MemberID == "" {
		t.Fatalf("generation %d group %q member %q", gen.ID, gen.GroupID, gen.MemberID)
	}
	if got := cgPartitions(gen, cgTopic); fmt.Sprint(got) != "[0 1 2 3]" {
		t.Errorf("assigned %v, want all 4 partitions", got)
	}
	for _, pa := range gen.Assignments[cgTopic] {
		if pa.Offset != FirstOffset {
			t.Errorf("partition %d starts at %d, want FirstOffset", pa.ID, pa.Offset)
		}
	}

	fc := b.Received(protocol.FindCoordinator)
	if len(fc) == 0 {
		t.Fatal("no FindCoordinator")
	}
	req := fc[0].Request.(*protocol.FindCoordinatorRequest)
	if req.KeyType != 0 || (req.CoordinatorKey != "g-join" && (len(req.CoordinatorKeys) != 1 || req.CoordinatorKeys[0] != "g-join")) {
		t.Errorf("FindCoordinator %+v", req)
	}

	joins := b.Received(protocol.JoinGroup)
	if len(joins) != 2 {
		t.Fatalf("%d JoinGroup requests, want 2 (MemberIDRequired, then with the id)", len(joins))
	}
	j0, j1 := joins[0].Request.(*protocol.JoinGroupRequest), joins[1].Request.(*protocol.JoinGroupRequest)
	if j0.MemberID != "" || j1.MemberID != gen.MemberID {
		t.Errorf("JoinGroup member ids %q then %q, want \"\" then %q", j0.MemberID, j1.MemberID, gen.MemberID)
	}
	if j1.ProtocolType != "consumer" || j1.SessionTimeoutMs != 6000 || j1.RebalanceTimeoutMs != 2000 || len(j1.Protocols) != 2 ||
		j1.Protocols[0].Name != "range" || j1.Protocols[1].Name != "roundrobin" {
		t.Errorf("JoinGroup %+v", j1)
	}
	var sub protocol.ConsumerProtocolSubscription
	if err := sub.Decode(j1.Protocols[0].Metadata); err != nil || fmt.Sprint(sub.Topics) != "["+cgTopic+"]" {
		t.Errorf("subscription %+v: %v", sub, err)
	}

	syncs := b.Received(protocol.SyncGroup)
	if len(syncs) != 1 {
		t.Fatalf("%d SyncGroup requests", len(syncs))
	}
	sreq := syncs[0].Request.(*protocol.SyncGroupRequest)
	if sreq.GenerationID != gen.ID || sreq.MemberID != gen.MemberID || len(sreq.Assignments) != 1 || sreq.Assignments[0].MemberID != gen.MemberID {
		t.Errorf("SyncGroup %+v", sreq)
	}

	// Heartbeats carry the generation, at the configured pace.
	start := time.Now()
	n := b.Requests(protocol.Heartbeat)
	cgWait(t, b.Await(protocol.Heartbeat, n+3), 5*time.Second, "3 heartbeats")
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("3 heartbeats in %v with a 20ms interval", d)
	}
	hbs := b.Received(protocol.Heartbeat)
	hb := hbs[len(hbs)-1].Request.(*protocol.HeartbeatRequest)
	if hb.GenerationID != gen.ID || hb.MemberID != gen.MemberID || hb.GroupID != "g-join" {
		t.Errorf("heartbeat %+v", hb)
	}
}

func TestConsumerGroupCommittedOffsetsAndCommit(t *testing.T) {
	c := cgFake(t, 1, 3)
	b := c.Broker(1)
	c.Commit("g-commit", cgTopic, 1, 42)
	cfg := cgConfig(c, "g-commit")
	cfg.RetentionTime = 90 * time.Minute
	cg := cgNew(t, cfg)
	gen := cgNext(t, cg, 5*time.Second)

	want := []PartitionAssignment{{0, FirstOffset}, {1, 42}, {2, FirstOffset}}
	if fmt.Sprint(gen.Assignments[cgTopic]) != fmt.Sprint(want) {
		t.Errorf("assignments %v, want %v", gen.Assignments[cgTopic], want)
	}

	if err := gen.CommitOffsets(map[string]map[int]int64{cgTopic: {0: 7, 2: 9}}); err != nil {
		t.Fatalf("CommitOffsets: %v", err)
	}
	if o, ok := c.Committed("g-commit", cgTopic, 0); !ok || o != 7 {
		t.Errorf("committed %d %v, want 7", o, ok)
	}
	rs := b.Received(protocol.OffsetCommit)
	last := rs[len(rs)-1]
	creq := last.Request.(*protocol.OffsetCommitRequest)
	if creq.GenerationID != gen.ID || creq.MemberID != gen.MemberID || creq.GroupInstanceID != nil {
		t.Errorf("OffsetCommit generation %d member %q instance %v", creq.GenerationID, creq.MemberID, creq.GroupInstanceID)
	}
	if last.Header.Version > 4 || creq.RetentionTimeMs != 90*60*1000 {
		t.Errorf("OffsetCommit v%d retention %d: want v<=4 carrying 5400000", last.Header.Version, creq.RetentionTimeMs)
	}

	// The Reader's hook reads them back.
	got, err := gen.committedOffsets(context.Background(), map[string][]int{cgTopic: {0, 1, 2}})
	if err != nil || got[cgTopic][0] != 7 || got[cgTopic][1] != 42 || got[cgTopic][2] != 9 {
		t.Errorf("committedOffsets %v %v", got, err)
	}

	// Per-partition errors come back as kafka.Error.
	err = gen.CommitOffsets(map[string]map[int]int64{cgTopic: {0: 8, 99: 1}})
	var kerr Error
	if !errors.As(err, &kerr) || kerr != UnknownTopicOrPartition {
		t.Errorf("commit of an unknown partition: %v", err)
	}
	b.ScriptNext(protocol.OffsetCommit, fakebroker.Step{Edit: func(r protocol.Response) {
		ps := r.(*protocol.OffsetCommitResponse).Topics[0].Partitions
		ps[0].ErrorCode, ps[1].ErrorCode = int16(OffsetMetadataTooLarge), int16(InvalidCommitOffsetSize)
	}})
	err = gen.CommitOffsets(map[string]map[int]int64{cgTopic: {0: 8, 1: 8}})
	if !errors.Is(err, OffsetMetadataTooLarge) || !errors.Is(err, InvalidCommitOffsetSize) {
		t.Errorf("two partition errors: %v", err)
	}
}

func TestConsumerGroupDefaultRetentionUsesLatestVersion(t *testing.T) {
	c := cgFake(t, 1, 1)
	b := c.Broker(1)
	cg := cgNew(t, cgConfig(c, "g-retention"))
	gen := cgNext(t, cg, 5*time.Second)
	if err := gen.CommitOffsets(map[string]map[int]int64{cgTopic: {0: 1}}); err != nil {
		t.Fatal(err)
	}
	rs := b.Received(protocol.OffsetCommit)
	if v := rs[len(rs)-1].Header.Version; v != (&protocol.OffsetCommitRequest{}).MaxVersion() {
		t.Errorf("OffsetCommit v%d without RetentionTime, want the latest", v)
	}
}

func TestConsumerGroupRebalanceEndsGeneration(t *testing.T) {
	c := cgFake(t, 1, 2)
	b := c.Broker(1)
	joins := cgRecordJoins(b)
	b.Script(protocol.Heartbeat, 2, fakebroker.Step{ErrorCode: int16(RebalanceInProgress)})
	cfg := cgConfig(c, "g-rebalance")
	cfg.JoinGroupBackoff = 200 * time.Millisecond
	cg := cgNew(t, cfg)

	gen1 := cgNext(t, cg, 5*time.Second)
	errc := make(chan error, 1)
	gen1.Start(func(ctx context.Context) {
		<-ctx.Done()
		errc <- ctx.Err()
	})
	select {
	case err := <-errc:
		if err != ErrGenerationEnded {
			t.Errorf("ctx.Err() = %v, want ErrGenerationEnded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("generation did not end after RebalanceInProgress")
	}
	gen2 := cgNext(t, cg, 5*time.Second)
	if gen2.ID <= gen1.ID || gen2.MemberID != gen1.MemberID {
		t.Errorf("generation %d member %s after %d member %s", gen2.ID, gen2.MemberID, gen1.ID, gen1.MemberID)
	}
	if err := gen1.CommitOffsets(map[string]map[int]int64{cgTopic: {0: 1}}); err != ErrGenerationEnded {
		t.Errorf("CommitOffsets on the ended generation: %v", err)
	}
	if n := len(joins.get()); n != 2 {
		t.Errorf("%d join rounds, want 2", n)
	}
	joins.checkPaced(t, cfg.JoinGroupBackoff)
}

// A coordinator that answers RebalanceInProgress to every heartbeat must not
// make the member loop: join rounds are paced by JoinGroupBackoff.
func TestConsumerGroupNoHotLoopOnRebalanceInProgress(t *testing.T) {
	c := cgFake(t, 1, 2)
	b := c.Broker(1)
	joins := cgRecordJoins(b)
	b.Handle(protocol.Heartbeat, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.HeartbeatResponse{ErrorCode: int16(RebalanceInProgress)}, fakebroker.Action{}
	})
	cfg := cgConfig(c, "g-hot-heartbeat")
	cfg.HeartbeatInterval = 5 * time.Millisecond
	cfg.JoinGroupBackoff = 150 * time.Millisecond
	cg := cgNew(t, cfg)
	m := cgRun(t, cg, nil)

	start := time.Now()
	cgEventually(t, 5*time.Second, "4 generations", func() bool { g, _ := m.count(); return g >= 4 })
	elapsed := time.Since(start)
	rounds := len(joins.get())
	if max := int(elapsed/cfg.JoinGroupBackoff) + 2; rounds > max {
		t.Errorf("%d join rounds in %v, want at most %d", rounds, elapsed, max)
	}
	joins.checkPaced(t, cfg.JoinGroupBackoff)
	if hb := b.Requests(protocol.Heartbeat); hb > rounds+2 {
		t.Errorf("%d heartbeats for %d generations", hb, rounds)
	}
}

// SyncGroup failing with RebalanceInProgress every time: errors reach Next,
// and the retries are paced.
func TestConsumerGroupNoHotLoopOnSyncErrors(t *testing.T) {
	c := cgFake(t, 1, 2)
	b := c.Broker(1)
	joins := cgRecordJoins(b)
	b.Handle(protocol.SyncGroup, func(protocol.Request, protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return &protocol.SyncGroupResponse{ErrorCode: int16(RebalanceInProgress)}, fakebroker.Action{}
	})
	cfg := cgConfig(c, "g-hot-sync")
	cfg.JoinGroupBackoff = 150 * time.Millisecond
	cg := cgNew(t, cfg)
	m := cgRun(t, cg, nil)

	start := time.Now()
	cgEventually(t, 5*time.Second, "3 errors", func() bool { _, e := m.count(); return e >= 3 })
	elapsed := time.Since(start)
	for _, err := range m.errors() {
		if !errors.Is(err, RebalanceInProgress) {
			t.Errorf("Next error %v, want RebalanceInProgress", err)
		}
	}
	if syncs, max := b.Requests(protocol.SyncGroup), int(elapsed/cfg.JoinGroupBackoff)+2; syncs > max {
		t.Errorf("%d SyncGroup in %v, want at most %d", syncs, elapsed, max)
	}
	joins.checkPaced(t, cfg.JoinGroupBackoff)
}

// A caller whose function returns at once ends every generation at once:
// still paced.
func TestConsumerGroupNoHotLoopOnShortGenerations(t *testing.T) {
	c := cgFake(t, 1, 2)
	joins := cgRecordJoins(c.Broker(1))
	cfg := cgConfig(c, "g-hot-fn")
	cfg.JoinGroupBackoff = 150 * time.Millisecond
	cg := cgNew(t, cfg)
	m := cgRun(t, cg, func(gen *Generation) { gen.Start(func(context.Context) {}) })
	cgEventually(t, 5*time.Second, "4 generations", func() bool { g, _ := m.count(); return g >= 4 })
	joins.checkPaced(t, cfg.JoinGroupBackoff)
}

// A heartbeat answered with a coordinator error (or whose connection
// dropped) says nothing about the member: the coordinator is looked up
// again and heartbeats go on in the same generation.
func TestConsumerGroupCoordinatorErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		step fakebroker.Step
	}{
		{"NotCoordinator", fakebroker.Step{ErrorCode: int16(NotCoordinatorForGroup)}},
		{"CoordinatorNotAvailable", fakebroker.Step{ErrorCode: int16(GroupCoordinatorNotAvailable)}},
		{"LoadInProgress", fakebroker.Step{ErrorCode: int16(GroupLoadInProgress)}},
		{"Disconnect", fakebroker.Step{Action: fakebroker.Action{Close: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cgFake(t, 2, 2)
			coord := c.Broker(1)
			coord.Script(protocol.Heartbeat, 2, tc.step)
			cg := cgNew(t, cgConfig(c, "g-coord-"+tc.name))
			m := cgRun(t, cg, nil)
			cgWait(t, coord.Await(protocol.Heartbeat, 6), 5*time.Second, "heartbeats after the failed one")
			gens, _ := m.count()
			require.Equal(t, 1, gens, "generations")
			require.Nil(t, m.latest().endReason())
			select {
			case <-m.latest().ended():
				t.Fatal("the generation ended")
			default:
			}
			if tc.name != "LoadInProgress" {
				finds := c.Broker(1).Requests(protocol.FindCoordinator) + c.Broker(2).Requests(protocol.FindCoordinator)
				require.GreaterOrEqual(t, finds, 2, "FindCoordinator not sent again after %s", tc.name)
			}
		})
	}
}

// A coordinator not available yet (a new group, __consumer_offsets loading)
// is retried within the join attempt.
func TestConsumerGroupFindCoordinatorRetries(t *testing.T) {
	c := cgFake(t, 1, 1)
	b := c.Broker(1)
	b.Script(protocol.FindCoordinator, 1, fakebroker.Step{ErrorCode: int16(GroupCoordinatorNotAvailable)})
	b.Script(protocol.FindCoordinator, 2, fakebroker.Step{ErrorCode: int16(GroupCoordinatorNotAvailable)})
	cg := cgNew(t, cgConfig(c, "g-find"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cg.Next(ctx); err != nil {
		t.Fatalf("Next: %v", err)
	}
	if n := b.Requests(protocol.FindCoordinator); n != 3 {
		t.Errorf("%d FindCoordinator requests, want 3", n)
	}
}

func TestConsumerGroupUnknownMemberRejoinsAsNew(t *testing.T) {
	c := cgFake(t, 1, 2)
	b := c.Broker(1)
	b.Script(protocol.Heartbeat, 2, fakebroker.Step{ErrorCode: int16(UnknownMemberId)})
	cfg := cgConfig(c, "g-unknown")
	cfg.RebalanceTimeout = 300 * time.Millisecond // the fake drops the old id when the rebalance times out
	cg := cgNew(t, cfg)
	gen1 := cgNext(t, cg, 5*time.Second)
	gen2 := cgNext(t, cg, 5*time.Second)
	if gen2.MemberID == gen1.MemberID {
		t.Errorf("member id %s kept after UnknownMemberId", gen2.MemberID)
	}
	if got := cgPartitions(gen2, cgTopic); len(got) != 2 {
		t.Errorf("new member got %v", got)
	}
}

func TestConsumerGroupMembersShareThePartitions(t *testing.T) {
	c := cgFake(t, 1, 6)
	var members []*cgMember
	for i := 0; i < 3; i++ {
		members = append(members, cgRun(t, cgNew(t, cgConfig(c, "g-share")), nil))
	}
	cgEventually(t, 10*time.Second, "3 members covering 6 partitions", func() bool {
		seen := map[int]int{}
		var id int32 = -1
		for _, m := range members {
			g := m.latest()
			if g == nil || (id >= 0 && g.ID != id) {
				return false
			}
			id = g.ID
			for _, p := range cgPartitions(g, cgTopic) {
				seen[p]++
			}
		}
		for p := 0; p < 6; p++ {
			if seen[p] != 1 {
				return false
			}
		}
		return len(seen) == 6
	})
	for _, m := range members {
		if got := cgPartitions(m.latest(), cgTopic); len(got) != 2 {
			t.Errorf("member %s has %v, want 2 partitions", m.latest().MemberID, got)
		}
	}

	// One leaves: the other two take everything.
	members[2].cg.Close()
	cgEventually(t, 10*time.Second, "2 members covering 6 partitions", func() bool {
		a, b := members[0].latest(), members[1].latest()
		if a.ID != b.ID {
			return false
		}
		all := append(cgPartitions(a, cgTopic), cgPartitions(b, cgTopic)...)
		sort.Ints(all)
		return fmt.Sprint(all) == "[0 1 2 3 4 5]"
	})
}

// The functions of a generation all return before the next generation is
// joined, so no member ever consumes partitions it no longer owns.
func TestConsumerGroupWaitsForFunctionsBeforeRejoining(t *testing.T) {
	c := cgFake(t, 1, 2)
	b := c.Broker(1)
	var seq atomic.Int64
	var lastJoin atomic.Int64
	b.Handle(protocol.JoinGroup, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		lastJoin.Store(seq.Add(1))
		return b.Default(req, hdr), fakebroker.Action{}
	})
	b.Script(protocol.Heartbeat, 2, fakebroker.Step{ErrorCode: int16(RebalanceInProgress)})
	cfg := cgConfig(c, "g-wait")
	cfg.JoinGroupBackoff = 10 * time.Millisecond
	cg := cgNew(t, cfg)
	gen1 := cgNext(t, cg, 5*time.Second)

	var exited [3]atomic.Int64
	// Function i commits after function i-1 has (a chain of channels, so
	// the last commit is known), each lingering well past the backoff as a
	// slow final commit would.
	var turn [len(exited) + 1]chan struct{}
	for i := range turn {
		turn[i] = make(chan struct{})
	}
	close(turn[0])
	hold := 150 * time.Millisecond
	for i := range exited {
		i := i
		gen1.Start(func(ctx context.Context) {
			<-ctx.Done()
			time.Sleep(hold) // lingering, not synchronization: the channels order the commits
			<-turn[i]
			if err := gen1.CommitOffsets(map[string]map[int]int64{cgTopic: {0: int64(10 + i)}}); err != nil {
				t.Errorf("commit while the generation drains: %v", err)
			}
			exited[i].Store(seq.Add(1))
			close(turn[i+1])
		})
	}
	gen2 := cgNext(t, cg, 5*time.Second)
	for i := range exited {
		e := exited[i].Load()
		if e == 0 || lastJoin.Load() < e {
			t.Errorf("function %d exited at step %d, after the rejoin at step %d", i, e, lastJoin.Load())
		}
	}
	if gen2.ID <= gen1.ID {
		t.Errorf("generation %d after %d", gen2.ID, gen1.ID)
	}
	if o, _ := c.Committed("g-wait", cgTopic, 0); o != 12 {
		t.Errorf("committed %d, want the last drain commit 12", o)
	}
}

// StartOffset LastOffset: the concrete end offset is resolved and committed
// when the group first gets a partition, so messages produced before the
// first commit of the reader survive a rebalance.
func TestConsumerGroupLastOffsetIsResolvedAndCommitted(t *testing.T) {
	c := cgFake(t, 1, 3)
	b := c.Broker(1)
	c.AppendRecords(cgTopic, 0, "a", "b", "c")
	c.AppendRecords(cgTopic, 1, "a")
	c.Commit("g-last", cgTopic, 2, 0) // already committed: left alone
	c.AppendRecords(cgTopic, 2, "a", "b")
	cfg := cgConfig(c, "g-last")
	cfg.StartOffset = LastOffset
	cg := cgNew(t, cfg)
	gen1 := cgNext(t, cg, 5*time.Second)

	want := "[{0 3} {1 1} {2 0}]"
	if got := fmt.Sprint(gen1.Assignments[cgTopic]); got != want {
		t.Errorf("generation 1 assignments %s, want %s", got, want)
	}
	for p, o := range map[int32]int64{0: 3, 1: 1, 2: 0} {
		if got, ok := c.Committed("g-last", cgTopic, p); !ok || got != o {
			t.Errorf("partition %d: committed %d %v, want %d", p, got, ok, o)
		}
	}
	lo := b.Received(protocol.ListOffsets)
	if len(lo) != 1 {
		t.Fatalf("%d ListOffsets requests, want 1", len(lo))
	}
	if ps := lo[0].Request.(*protocol.ListOffsetsRequest).Topics[0].Partitions; len(ps) != 2 || ps[0].Timestamp != LastOffset {
		t.Errorf("ListOffsets partitions %+v", ps)
	}

	// Messages arrive, then a rebalance before any commit of the reader.
	c.AppendRecords(cgTopic, 0, "d", "e")
	c.AppendRecords(cgTopic, 1, "b")
	b.ScriptNext(protocol.Heartbeat, fakebroker.Step{ErrorCode: int16(RebalanceInProgress)})
	gen2 := cgNext(t, cg, 5*time.Second)
	if got := fmt.Sprint(gen2.Assignments[cgTopic]); got != want {
		t.Errorf("generation 2 assignments %s, want %s: messages produced in between would be skipped", got, want)
	}
	if n := b.Requests(protocol.ListOffsets); n != 1 {
		t.Errorf("%d ListOffsets requests, want the end offsets resolved once", n)
	}
}

// A failed commit of the start offsets fails the join: no generation is
// handed out with an uncommitted start.
func TestConsumerGroupLastOffsetCommitFailure(t *testing.T) {
	c := cgFake(t, 1, 1)
	b := c.Broker(1)
	c.AppendRecords(cgTopic, 0, "a")
	b.Script(protocol.OffsetCommit, 1, fakebroker.Step{ErrorCode: int16(RebalanceInProgress)})
	cfg := cgConfig(c, "g-last-fail")
	cfg.StartOffset = LastOffset
	cg := cgNew(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cg.Next(ctx); !errors.Is(err, RebalanceInProgress) {
		t.Fatalf("Next: %v, want the commit's RebalanceInProgress", err)
	}
	gen := cgNext(t, cg, 5*time.Second)
	if got := fmt.Sprint(gen.Assignments[cgTopic]); got != "[{0 1}]" {
		t.Errorf("assignments %s", got)
	}
	if o, _ := c.Committed("g-last-fail", cgTopic, 0); o != 1 {
		t.Errorf("committed %d", o)
	}
}

func TestConsumerGroupWatchPartitionChanges(t *testing.T) {
	c := cgFake(t, 1, 2)
	cfg := cgConfig(c, "g-watch")
	cfg.WatchPartitionChanges = true
	cfg.PartitionWatchInterval = 20 * time.Millisecond
	cg := cgNew(t, cfg)
	m := cgRun(t, cg, nil)
	cgEventually(t, 5*time.Second, "first generation", func() bool { return m.latest() != nil })
	first := m.latest()
	if got := cgPartitions(first, cgTopic); len(got) != 2 {
		t.Fatalf("assigned %v", got)
	}
	c.DeleteTopic(cgTopic)
	c.CreateTopic(cgTopic, 5, 1)
	cgEventually(t, 5*time.Second, "a generation with 5 partitions", func() bool {
		return len(cgPartitions(m.latest(), cgTopic)) == 5
	})
}

func TestConsumerGroupClose(t *testing.T) {
	c := cgFake(t, 1, 2)
	b := c.Broker(1)
	cg := cgNew(t, cgConfig(c, "g-close"))
	gen := cgNext(t, cg, 5*time.Second)

	committed := make(chan error, 1)
	gen.Start(func(ctx context.Context) {
		<-ctx.Done()
		// A final commit on the way out still reaches the coordinator.
		committed <- gen.CommitOffsets(map[string]map[int]int64{cgTopic: {1: 5}})
	})
	if err := cg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-committed; err != nil {
		t.Errorf("final commit: %v", err)
	}
	if o, _ := c.Committed("g-close", cgTopic, 1); o != 5 {
		t.Errorf("committed %d", o)
	}
	leaves := b.Received(protocol.LeaveGroup)
	if len(leaves) != 1 {
		t.Fatalf("%d LeaveGroup requests", len(leaves))
	}
	l := leaves[0].Request.(*protocol.LeaveGroupRequest)
	if l.MemberID != gen.MemberID && (len(l.Members) != 1 || l.Members[0].MemberID != gen.MemberID) {
		t.Errorf("LeaveGroup %+v, want member %s", l, gen.MemberID)
	}
	if _, err := cg.Next(context.Background()); err != ErrGroupClosed {
		t.Errorf("Next after Close: %v", err)
	}
	if err := gen.CommitOffsets(map[string]map[int]int64{cgTopic: {0: 1}}); err != ErrGenerationEnded {
		t.Errorf("CommitOffsets after Close: %v", err)
	}
	ran := make(chan error, 1)
	gen.Start(func(ctx context.Context) { ran <- ctx.Err() })
	if err := <-ran; err != ErrGenerationEnded {
		t.Errorf("Start after Close: ctx.Err() = %v", err)
	}
	if err := cg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Close while the join is blocked (the coordinator waits for members that do
// not come) returns promptly.
func TestConsumerGroupCloseDuringJoin(t *testing.T) {
	c := cgFake(t, 1, 2)
	b := c.Broker(1)
	hold := make(chan struct{})
	defer close(hold)
	b.Script(protocol.JoinGroup, 2, fakebroker.Step{Action: fakebroker.Action{Wait: hold}})
	cg := cgNew(t, cgConfig(c, "g-close-join"))
	cgWait(t, b.Await(protocol.JoinGroup, 2), 5*time.Second, "the second JoinGroup")
	done := make(chan struct{})
	go func() {
		cg.Close()
		close(done)
	}()
	cgWait(t, done, 5*time.Second, "Close")
}

func TestConsumerGroupNextContext(t *testing.T) {
	c := cgFake(t, 1, 1)
	b := c.Broker(1)
	hold := make(chan struct{})
	defer close(hold)
	b.Script(protocol.FindCoordinator, 1, fakebroker.Step{Action: fakebroker.Action{Wait: hold}})
	cg := cgNew(t, cgConfig(c, "g-next-ctx"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := cg.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next: %v", err)
	}
}

func TestConsumerGroupRackUserData(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer GroupBalancer
		rack     string
		dialer   string
		want     string
	}{
		{"config rack", RackAffinityGroupBalancer{}, "rack-x", "", "rack-x"},
		{"pointer", &RackAffinityGroupBalancer{}, "rack-x", "", "rack-x"},
		{"dialer rack", RackAffinityGroupBalancer{}, "", "rack-d", "rack-d"},
		{"own rack wins", RackAffinityGroupBalancer{Rack: "own"}, "rack-x", "", "own"},
		{"other balancer", RangeGroupBalancer{}, "rack-x", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cgFake(t, 1, 2)
			cfg := cgConfig(c, "g-rack")
			cfg.GroupBalancers = []GroupBalancer{tc.balancer}
			cfg.rack = tc.rack
			cfg.Dialer = &Dialer{RackID: tc.dialer}
			cg := cgNew(t, cfg)
			gen := cgNext(t, cg, 5*time.Second)
			if len(cgPartitions(gen, cgTopic)) != 2 {
				t.Errorf("assigned %v", gen.Assignments)
			}
			joins := c.Broker(1).Received(protocol.JoinGroup)
			var sub protocol.ConsumerProtocolSubscription
			if err := sub.Decode(joins[len(joins)-1].Request.(*protocol.JoinGroupRequest).Protocols[0].Metadata); err != nil {
				t.Fatal(err)
			}
			if string(sub.UserData) != tc.want {
				t.Errorf("user data %q, want %q", sub.UserData, tc.want)
			}
		})
	}
}

// A group sharing the Reader's cluster leaves it open on Close.
func TestConsumerGroupSharedCluster(t *testing.T) {
	c := cgFake(t, 1, 1)
	cl := newCluster(nil, c.Addrs())
	defer cl.close()
	cfg := cgConfig(c, "g-shared")
	cfg.Brokers = nil
	cfg.cluster = cl
	cg := cgNew(t, cfg)
	cgNext(t, cg, 5*time.Second)
	cg.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := cl.refresh(ctx, cgTopic); err != nil {
		t.Errorf("shared cluster unusable after Close: %v", err)
	}
}

// A broker whose metadata does not show a topic just created yet: the
// leader asks again before leaving the topic unassigned.
func TestConsumerGroupLeaderRetriesMissingTopic(t *testing.T) {
	c := cgFake(t, 1, 3)
	b := c.Broker(1)
	b.Script(protocol.Metadata, 1, fakebroker.Step{ErrorCode: int16(UnknownTopicOrPartition)})
	cg := cgNew(t, cgConfig(c, "g-missing"))
	gen := cgNext(t, cg, 5*time.Second)
	if got := cgPartitions(gen, cgTopic); fmt.Sprint(got) != "[0 1 2]" {
		t.Errorf("assigned %v, want all 3 partitions", got)
	}
	if n := b.Requests(protocol.Metadata); n < 2 {
		t.Errorf("%d Metadata requests, want a retry", n)
	}
}

// A first JoinGroup answered NotCoordinator (a fresh cluster, a moving
// coordinator) is retried after a short wait, not a full JoinGroupBackoff.
func TestConsumerGroupJoinRetriesCoordinatorSoon(t *testing.T) {
	c := cgFake(t, 1, 1)
	b := c.Broker(1)
	b.Script(protocol.JoinGroup, 1, fakebroker.Step{ErrorCode: int16(NotCoordinatorForGroup)})
	cfg := cgConfig(c, "g-join-coord")
	cfg.JoinGroupBackoff = time.Minute // a full backoff would outlast the test's deadline
	cg := cgNew(t, cfg)
	gen := cgNext(t, cg, 10*time.Second)
	if gen == nil {
		t.Fatal("no generation")
	}
	if n := b.Requests(protocol.JoinGroup); n < 2 {
		t.Errorf("%d JoinGroup requests, want a retry after NotCoordinator", n)
	}
}
