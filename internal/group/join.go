package group

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/protocol"
)

// nextGeneration joins the group and sets up the next generation: the
// coordinator, JoinGroup, the leader's assignment, SyncGroup, the start
// offsets, then heartbeats and the partition watcher.
func (g *Group) nextGeneration() (*Generation, error) {
	ctx := g.ctx
	conn, err := g.coordinator(ctx)
	if err != nil {
		return nil, err
	}
	join, err := g.joinGroup(ctx, conn)
	if err != nil {
		return nil, err
	}
	g.deps.Log.Printf("joined group %s as member %s in generation %d (leader %s, protocol %s)",
		g.cfg.ID, join.MemberID, join.GenerationID, join.Leader, join.ProtocolName)

	var plan []protocol.SyncGroupRequestAssignment
	var counts map[string]int
	if join.Leader == join.MemberID && !join.SkipAssignment {
		if plan, counts, err = g.assignPartitions(ctx, join); err != nil {
			return nil, fmt.Errorf("assigning the partitions of group %s: %w", g.cfg.ID, err)
		}
	}
	assigned, err := g.syncGroup(ctx, conn, join, plan)
	if err != nil {
		return nil, err
	}

	gen := newGeneration(g, join.GenerationID, join.MemberID)
	if gen.Assignments, err = g.startOffsets(ctx, conn, gen, assigned); err != nil {
		return nil, err
	}
	g.deps.Log.Printf("group %s generation %d: member %s has %s", g.cfg.ID, gen.ID, gen.MemberID, formatAssignments(gen.Assignments))

	gen.heartbeatLoop(g.cfg.HeartbeatInterval)
	if g.cfg.WatchPartitionChanges {
		gen.partitionWatcher(g.cfg.PartitionWatchInterval, counts)
	}
	return gen, nil
}

// joinGroup sends JoinGroup until the coordinator takes the member: a
// coordinator that requires a member id (KIP-394) names one to rejoin
// with, and one that forgot the member's id gets a join without it.
func (g *Group) joinGroup(ctx context.Context, conn Conn) (*protocol.JoinGroupResponse, error) {
	protocols, err := g.groupProtocols()
	if err != nil {
		return nil, err
	}
	for round := 0; round < 3; round++ {
		req := &protocol.JoinGroupRequest{
			GroupID:            g.cfg.ID,
			SessionTimeoutMs:   int32(g.cfg.SessionTimeout / time.Millisecond),
			RebalanceTimeoutMs: int32(g.cfg.RebalanceTimeout / time.Millisecond),
			MemberID:           g.memberID,
			ProtocolType:       ProtocolType,
			Protocols:          protocols,
		}
		// The coordinator holds the answer until every member rejoined,
		// up to the rebalance timeout.
		rctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout+g.cfg.RebalanceTimeout)
		resp, _, err := conn.RoundTrip(rctx, req, -1)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("joining group %s: %w", g.cfg.ID, err)
		}
		r := resp.(*protocol.JoinGroupResponse)
		err = g.deps.Errors.FromCode(r.ErrorCode, "")
		switch {
		case err == nil:
			g.memberID = r.MemberID
			return r, nil
		case r.ErrorCode == codeMemberIDRequired && r.MemberID != "":
			g.memberID = r.MemberID
		case r.ErrorCode == codeUnknownMemberID && g.memberID != "":
			g.deps.Log.Printf("group %s forgot member %s: joining as a new member", g.cfg.ID, g.memberID)
			g.memberID = ""
		default:
			return nil, fmt.Errorf("joining group %s as member %q: %w", g.cfg.ID, g.memberID, err)
		}
	}
	return nil, fmt.Errorf("joining group %s: the coordinator kept refusing the member id", g.cfg.ID)
}

// groupProtocols is the JoinGroup protocol list: one per balancer, each
// with a consumer protocol subscription (version 0: topics and the
// balancer's user data, which kafka-go members read as well).
func (g *Group) groupProtocols() ([]protocol.JoinGroupRequestProtocol, error) {
	topics := append([]string(nil), g.cfg.Topics...)
	sort.Strings(topics)
	protocols, err := g.deps.Balancers.Protocols()
	if err != nil {
		return nil, err
	}
	out := make([]protocol.JoinGroupRequestProtocol, 0, len(protocols))
	g.protocolNames = g.protocolNames[:0]
	for _, p := range protocols {
		g.protocolNames = append(g.protocolNames, p.Name)
		sub := protocol.ConsumerProtocolSubscription{Version: 0, Topics: topics, UserData: p.UserData}
		out = append(out, protocol.JoinGroupRequestProtocol{Name: p.Name, Metadata: sub.AppendTo(nil)})
	}
	return out, nil
}

