package kafka

// The requests of ConsumerGroup: FindCoordinator through the shared
// cluster, then JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetFetch and
// OffsetCommit on a connection of the group's own to the coordinator (a
// JoinGroup may block for the whole rebalance timeout, which must not stall
// the shared control connections), and ListOffsets at partition leaders.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// coordinator returns the connection to the group's coordinator, looking
// the coordinator up and dialing it when there is none (or it broke: a
// request that timed out closes its connection). Lookups are retried (the
// coordinator of a new group may take a moment to load, a failed one a
// moment to move) for up to Timeout. The heartbeat loop, commits and the
// join all come through here, one at a time.
func (cg *ConsumerGroup) coordinator(ctx context.Context) (*Conn, error) {
	select {
	case cg.coordMu <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("finding the coordinator of group %s: %w", cg.config.ID, ctx.Err())
	}
	defer func() { <-cg.coordMu }()
	if c := cg.coord; c != nil && !c.isBroken() {
		return c, nil
	}
	cg.closeCoordinatorLocked()
	deadline := time.Now().Add(cg.config.Timeout)
	for attempt := 1; ; attempt++ {
		c, err := cg.dialCoordinator(ctx)
		if err == nil {
			cg.coord = c
			return c, nil
		}
		if ctx.Err() != nil || errors.Is(err, GroupAuthorizationFailed) || permanentFailure(err) || time.Now().After(deadline) {
			return nil, fmt.Errorf("finding the coordinator of group %s: %w", cg.config.ID, err)
		}
		cg.config.failure.set(fmt.Errorf("finding the coordinator of group %s: %w", cg.config.ID, err))
		cg.log("finding the coordinator of group %s (attempt %d, retrying): %v", cg.config.ID, attempt, err)
		if !sleep(ctx, backoff(attempt, 50*time.Millisecond, time.Second)) {
			return nil, fmt.Errorf("finding the coordinator of group %s: %w", cg.config.ID, ctx.Err())
		}
	}
}

