package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// DescribeGroupsRequest asks for the state and members of consumer groups.
type DescribeGroupsRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// GroupIDs names the groups to describe.
	GroupIDs []string
}

// DescribeGroupsResponse describes the requested groups.
type DescribeGroupsResponse struct {
	// Groups has one entry per group, in the order of the request.
	Groups []DescribeGroupsResponseGroup
}

// DescribeGroupsResponseGroup is the description of one group.
type DescribeGroupsResponseGroup struct {
	// Error is the Kafka error the coordinator reported for this group, or
	// nil.
	Error error

	// GroupID is the group described.
	GroupID string

	// GroupState is the group's state as Kafka names it ("Stable",
	// "PreparingRebalance", "CompletingRebalance", "Empty", "Dead").
	GroupState string

	// Members lists the group's current members.
	Members []DescribeGroupsResponseMember
}

// DescribeGroupsResponseMember is one member of a group.
type DescribeGroupsResponseMember struct {
	// MemberID is the id the coordinator gave the member.
	MemberID string

	// ClientID is the client id the member connects with.
	ClientID string

	// ClientHost is the host the member connects from.
	ClientHost string

	// MemberMetadata is the member's subscription, decoded from the
	// consumer protocol.
	MemberMetadata DescribeGroupsResponseMemberMetadata

	// MemberAssignments is the member's assignment, decoded from the
	// consumer protocol.
	MemberAssignments DescribeGroupsResponseAssignments
}

// DescribeGroupsResponseMemberMetadata is a consumer's subscription, as it
// sent it when joining the group.
type DescribeGroupsResponseMemberMetadata struct {
	// Version is the consumer protocol version the member wrote.
	Version int

	// Topics lists the topics the member subscribes to.
	Topics []string

	// UserData is the assignor's opaque data.
	UserData []byte

	// OwnedPartitions lists the partitions the member says it holds
	// (cooperative assignors; consumer protocol version 1 and above).
	OwnedPartitions []DescribeGroupsResponseMemberMetadataOwnedPartition
}

// DescribeGroupsResponseMemberMetadataOwnedPartition is one topic of the
// partitions a member owns.
type DescribeGroupsResponseMemberMetadataOwnedPartition struct {
	// Topic is the topic's name.
	Topic string

	// Partitions lists the member's partitions of Topic.
	Partitions []int
}

// DescribeGroupsResponseAssignments is the assignment a member received from
// the group's leader.
type DescribeGroupsResponseAssignments struct {
	// Version is the consumer protocol version the leader wrote.
	Version int

	// Topics lists the assigned partitions, by topic.
	Topics []GroupMemberTopic

	// UserData is the assignor's opaque data.
	UserData []byte
}

// GroupMemberTopic is a topic and the partitions of it assigned to a group
// member.
type GroupMemberTopic struct {
	// Topic is the topic's name.
	Topic string

	// Partitions lists the assigned partitions of Topic.
	Partitions []int
}

// DescribeGroups describes consumer groups. Each group is asked of its own
// coordinator (one request per coordinator). Errors Kafka reports for one
// group are in that group's Error; the returned error means the request
// failed as a whole (no coordinator found, a broker unreachable, member data
// that is not valid consumer protocol).
//
// Member metadata and assignments are decoded from the consumer protocol for
// groups whose protocol type is "consumer" (or empty, for a group with no
// members); other groups' members (Kafka Connect workers, for example) are
// listed with zero MemberMetadata and MemberAssignments.
func (c *Client) DescribeGroups(ctx context.Context, req *DescribeGroupsRequest) (*DescribeGroupsResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).DescribeGroups: nil request")
	}
	addr, err := c.address(req.Addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	answers, err := clientGroupsAsk[*protocol.DescribeGroupsResponse](ctx, c, addr, req.GroupIDs, func(groups []string) protocol.Request {
		return &protocol.DescribeGroupsRequest{Groups: groups}
	})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeGroups: %w", err)
	}

	// Answer in the order of the request, whichever coordinator answered;
	// groups the request did not name (a broker should send none) last.
	order := make(map[string]int, len(req.GroupIDs))
	for i, id := range req.GroupIDs {
		if _, ok := order[id]; !ok {
			order[id] = i
		}
	}
	var groups []*protocol.DescribeGroupsResponseGroup
	for _, a := range answers {
		for i := range a.Groups {
			groups = append(groups, &a.Groups[i])
		}
	}
	rank := func(g *protocol.DescribeGroupsResponseGroup) int {
		if i, ok := order[g.GroupID]; ok {
			return i
		}
		return len(req.GroupIDs)
	}
	sort.SliceStable(groups, func(i, j int) bool { return rank(groups[i]) < rank(groups[j]) })

	resp := &DescribeGroupsResponse{}
	for _, g := range groups {
		group, err := clientGroupsDescribed(g)
		if err != nil {
			return nil, fmt.Errorf("kafka.(*Client).DescribeGroups: group %q: %w", g.GroupID, err)
		}
		resp.Groups = append(resp.Groups, group)
	}
	return resp, nil
}