// assignPartitions is the leader's job: run the balancer the coordinator
// chose over every member's subscription and the subscribed topics'
// partitions (freshly read into the cluster cache). It returns the
// SyncGroup assignments of every member and the partition counts of this
// member's topics the assignment was made with.
func (g *Group) assignPartitions(ctx context.Context, join *protocol.JoinGroupResponse) ([]protocol.SyncGroupRequestAssignment, map[string]int, error) {
	if !slices.Contains(g.protocolNames, join.ProtocolName) {
		return nil, nil, fmt.Errorf("the coordinator chose protocol %q, which no configured GroupBalancer implements", join.ProtocolName)
	}
	members := make([]Member, 0, len(join.Members))
	seen := map[string]bool{}
	var topics []string
	for _, m := range join.Members {
		var sub protocol.ConsumerProtocolSubscription
		if err := sub.Decode(m.Metadata); err != nil {
			return nil, nil, fmt.Errorf("subscription of member %s: %w", m.MemberID, err)
		}
		members = append(members, Member{
			ID:       m.MemberID,
			Topics:   sub.Topics,
			UserData: append([]byte(nil), sub.UserData...),
		})
		for _, t := range sub.Topics {
			if !seen[t] {
				seen[t] = true
				topics = append(topics, t)
			}
		}
	}
	sort.Strings(topics)
	if err := g.refreshAssigned(ctx, topics); err != nil {
		return nil, nil, err
	}
	result, ok := g.deps.Balancers.Assign(join.ProtocolName, members, topics)
	if !ok {
		return nil, nil, fmt.Errorf("the coordinator chose protocol %q, which no configured GroupBalancer implements", join.ProtocolName)
	}

	plan := make([]protocol.SyncGroupRequestAssignment, 0, len(members))
	for _, m := range members {
		a := protocol.ConsumerProtocolAssignment{Version: 0}
		byTopic := result[m.ID]
		names := make([]string, 0, len(byTopic))
		for t := range byTopic {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			ps := make([]int32, 0, len(byTopic[t]))
			for _, p := range byTopic[t] {
				ps = append(ps, int32(p))
			}
			slices.Sort(ps)
			a.AssignedPartitions = append(a.AssignedPartitions, protocol.ConsumerProtocolTopicPartitions{Topic: t, Partitions: ps})
		}
		plan = append(plan, protocol.SyncGroupRequestAssignment{MemberID: m.ID, Assignment: a.AppendTo(nil)})
		g.deps.Log.Printf("group %s generation %d: leader %s assigns %v to member %s", g.cfg.ID, join.GenerationID, join.MemberID, byTopic, m.ID)
	}
	return plan, g.partitionCounts(g.cfg.Topics), nil
}

// refreshAssigned reads the topics' metadata for the assignment. A topic
// that does not exist (yet) has no partitions to assign; the partition
// watcher rebalances once it appears. But a topic just created may only be
// missing from the answering broker's metadata for a moment: ask again
// briefly before leaving it unassigned.
func (g *Group) refreshAssigned(ctx context.Context, topics []string) error {
	for attempt := 1; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
		err := g.deps.Cluster.Refresh(rctx, topics...)
		cancel()
		if err != nil {
			return err
		}
		missing := 0
		for _, t := range topics {
			if _, ok := g.deps.Cluster.PartitionCount(t); !ok {
				missing++
			}
		}
		if missing == 0 || attempt == 3 {
			return nil
		}
		if !retry.Sleep(ctx, retry.Backoff(attempt, 100*time.Millisecond, time.Second)) {
			return ctx.Err()
		}
	}
}

// syncGroup sends the leader's plan (nil for the other members) and returns
// this member's partitions by topic.
func (g *Group) syncGroup(ctx context.Context, conn Conn, join *protocol.JoinGroupResponse, plan []protocol.SyncGroupRequestAssignment) (map[string][]int, error) {
	pt, pn := ProtocolType, join.ProtocolName
	req := &protocol.SyncGroupRequest{
		GroupID:      g.cfg.ID,
		GenerationID: join.GenerationID,
		MemberID:     join.MemberID,
		ProtocolType: &pt, // v5+
		ProtocolName: &pn, // v5+
		Assignments:  plan,
	}
	// The coordinator holds the answer of the others until the leader
	// synced, up to the session timeout.
	rctx, cancel := context.WithTimeout(ctx, g.cfg.Timeout+g.cfg.SessionTimeout)
	resp, _, err := conn.RoundTrip(rctx, req, -1)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("syncing group %s: %w", g.cfg.ID, err)
	}
	r := resp.(*protocol.SyncGroupResponse)
	if err := g.deps.Errors.FromCode(r.ErrorCode, ""); err != nil {
		return nil, fmt.Errorf("syncing group %s generation %d: %w", g.cfg.ID, join.GenerationID, err)
	}
	out := map[string][]int{}
	if len(r.Assignment) == 0 {
		return out, nil // nothing assigned
	}
	var a protocol.ConsumerProtocolAssignment
	if err := a.Decode(r.Assignment); err != nil {
		return nil, fmt.Errorf("assignment of group %s generation %d: %w", g.cfg.ID, join.GenerationID, err)
	}
	for _, tp := range a.AssignedPartitions {
		for _, p := range tp.Partitions {
			out[tp.Topic] = append(out[tp.Topic], int(p))
		}
	}
	for t, ps := range out {
		slices.Sort(ps)
		out[t] = slices.Compact(ps)
	}
	return out, nil
}

// partitionCounts returns the cached partition count of each topic (0 for
// a topic the cache does not know).
func (g *Group) partitionCounts(topics []string) map[string]int {
	out := make(map[string]int, len(topics))
	for _, t := range topics {
		out[t], _ = g.deps.Cluster.PartitionCount(t)
	}
	return out
}
