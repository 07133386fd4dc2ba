package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// ElectLeadersRequest asks the controller to give partitions of a topic
// back to their preferred leader (the first replica of each).
type ElectLeadersRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topic is the topic whose partitions are elected.
	Topic string

	// Partitions are the partitions to elect a leader for (none when
	// empty).
	Partitions []int

	// Timeout is how long the controller may take to elect them; zero
	// sends 0.
	Timeout time.Duration
}

// ElectLeadersResponse is the controller's answer to an
// ElectLeadersRequest.
type ElectLeadersResponse struct {
	// Error is the kafka.Error the whole request failed with at the
	// controller (such as ClusterAuthorizationFailed), or nil.
	Error error

	// PartitionResults holds the outcome for every partition.
	PartitionResults []ElectLeadersResponsePartitionResult
}

// ElectLeadersResponsePartitionResult is the outcome for one partition.
type ElectLeadersResponsePartitionResult struct {
	// Partition is the partition's id.
	Partition int

	// Error is nil when the preferred leader was elected, else its
	// kafka.Error: ElectionNotNeeded when it already led, for instance.
	Error error
}

// ElectLeaders runs a preferred leader election at the controller.
// Failures are in the response; the error is for the request as a whole.
func (c *Client) ElectLeaders(ctx context.Context, req *ElectLeadersRequest) (*ElectLeadersResponse, error) {
	if req == nil {
		return nil, errors.New("electing leaders: nil request")
	}
	partitions := clientIntsAs[int32](req.Partitions)
	if partitions == nil {
		// An empty list, never null: null would mean every partition of
		// the cluster.
		partitions = []int32{}
	}
	preq := &protocol.ElectLeadersRequest{
		ElectionType:    protocol.ElectionTypePreferred,
		TopicPartitions: []protocol.ElectLeadersRequestTopic{{Topic: req.Topic, Partitions: partitions}},
		TimeoutMs:       protocol.Millis(req.Timeout),
	}

	resp, err := responseAs[*protocol.ElectLeadersResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("electing leaders of %q: %w", req.Topic, err)
	}
	out := &ElectLeadersResponse{Error: errorFromCode(resp.ErrorCode)}
	for _, t := range resp.ReplicaElectionResults {
		for _, p := range t.PartitionResult {
			out.PartitionResults = append(out.PartitionResults, ElectLeadersResponsePartitionResult{
				Partition: int(p.PartitionID),
				Error:     makeError(p.ErrorCode, deref(p.ErrorMessage)),
			})
		}
	}
	return out, nil
}

// AlterPartitionReassignmentsRequest moves partitions' replicas to other
// brokers, or cancels moves in progress (KIP-455).
type AlterPartitionReassignmentsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topic is the topic of the assignments that name none.
	Topic string

	// Assignments are the partitions to move.
	Assignments []AlterPartitionReassignmentsRequestAssignment

	// Timeout is how long the controller may take to start the moves; zero
	// sends 0.
	Timeout time.Duration
}

// AlterPartitionReassignmentsRequestAssignment is the new replica set of
// one partition.
type AlterPartitionReassignmentsRequestAssignment struct {
	// Topic is the partition's topic; empty means the request's Topic.
	Topic string

	// PartitionID is the partition's id.
	PartitionID int

	// BrokerIDs is the partition's new replica set, the preferred leader
	// first; nil cancels the partition's reassignment in progress.
	BrokerIDs []int
}

// AlterPartitionReassignmentsResponse is the controller's answer to an
// AlterPartitionReassignmentsRequest.
type AlterPartitionReassignmentsResponse struct {
	// Error is the kafka.Error the whole request failed with, or nil.
	Error error

	// PartitionResults holds the outcome for every partition.
	PartitionResults []AlterPartitionReassignmentsResponsePartitionResult
}

// AlterPartitionReassignmentsResponsePartitionResult is the outcome for
// one partition.
type AlterPartitionReassignmentsResponsePartitionResult struct {
	// Topic and PartitionID name the partition.
	Topic       string
	PartitionID int

	// Error is nil when the move started (or was cancelled), else its
	// kafka.Error, possibly wrapped with the controller's message.
	Error error
}