// clientGroupsDescribed converts one group of a DescribeGroups answer.
func clientGroupsDescribed(g *protocol.DescribeGroupsResponseGroup) (DescribeGroupsResponseGroup, error) {
	out := DescribeGroupsResponseGroup{
		Error:      makeError(g.ErrorCode, ""),
		GroupID:    g.GroupID,
		GroupState: g.GroupState,
	}
	consumer := g.ProtocolType == "consumer" || g.ProtocolType == ""
	for _, m := range g.Members {
		member := DescribeGroupsResponseMember{
			MemberID:   m.MemberID,
			ClientID:   m.ClientID,
			ClientHost: m.ClientHost,
		}
		if consumer {
			var err error
			if member.MemberMetadata, err = clientGroupsMemberMetadata(m.MemberMetadata); err != nil {
				return out, fmt.Errorf("member %q: metadata: %w", m.MemberID, err)
			}
			if member.MemberAssignments, err = clientGroupsMemberAssignment(m.MemberAssignment); err != nil {
				return out, fmt.Errorf("member %q: assignment: %w", m.MemberID, err)
			}
		}
		out.Members = append(out.Members, member)
	}
	return out, nil
}

// clientGroupsMemberMetadata decodes a consumer protocol subscription; no
// bytes mean no subscription.
func clientGroupsMemberMetadata(b []byte) (DescribeGroupsResponseMemberMetadata, error) {
	var md DescribeGroupsResponseMemberMetadata
	if len(b) == 0 {
		return md, nil
	}
	var s protocol.ConsumerProtocolSubscription
	if err := s.Decode(b); err != nil {
		return md, err
	}
	md.Version = int(s.Version)
	md.Topics = s.Topics
	md.UserData = s.UserData
	for _, tp := range s.OwnedPartitions {
		md.OwnedPartitions = append(md.OwnedPartitions, DescribeGroupsResponseMemberMetadataOwnedPartition{
			Topic:      tp.Topic,
			Partitions: clientIntsAs[int](tp.Partitions),
		})
	}
	return md, nil
}

// clientGroupsMemberAssignment decodes a consumer protocol assignment; no
// bytes (a member not yet synced) mean no assignment.
func clientGroupsMemberAssignment(b []byte) (DescribeGroupsResponseAssignments, error) {
	var as DescribeGroupsResponseAssignments
	if len(b) == 0 {
		return as, nil
	}
	var a protocol.ConsumerProtocolAssignment
	if err := a.Decode(b); err != nil {
		return as, err
	}
	as.Version = int(a.Version)
	as.UserData = a.UserData
	for _, tp := range a.AssignedPartitions {
		as.Topics = append(as.Topics, GroupMemberTopic{Topic: tp.Topic, Partitions: clientIntsAs[int](tp.Partitions)})
	}
	return as, nil
}

// ListGroupsRequest asks for the groups of a cluster.
type ListGroupsRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr
}

// ListGroupsResponse lists the groups of every broker.
type ListGroupsResponse struct {
	// Error is the first error a broker reported for its part of the list,
	// or nil. The groups of the other brokers are still listed.
	Error error

	// Groups lists the groups, those of the lowest broker id first.
	Groups []ListGroupsResponseGroup
}

// ListGroupsResponseGroup is one group of a cluster.
type ListGroupsResponseGroup struct {
	// GroupID is the group's id.
	GroupID string

	// Coordinator is the id of the broker coordinating the group.
	Coordinator int

	// ProtocolType is the group's protocol type ("consumer", "connect"...).
	ProtocolType string
}