// dialCoordinator asks a broker which one coordinates the group (key type
// 0, a group) and connects to it. The question goes through the cluster's
// control connections (withControlCtx): each attempt under the control
// deadline, brokers that stalled tried last (a coordinator that stopped
// answering is marked so, see coordinatorAnswered), the next broker asked
// when one does not answer.
func (cg *ConsumerGroup) dialCoordinator(ctx context.Context) (*Conn, error) {
	req := &protocol.FindCoordinatorRequest{
		CoordinatorKey:  cg.config.ID, // v1-3
		KeyType:         protocol.CoordinatorKeyTypeGroup,
		CoordinatorKeys: []string{cg.config.ID}, // v4+
	}
	var b Broker
	err := cg.cl.withControlCtx(ctx, func(rctx context.Context, c *Conn) error {
		resp, v, err := c.roundTrip(rctx, req, -1)
		if err != nil {
			return err
		}
		r := resp.(*protocol.FindCoordinatorResponse)
		b = Broker{ID: int(r.NodeID), Host: r.Host, Port: int(r.Port)}
		code, msg := r.ErrorCode, r.ErrorMessage
		if v >= 4 {
			if len(r.Coordinators) == 0 {
				return errors.New("FindCoordinator answered without a coordinator")
			}
			co := r.Coordinators[0]
			b = Broker{ID: int(co.NodeID), Host: co.Host, Port: int(co.Port)}
			code, msg = co.ErrorCode, co.ErrorMessage
		}
		if code != 0 {
			m := ""
			if msg != nil {
				m = *msg
			}
			return makeError(code, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if known, ok := cg.cl.broker(b.ID); ok {
		b.Rack = known.Rack
	}
	addr := net.JoinHostPort(b.Host, strconv.Itoa(b.Port))
	// A dial and ApiVersions are answered at once by a live broker: the
	// control deadline (at most 3s), not Timeout, bounds what a frozen
	// coordinator costs each lookup.
	rctx, cancel := context.WithTimeout(ctx, min(cg.config.Timeout, controlTimeout(cg.cl.dialer)))
	defer cancel()
	conn, err := cg.cl.dialer.connect(rctx, "tcp", addr, ConnConfig{Broker: b.ID, Rack: b.Rack})
	if err != nil {
		var kerr Error
		if !errors.As(err, &kerr) {
			cg.cl.markUnresponsive(addr)
		}
		return nil, fmt.Errorf("connecting to coordinator %d at %s: %w", b.ID, addr, err)
	}
	cg.log("group %s: coordinator is broker %d at %s", cg.config.ID, b.ID, addr)
	return conn, nil
}

// dropCoordinator closes the coordinator connection so that the next use
// looks the coordinator up again.
func (cg *ConsumerGroup) dropCoordinator() {
	cg.coordMu <- struct{}{}
	cg.closeCoordinatorLocked()
	<-cg.coordMu
}

// dropCoordinatorConn drops c if it is still the coordinator connection
// (another goroutine may already have replaced it).
func (cg *ConsumerGroup) dropCoordinatorConn(c *Conn) {
	if c == nil {
		return
	}
	cg.coordMu <- struct{}{}
	if cg.coord == c {
		cg.closeCoordinatorLocked()
	}
	<-cg.coordMu
}

// coordinatorAnswered notes the outcome of a request to the coordinator
// on c in the cluster's memory of unresponsive brokers: one that did not
// answer (a timeout, a broken connection), most likely frozen, is asked
// last at the next coordinator lookup (it may well keep naming itself),
// and one that answered is trusted again.
func (cg *ConsumerGroup) coordinatorAnswered(c *Conn, err error) {
	if c == nil {
		return
	}
	b, ok := cg.cl.broker(c.Broker().ID)
	if !ok {
		return
	}
	var kerr Error
	switch {
	case err == nil || errors.As(err, &kerr):
		cg.cl.markResponsive(hostPort(b))
	default:
		cg.cl.markUnresponsive(hostPort(b))
	}
}

func (cg *ConsumerGroup) closeCoordinatorLocked() {
	if cg.coord != nil {
		cg.coord.Close()
		cg.coord = nil
	}
}

// coordinatorMoved reports the errors of a coordinator that no longer
// coordinates the group (or never did): look it up again.
func coordinatorMoved(err error) bool {
	return errors.Is(err, NotCoordinatorForGroup) || errors.Is(err, GroupCoordinatorNotAvailable)
}

// coordinatorUnreachable reports errors of a request to the coordinator
// that say nothing about the member or its generation: the coordinator
// moved, is loading the group, or did not answer (a timeout, a refused
// dial, a closed connection). They are retried, against a coordinator
// looked up again, while the member's session lasts.
func coordinatorUnreachable(err error) bool {
	if coordinatorMoved(err) || errors.Is(err, GroupLoadInProgress) || errors.Is(err, RequestTimedOut) {
		return true
	}
	var kerr Error
	return !errors.As(err, &kerr) && !errors.Is(err, ErrGenerationEnded) && !errors.Is(err, ErrGroupClosed)
}

// generationOverError reports the errors with which the coordinator says
// that the generation is over for this member.
func generationOverError(err error) bool {
	return errors.Is(err, RebalanceInProgress) || errors.Is(err, IllegalGeneration) ||
		errors.Is(err, UnknownMemberId) || errors.Is(err, FencedInstanceID)
}

// joinGroup sends JoinGroup until the coordinator takes the member: a
// coordinator that requires a member id (KIP-394) names one to rejoin
// with, and one that forgot the member's id gets a join without it.
func (cg *ConsumerGroup) joinGroup(ctx context.Context, conn *Conn) (*protocol.JoinGroupResponse, error) {
	protocols, err := cg.groupProtocols()
	if err != nil {
		return nil, err
	}
	for round := 0; round < 3; round++ {
		req := &protocol.JoinGroupRequest{
			GroupID:            cg.config.ID,
			SessionTimeoutMs:   int32(cg.config.SessionTimeout / time.Millisecond),
			RebalanceTimeoutMs: int32(cg.config.RebalanceTimeout / time.Millisecond),
			MemberID:           cg.memberID,
			ProtocolType:       groupProtocolType,
			Protocols:          protocols,
		}
		// The coordinator holds the answer until every member rejoined,
		// up to the rebalance timeout.
		rctx, cancel := context.WithTimeout(ctx, cg.config.Timeout+cg.config.RebalanceTimeout)
		resp, _, err := conn.roundTrip(rctx, req, -1)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("joining group %s: %w", cg.config.ID, err)
		}
		r := resp.(*protocol.JoinGroupResponse)
		err = errorFromCode(r.ErrorCode)
		switch {
		case err == nil:
			cg.memberID = r.MemberID
			return r, nil
		case errors.Is(err, MemberIDRequired) && r.MemberID != "":
			cg.memberID = r.MemberID
		case errors.Is(err, UnknownMemberId) && cg.memberID != "":
			cg.log("group %s forgot member %s: joining as a new member", cg.config.ID, cg.memberID)
			cg.memberID = ""
		default:
			return nil, fmt.Errorf("joining group %s as member %q: %w", cg.config.ID, cg.memberID, err)
		}
	}
	return nil, fmt.Errorf("joining group %s: the coordinator kept refusing the member id", cg.config.ID)
}

// groupProtocols is the JoinGroup protocol list: one per balancer, each
// with a consumer protocol subscription (version 0: topics and the
// balancer's user data, which kafka-go members read as well).
func (cg *ConsumerGroup) groupProtocols() ([]protocol.JoinGroupRequestProtocol, error) {
	topics := append([]string(nil), cg.config.Topics...)
	sort.Strings(topics)
	out := make([]protocol.JoinGroupRequestProtocol, 0, len(cg.config.GroupBalancers))
	for _, b := range cg.config.GroupBalancers {
		userData, err := cg.balancerUserData(b)
		if err != nil {
			return nil, fmt.Errorf("user data of group balancer %s: %w", b.ProtocolName(), err)
		}
		sub := protocol.ConsumerProtocolSubscription{Version: 0, Topics: topics, UserData: userData}
		out = append(out, protocol.JoinGroupRequestProtocol{Name: b.ProtocolName(), Metadata: sub.AppendTo(nil)})
	}
	return out, nil
}

// balancerUserData is b.UserData(), except that a RackAffinityGroupBalancer
// without a Rack carries the member's rack (config.rack, else
// Dialer.RackID).
func (cg *ConsumerGroup) balancerUserData(b GroupBalancer) ([]byte, error) {
	rack := cg.config.rack
	if rack == "" && cg.config.Dialer != nil {
		rack = cg.config.Dialer.RackID
	}
	if rack != "" {
		switch rb := b.(type) {
		case RackAffinityGroupBalancer:
			if rb.Rack == "" {
				return []byte(rack), nil
			}
		case *RackAffinityGroupBalancer:
			if rb != nil && rb.Rack == "" {
				return []byte(rack), nil
			}
		}
	}
	return b.UserData()
}

// assignPartitions is the leader's job: run the balancer the coordinator
// chose over every member's subscription and the subscribed topics'
// partitions (freshly read into the cluster cache). It returns the
// SyncGroup assignments of every member and the partition counts of this
// member's topics the assignment was made with.
func (cg *ConsumerGroup) assignPartitions(ctx context.Context, join *protocol.JoinGroupResponse) ([]protocol.SyncGroupRequestAssignment, map[string]int, error) {
	balancer, ok := findGroupBalancer(join.ProtocolName, cg.config.GroupBalancers)
	if !ok {
		return nil, nil, fmt.Errorf("the coordinator chose protocol %q, which no configured GroupBalancer implements", join.ProtocolName)
	}
	members := make([]GroupMember, 0, len(join.Members))
	seen := map[string]bool{}
	var topics []string
	for _, m := range join.Members {
		var sub protocol.ConsumerProtocolSubscription
		if err := sub.Decode(m.Metadata); err != nil {
			return nil, nil, fmt.Errorf("subscription of member %s: %w", m.MemberID, err)
		}
		members = append(members, GroupMember{
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
	// A topic that does not exist (yet) has no partitions to assign; the
	// partition watcher rebalances once it appears. But a topic just
	// created may only be missing from the answering broker's metadata for
	// a moment: ask again briefly before leaving it unassigned.
	for attempt := 1; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, cg.config.Timeout)
		err := cg.cl.refresh(rctx, topics...)
		cancel()
		if err != nil {
			return nil, nil, err
		}
		missing := 0
		for _, t := range topics {
			if _, ok := cg.cl.topicPartitions(t); !ok {
				missing++
			}
		}
		if missing == 0 || attempt == 3 {
			break
		}
		if !sleep(ctx, backoff(attempt, 100*time.Millisecond, time.Second)) {
			return nil, nil, ctx.Err()
		}
	}
	var partitions []Partition
	for _, t := range topics {
		ps, _ := cg.cl.topicPartitions(t)
		partitions = append(partitions, ps...)
	}
	result := balancer.AssignGroups(members, partitions)

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
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			a.AssignedPartitions = append(a.AssignedPartitions, protocol.ConsumerProtocolTopicPartitions{Topic: t, Partitions: ps})
		}
		plan = append(plan, protocol.SyncGroupRequestAssignment{MemberID: m.ID, Assignment: a.AppendTo(nil)})
		cg.log("group %s generation %d: leader %s assigns %v to member %s", cg.config.ID, join.GenerationID, join.MemberID, byTopic, m.ID)
	}
	return plan, cg.partitionCounts(cg.config.Topics), nil
}

// syncGroup sends the leader's plan (nil for the other members) and returns
// this member's partitions by topic.
func (cg *ConsumerGroup) syncGroup(ctx context.Context, conn *Conn, join *protocol.JoinGroupResponse, plan []protocol.SyncGroupRequestAssignment) (map[string][]int, error) {
	pt, pn := groupProtocolType, join.ProtocolName
	req := &protocol.SyncGroupRequest{
		GroupID:      cg.config.ID,
		GenerationID: join.GenerationID,
		MemberID:     join.MemberID,
		ProtocolType: &pt, // v5+
		ProtocolName: &pn, // v5+
		Assignments:  plan,
	}
	// The coordinator holds the answer of the others until the leader
	// synced, up to the session timeout.
	rctx, cancel := context.WithTimeout(ctx, cg.config.Timeout+cg.config.SessionTimeout)
	resp, _, err := conn.roundTrip(rctx, req, -1)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("syncing group %s: %w", cg.config.ID, err)
	}
	r := resp.(*protocol.SyncGroupResponse)
	if err := errorFromCode(r.ErrorCode); err != nil {
		return nil, fmt.Errorf("syncing group %s generation %d: %w", cg.config.ID, join.GenerationID, err)
	}
	out := map[string][]int{}
	if len(r.Assignment) == 0 {
		return out, nil // nothing assigned
	}
	var a protocol.ConsumerProtocolAssignment
	if err := a.Decode(r.Assignment); err != nil {
		return nil, fmt.Errorf("assignment of group %s generation %d: %w", cg.config.ID, join.GenerationID, err)
	}
	for _, tp := range a.AssignedPartitions {
		for _, p := range tp.Partitions {
			out[tp.Topic] = append(out[tp.Topic], int(p))
		}
	}
	for t, ps := range out {
		sort.Ints(ps)
		out[t] = dedupSortedInts(ps)
	}
	return out, nil
}

// heartbeat sends one heartbeat of g on conn. It is not cancelled with
// the generation: an interrupted request would break the connection that
// the generation's last commits still need.
func (cg *ConsumerGroup) heartbeat(ctx context.Context, conn *Conn, g *Generation) error {
	resp, _, err := conn.roundTrip(ctx, &protocol.HeartbeatRequest{
		GroupID:      g.GroupID,
		GenerationID: g.ID,
		MemberID:     g.MemberID,
	}, -1)
	if err != nil {
		return err
	}
	return errorFromCode(resp.(*protocol.HeartbeatResponse).ErrorCode)
}

// leaveGroup tells the coordinator that the member leaves, so that the
// group rebalances at once instead of after the session timeout.
func (cg *ConsumerGroup) leaveGroup(ctx context.Context) error {
	conn, err := cg.coordinator(ctx)
	if err != nil {
		return err
	}
	reason := "the consumer group was closed"
	resp, _, err := conn.roundTrip(ctx, &protocol.LeaveGroupRequest{
		GroupID:  cg.config.ID,
		MemberID: cg.memberID,                                                                  // v0-2
		Members:  []protocol.LeaveGroupRequestMember{{MemberID: cg.memberID, Reason: &reason}}, // v3+
	}, -1)
	if err != nil {
		return err
	}
	r := resp.(*protocol.LeaveGroupResponse)
	if err := errorFromCode(r.ErrorCode); err != nil {
		return err
	}
	for _, m := range r.Members {
		if err := errorFromCode(m.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}

// fetchOffsets reads the group's committed offsets of partitions (by
// topic): -1 where none is committed.
func (cg *ConsumerGroup) fetchOffsets(ctx context.Context, conn *Conn, partitions map[string][]int) (map[string]map[int]int64, error) {
	names := make([]string, 0, len(partitions))
	for t := range partitions {
		names = append(names, t)
	}
	sort.Strings(names)
	topics := make([]protocol.OffsetFetchRequestTopic, 0, len(names))
	for _, t := range names {
		ps := make([]int32, len(partitions[t]))
		for i, p := range partitions[t] {
			ps[i] = int32(p)
		}
		topics = append(topics, protocol.OffsetFetchRequestTopic{Name: t, PartitionIndexes: ps})
	}
	req := &protocol.OffsetFetchRequest{
		GroupID: cg.config.ID,                                                                                 // v1-7
		Topics:  topics,                                                                                       // v1-7
		Groups:  []protocol.OffsetFetchRequestGroup{{GroupID: cg.config.ID, MemberEpoch: -1, Topics: topics}}, // v8+
	}
	rctx, cancel := context.WithTimeout(ctx, cg.config.Timeout)
	defer cancel()
	resp, v, err := conn.roundTrip(rctx, req, -1)
	if err != nil {
		return nil, err
	}
	r := resp.(*protocol.OffsetFetchResponse)
	code, got := r.ErrorCode, r.Topics
	if v >= 8 {
		code, got = 0, nil
		for _, g := range r.Groups {
			if g.GroupID == cg.config.ID {
				code, got = g.ErrorCode, g.Topics
			}
		}
	}
	if err := errorFromCode(code); err != nil {
		return nil, err
	}
	out := make(map[string]map[int]int64, len(partitions))
	for t, ps := range partitions {
		out[t] = make(map[int]int64, len(ps))
		for _, p := range ps {
			out[t][p] = -1
		}
	}
	for _, t := range got {
		for _, p := range t.Partitions {
			if err := errorFromCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("committed offset of %s/%d: %w", t.Name, p.PartitionIndex, err)
			}
			if out[t.Name] != nil {
				out[t.Name][int(p.PartitionIndex)] = p.CommittedOffset
			}
		}
	}
	return out, nil
}

// commit sends OffsetCommit for the generation on conn. With a
// RetentionTime the request is capped at version 4, the last that carries
// it.
func (g *Generation) commit(ctx context.Context, conn *Conn, offsets map[string]map[int]int64) error {
	cfg := &g.group.config
	req := &protocol.OffsetCommitRequest{
		GroupID:         g.GroupID,
		GenerationID:    g.ID,
		MemberID:        g.MemberID,
		RetentionTimeMs: -1,
	}
	limit := int16(-1)
	if cfg.RetentionTime != defaultRetentionTime {
		req.RetentionTimeMs = int64(cfg.RetentionTime / time.Millisecond)
		limit = 4
	}
	names := make([]string, 0, len(offsets))
	for t := range offsets {
		names = append(names, t)
	}
	sort.Strings(names)
	noMetadata := ""
	for _, t := range names {
		rt := protocol.OffsetCommitRequestTopic{Name: t}
		ids := make([]int, 0, len(offsets[t]))
		for p := range offsets[t] {
			ids = append(ids, p)
		}
		sort.Ints(ids)
		for _, p := range ids {
			rt.Partitions = append(rt.Partitions, protocol.OffsetCommitRequestPartition{
				PartitionIndex:       int32(p),
				CommittedOffset:      offsets[t][p],
				CommittedLeaderEpoch: -1,
				CommittedMetadata:    &noMetadata,
			})
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, _, err := conn.roundTrip(ctx, req, limit)
	if err != nil {
		return err
	}
	var errs []error
	codes := map[int16]bool{}
	for _, t := range resp.(*protocol.OffsetCommitResponse).Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				codes[p.ErrorCode] = true
				errs = append(errs, fmt.Errorf("committing the offset of %s/%d: %w", t.Name, p.PartitionIndex, Error(p.ErrorCode)))
			}
		}
	}
	switch {
	case len(errs) == 0:
		return nil
	case len(codes) == 1:
		for code := range codes {
			return Error(code)
		}
	}
	return errors.Join(errs...)
}

// listEndOffsets asks the partitions' leaders for their end offsets
// (ListOffsets "latest": the high watermark, or the last stable offset
// with ReadCommitted). Partitions whose leader moved are retried after a
// metadata refresh.
func (cg *ConsumerGroup) listEndOffsets(ctx context.Context, partitions map[string][]int) (map[string]map[int]int64, error) {
	out := map[string]map[int]int64{}
	pending := map[topicPartition]bool{}
	var topics []string
	for t, ps := range partitions {
		topics = append(topics, t)
		for _, p := range ps {
			pending[topicPartition{t, p}] = true
		}
	}
	var lastErr error
	for attempt := 1; len(pending) > 0; attempt++ {
		if attempt > 3 {
			return nil, lastErr
		}
		if attempt > 1 {
			if !sleep(ctx, backoff(attempt-1, 100*time.Millisecond, time.Second)) {
				return nil, ctx.Err()
			}
			rctx, cancel := context.WithTimeout(ctx, cg.config.Timeout)
			if err := cg.cl.refresh(rctx, topics...); err != nil {
				lastErr = err
			}
			cancel()
		}
		requests := map[*Conn]*protocol.ListOffsetsRequest{}
		for tp := range pending {
			rctx, cancel := context.WithTimeout(ctx, cg.config.Timeout)
			c, _, err := cg.cl.leaderConn(rctx, tp.topic, tp.partition)
			cancel()
			if err != nil {
				lastErr = err
				continue
			}
			req := requests[c]
			if req == nil {
				req = &protocol.ListOffsetsRequest{
					ReplicaID:      -1,
					IsolationLevel: int8(cg.config.isolationLevel),
					TimeoutMs:      int32(cg.config.Timeout / time.Millisecond),
				}
				requests[c] = req
			}
			addListOffsetsPartition(req, tp)
		}
		for c, req := range requests {
			rctx, cancel := context.WithTimeout(ctx, cg.config.Timeout)
			resp, _, err := c.roundTrip(rctx, req, -1)
			cancel()
			if err != nil {
				lastErr = err
				cg.cl.dropConn(c)
				continue
			}
			for _, t := range resp.(*protocol.ListOffsetsResponse).Topics {
				for _, p := range t.Partitions {
					tp := topicPartition{t.Name, int(p.PartitionIndex)}
					if !pending[tp] {
						continue
					}
					if err := errorFromCode(p.ErrorCode); err != nil {
						lastErr = fmt.Errorf("listing the last offset of %s: %w", tp, err)
						if !isTemporary(err) {
							return nil, lastErr
						}
						continue
					}
					if out[tp.topic] == nil {
						out[tp.topic] = map[int]int64{}
					}
					out[tp.topic][tp.partition] = p.Offset
					delete(pending, tp)
				}
			}
		}
	}
	return out, nil
}

func addListOffsetsPartition(req *protocol.ListOffsetsRequest, tp topicPartition) {
	p := protocol.ListOffsetsRequestPartition{
		PartitionIndex: int32(tp.partition),
		// -1 skips the epoch check: the answer is only used if it comes
		// from the leader, which a stale epoch would not change.
		CurrentLeaderEpoch: -1,
		Timestamp:          LastOffset,
	}
	for i := range req.Topics {
		if req.Topics[i].Name == tp.topic {
			req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
			return
		}
	}
	req.Topics = append(req.Topics, protocol.ListOffsetsRequestTopic{Name: tp.topic, Partitions: []protocol.ListOffsetsRequestPartition{p}})
}