// AlterPartitionReassignments starts (or cancels) replica moves at the
// controller. The moves go on after the call returns: see
// ListPartitionReassignments. Failures are in the response; the error is
// for the request as a whole.
func (c *Client) AlterPartitionReassignments(ctx context.Context, req *AlterPartitionReassignmentsRequest) (*AlterPartitionReassignmentsResponse, error) {
	if req == nil {
		return nil, errors.New("altering partition reassignments: nil request")
	}
	preq := &protocol.AlterPartitionReassignmentsRequest{TimeoutMs: protocol.Millis(req.Timeout)}
	pos := map[string]int{} // topic's index in preq.Topics, in order of first use
	for _, a := range req.Assignments {
		topic := a.Topic
		if topic == "" {
			topic = req.Topic
		}
		k, ok := pos[topic]
		if !ok {
			k = len(preq.Topics)
			pos[topic] = k
			preq.Topics = append(preq.Topics, protocol.AlterPartitionReassignmentsRequestTopic{Name: topic})
		}
		preq.Topics[k].Partitions = append(preq.Topics[k].Partitions, protocol.AlterPartitionReassignmentsRequestPartition{
			PartitionIndex: int32(a.PartitionID),
			Replicas:       clientIntsAs[int32](a.BrokerIDs), // nil: null, a cancellation
		})
	}

	resp, err := responseAs[*protocol.AlterPartitionReassignmentsResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("altering partition reassignments: %w", err)
	}
	out := &AlterPartitionReassignmentsResponse{Error: makeError(resp.ErrorCode, deref(resp.ErrorMessage))}
	for _, t := range resp.Responses {
		for _, p := range t.Partitions {
			out.PartitionResults = append(out.PartitionResults, AlterPartitionReassignmentsResponsePartitionResult{
				Topic:       t.Name,
				PartitionID: int(p.PartitionIndex),
				Error:       makeError(p.ErrorCode, deref(p.ErrorMessage)),
			})
		}
	}
	return out, nil
}

// ListPartitionReassignmentsRequest asks which replica moves are in
// progress.
type ListPartitionReassignmentsRequest struct {
	// Addr is the cluster to send the request to; nil means Client.Addr.
	Addr net.Addr

	// Topics are the partitions to look at, by topic name; empty means
	// every partition of the cluster.
	Topics map[string]ListPartitionReassignmentsRequestTopic

	// Timeout is how long the controller may take to answer; zero sends 0.
	Timeout time.Duration
}

// ListPartitionReassignmentsRequestTopic is the partitions of one topic to
// look at.
type ListPartitionReassignmentsRequestTopic struct {
	PartitionIndexes []int
}

// ListPartitionReassignmentsResponse is the controller's answer to a
// ListPartitionReassignmentsRequest.
type ListPartitionReassignmentsResponse struct {
	// Error is the kafka.Error the whole request failed with, or nil.
	Error error

	// Topics holds the partitions being moved, by topic name. Partitions
	// not being moved are left out.
	Topics map[string]ListPartitionReassignmentsResponseTopic
}

// ListPartitionReassignmentsResponseTopic is the moves of one topic.
type ListPartitionReassignmentsResponseTopic struct {
	Partitions []ListPartitionReassignmentsResponsePartition
}

// ListPartitionReassignmentsResponsePartition is the move of one
// partition.
type ListPartitionReassignmentsResponsePartition struct {
	// PartitionIndex is the partition's id.
	PartitionIndex int

	// Replicas is the current replica set, old and new replicas together.
	Replicas []int

	// AddingReplicas are the replicas being added, RemovingReplicas those
	// that go once the new ones are in sync.
	AddingReplicas   []int
	RemovingReplicas []int
}

// ListPartitionReassignments lists the replica moves in progress, as the
// controller knows them. The error is for the request as a whole.
func (c *Client) ListPartitionReassignments(ctx context.Context, req *ListPartitionReassignmentsRequest) (*ListPartitionReassignmentsResponse, error) {
	if req == nil {
		return nil, errors.New("listing partition reassignments: nil request")
	}
	preq := &protocol.ListPartitionReassignmentsRequest{TimeoutMs: protocol.Millis(req.Timeout)}
	for _, name := range clientSortedKeys(req.Topics) {
		preq.Topics = append(preq.Topics, protocol.ListPartitionReassignmentsRequestTopic{
			Name:             name,
			PartitionIndexes: clientIntsAs[int32](req.Topics[name].PartitionIndexes),
		})
	}

	resp, err := responseAs[*protocol.ListPartitionReassignmentsResponse](c.sendToController(ctx, req.Addr, preq))
	if err != nil {
		return nil, fmt.Errorf("listing partition reassignments: %w", err)
	}
	out := &ListPartitionReassignmentsResponse{
		Error:  makeError(resp.ErrorCode, deref(resp.ErrorMessage)),
		Topics: make(map[string]ListPartitionReassignmentsResponseTopic, len(resp.Topics)),
	}
	for _, t := range resp.Topics {
		var rt ListPartitionReassignmentsResponseTopic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, ListPartitionReassignmentsResponsePartition{
				PartitionIndex:   int(p.PartitionIndex),
				Replicas:         clientIntsAs[int](p.Replicas),
				AddingReplicas:   clientIntsAs[int](p.AddingReplicas),
				RemovingReplicas: clientIntsAs[int](p.RemovingReplicas),
			})
		}
		out.Topics[t.Name] = rt
	}
	return out, nil
}
