package group

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/stretchr/testify/require"
)

// fakeCoordinator answers a one-member group: the member leads, partition
// 0 of topic t has offset 5 committed, heartbeats answer hbCode.
type fakeCoordinator struct {
	hbCode atomic.Int32

	mu         sync.Mutex
	generation int32
	commits    []*protocol.OffsetCommitRequest
	leaves     []*protocol.LeaveGroupRequest
}

func (c *fakeCoordinator) handle(req protocol.Request) (protocol.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r := req.(type) {
	case *protocol.JoinGroupRequest:
		c.generation++
		return &protocol.JoinGroupResponse{GenerationID: c.generation, MemberID: "m", Leader: "m", ProtocolName: r.Protocols[0].Name,
			Members: []protocol.JoinGroupResponseMember{{MemberID: "m", Metadata: r.Protocols[0].Metadata}}}, nil
	case *protocol.SyncGroupRequest:
		var a []byte
		for _, p := range r.Assignments {
			if p.MemberID == r.MemberID {
				a = p.Assignment
			}
		}
		return &protocol.SyncGroupResponse{Assignment: a}, nil
	case *protocol.OffsetFetchRequest:
		// The fake conn answers at v4: the top-level topics.
		return &protocol.OffsetFetchResponse{Topics: []protocol.OffsetFetchResponseTopic{
			{Name: "t", Partitions: []protocol.OffsetFetchResponsePartition{{PartitionIndex: 0, CommittedOffset: 5}, {PartitionIndex: 1, CommittedOffset: -1}}},
		}}, nil
	case *protocol.HeartbeatRequest:
		return &protocol.HeartbeatResponse{ErrorCode: int16(c.hbCode.Load())}, nil
	case *protocol.OffsetCommitRequest:
		c.commits = append(c.commits, r)
		resp := &protocol.OffsetCommitResponse{}
		for _, t := range r.Topics {
			rt := protocol.OffsetCommitResponseTopic{Name: t.Name}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, protocol.PartitionError{PartitionIndex: p.PartitionIndex})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	case *protocol.LeaveGroupRequest:
		c.leaves = append(c.leaves, r)
		return &protocol.LeaveGroupResponse{}, nil
	}
	return nil, nil
}

func nextWithin(t *testing.T, g *Group, d time.Duration) *Generation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	gen, err := g.Next(ctx)
	require.NoError(t, err)
	return gen
}

// A member joins, leads, starts at the committed offset (else
// StartOffset), commits, loses its generation to a rebalance, joins the
// next one, and leaves on Close, after which the old generation refuses
// commits.
func TestGroupLifecycle(t *testing.T) {
	co := &fakeCoordinator{}
	fc := &fakeCluster{coordinator: co.handle, partitions: map[string]int{"t": 2}}
	g := New(Config{
		ID: "g", Topics: []string{"t"}, HeartbeatInterval: 5 * time.Millisecond, SessionTimeout: 10 * time.Second,
		RebalanceTimeout: time.Second, JoinGroupBackoff: 10 * time.Millisecond, RetentionTime: DefaultRetentionTime,
		Timeout: time.Second, StartOffset: FirstOffset,
	}, Deps{Cluster: fc, Balancers: &fakeBalancers{names: []string{"range"}, partitions: fc.partitions}, Errors: fakeErrors{}, Log: nopLog{}, Failures: &fakeFailures{}})
	closed := false
	defer func() {
		if !closed {
			g.Close()
		}
	}()

	gen := nextWithin(t, g, 5*time.Second)
	require.Equal(t, int32(1), gen.ID)
	require.Equal(t, map[string][]Assignment{"t": {{ID: 0, Offset: 5}, {ID: 1, Offset: FirstOffset}}}, gen.Assignments)
	require.NoError(t, gen.CommitOffsets(map[string]map[int]int64{"t": {1: 7}}, false))
	co.mu.Lock()
	require.Len(t, co.commits, 1)
	require.Equal(t, int32(1), co.commits[0].GenerationID)
	co.mu.Unlock()

	co.hbCode.Store(int32(codeRebalanceInProgress))
	select {
	case <-gen.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the generation did not end on RebalanceInProgress")
	}
	require.ErrorIs(t, gen.EndReason(), codeError(codeRebalanceInProgress))
	co.hbCode.Store(0)
	gen2 := nextWithin(t, g, 5*time.Second)
	require.Greater(t, gen2.ID, gen.ID)

	g.Close()
	closed = true
	_, err := g.Next(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, gen2.CommitOffsets(map[string]map[int]int64{"t": {0: 1}}, false), ErrGenerationEnded)
	co.mu.Lock()
	defer co.mu.Unlock()
	require.Len(t, co.leaves, 1)
	require.Equal(t, "m", co.leaves[0].Members[0].MemberID)
}