// ListGroups lists the groups of the cluster: every broker is asked for the
// groups it coordinates and the answers are merged.
func (c *Client) ListGroups(ctx context.Context, req *ListGroupsRequest) (*ListGroupsResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).ListGroups: nil request")
	}
	addr, err := c.address(req.Addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	cl, err := c.metadata(ctx, addr, []string{})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).ListGroups: %w", err)
	}
	ids := make([]int32, 0, len(cl.brokers))
	for id := range cl.brokers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })

	answers := make([]*protocol.ListGroupsResponse, len(ids))
	err = clientEach(len(ids), func(i int) error {
		r, err := responseAs[*protocol.ListGroupsResponse](c.toBroker(ctx, cl, ids[i], &protocol.ListGroupsRequest{}))
		if err != nil {
			return err
		}
		answers[i] = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).ListGroups: %w", err)
	}

	resp := &ListGroupsResponse{}
	for i, a := range answers {
		if resp.Error == nil {
			resp.Error = makeError(a.ErrorCode, "")
		}
		for _, g := range a.Groups {
			resp.Groups = append(resp.Groups, ListGroupsResponseGroup{
				GroupID:      g.GroupID,
				Coordinator:  int(ids[i]),
				ProtocolType: g.ProtocolType,
			})
		}
	}
	return resp, nil
}

// DeleteGroupsRequest asks for groups to be deleted.
type DeleteGroupsRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// GroupIDs names the groups to delete.
	GroupIDs []string
}

// DeleteGroupsResponse is the outcome of a DeleteGroups call.
type DeleteGroupsResponse struct {
	// Throttle is how long a broker throttled the request (the longest,
	// when several coordinators were asked).
	Throttle time.Duration

	// Errors maps every group the brokers answered for to the error
	// deleting it, or nil when it was deleted. Use errors.Is to compare
	// them with Kafka errors (NonEmptyGroup, GroupIdNotFound...).
	Errors map[string]error
}

// DeleteGroups deletes groups. Only groups without members can be deleted.
// Unlike kafka-go's, which sends every group to the coordinator of the
// first, each group goes to its own coordinator (one request per
// coordinator).
func (c *Client) DeleteGroups(ctx context.Context, req *DeleteGroupsRequest) (*DeleteGroupsResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).DeleteGroups: nil request")
	}
	addr, err := c.address(req.Addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	answers, err := clientGroupsAsk[*protocol.DeleteGroupsResponse](ctx, c, addr, req.GroupIDs, func(groups []string) protocol.Request {
		return &protocol.DeleteGroupsRequest{GroupsNames: groups}
	})
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DeleteGroups: %w", err)
	}
	resp := &DeleteGroupsResponse{Errors: make(map[string]error, len(req.GroupIDs))}
	for _, a := range answers {
		resp.Throttle = max(resp.Throttle, clientThrottle(a.ThrottleTimeMs))
		for _, r := range a.Results {
			resp.Errors[r.GroupID] = makeError(r.ErrorCode, "")
		}
	}
	return resp, nil
}

// clientGroupsAsk asks each coordinator of groups, concurrently, about the
// groups it coordinates, with the request newReq builds for them, and
// returns the answers, one per coordinator.
func clientGroupsAsk[T protocol.Response](ctx context.Context, c *Client, addr net.Addr, groups []string, newReq func(groups []string) protocol.Request) ([]T, error) {
	batches, err := c.clientGroupsByCoordinator(ctx, addr, groups)
	if err != nil {
		return nil, err
	}
	answers := make([]T, len(batches))
	err = clientEach(len(batches), func(i int) error {
		b := batches[i]
		r, err := responseAs[T](c.roundTrip(ctx, brokerAddr(b.coordinator), newReq(b.groups)))
		answers[i] = r
		return err
	})
	if err != nil {
		return nil, err
	}
	return answers, nil
}

// clientGroupsBatch is the groups one coordinator is asked about.
type clientGroupsBatch struct {
	coordinator Broker
	groups      []string
}

// clientGroupsByCoordinator finds the coordinator of every group and groups
// them by coordinator, in the order the groups first appear.
func (c *Client) clientGroupsByCoordinator(ctx context.Context, addr net.Addr, groups []string) ([]clientGroupsBatch, error) {
	unique := clientGroupsUnique(groups)
	coordinators := make([]Broker, len(unique))
	err := clientEach(len(unique), func(i int) error {
		b, err := c.findCoordinator(ctx, addr, unique[i], protocol.CoordinatorKeyTypeGroup)
		coordinators[i] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	var batches []clientGroupsBatch
	index := map[int]int{}
	for i, g := range unique {
		b := coordinators[i]
		j, ok := index[b.ID]
		if !ok {
			j = len(batches)
			index[b.ID] = j
			batches = append(batches, clientGroupsBatch{coordinator: b})
		}
		batches[j].groups = append(batches[j].groups, g)
	}
	return batches, nil
}

// clientGroupsUnique returns ids without repeats, in order.
func clientGroupsUnique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// clientGroupsInt32s is clientIntsAs except that nil gives an empty list:
// consumer protocol partition lists are never null.
func clientGroupsInt32s(s []int) []int32 {
	if s == nil {
		return []int32{}
	}
	return clientIntsAs[int32](s)
}
