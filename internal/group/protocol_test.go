package group

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/stretchr/testify/require"
)

// A coordinator that requires a member id (KIP-394) names one to rejoin
// with; one that forgot the member's id gets a join without it.
func TestGroupJoinMemberIDRounds(t *testing.T) {
	answers := []*protocol.JoinGroupResponse{
		{ErrorCode: codeUnknownMemberID},
		{ErrorCode: codeMemberIDRequired, MemberID: "m-2"},
		{GenerationID: 3, MemberID: "m-2", Leader: "m-2", ProtocolName: "range"},
	}
	conn := &scriptConn{handle: func(req protocol.Request) (protocol.Response, error) {
		r := answers[0]
		answers = answers[1:]
		return r, nil
	}}
	g := newTestGroup(Config{ID: "g", Topics: []string{"b", "a"}}, Deps{Balancers: &fakeBalancers{names: []string{"range"}}})
	g.memberID = "m-1"
	join, err := g.joinGroup(context.Background(), conn)
	require.NoError(t, err)
	require.Equal(t, int32(3), join.GenerationID)
	require.Equal(t, "m-2", g.memberID)
	var sent []string
	for _, req := range conn.requests() {
		r := req.(*protocol.JoinGroupRequest)
		require.Equal(t, ProtocolType, r.ProtocolType)
		require.Len(t, r.Protocols, 1)
		var sub protocol.ConsumerProtocolSubscription
		require.NoError(t, sub.Decode(r.Protocols[0].Metadata))
		require.Equal(t, []string{"a", "b"}, sub.Topics, "the subscription's topics are sorted")
		sent = append(sent, r.MemberID)
	}
	require.Equal(t, []string{"m-1", "", "m-2"}, sent, "member ids of the three rounds")
}

// Other join errors are returned at once, wrapped with the member id.
func TestGroupJoinError(t *testing.T) {
	conn := &scriptConn{handle: func(protocol.Request) (protocol.Response, error) {
		return &protocol.JoinGroupResponse{ErrorCode: codeRebalanceInProgress}, nil
	}}
	g := newTestGroup(Config{ID: "g"}, Deps{Balancers: &fakeBalancers{}})
	_, err := g.joinGroup(context.Background(), conn)
	require.ErrorIs(t, err, codeError(codeRebalanceInProgress))
	require.EqualError(t, err, `joining group g as member "": error code 27`)
	require.Len(t, conn.requests(), 1)
}

// The member's partitions come back sorted and without repeats; an empty
// assignment is no partition.
func TestGroupSyncAssignment(t *testing.T) {
	a := protocol.ConsumerProtocolAssignment{AssignedPartitions: []protocol.ConsumerProtocolTopicPartitions{
		{Topic: "t", Partitions: []int32{3, 1, 3}},
		{Topic: "u", Partitions: []int32{0}},
		{Topic: "t", Partitions: []int32{0}},
	}}
	assignment := a.AppendTo(nil)
	conn := &scriptConn{handle: func(protocol.Request) (protocol.Response, error) {
		return &protocol.SyncGroupResponse{Assignment: assignment}, nil
	}}
	g := newTestGroup(Config{ID: "g"}, Deps{})
	join := &protocol.JoinGroupResponse{GenerationID: 2, MemberID: "m", ProtocolName: "range"}
	got, err := g.syncGroup(context.Background(), conn, join, nil)
	require.NoError(t, err)
	require.Equal(t, map[string][]int{"t": {0, 1, 3}, "u": {0}}, got)

	assignment = nil
	got, err = g.syncGroup(context.Background(), conn, join, nil)
	require.NoError(t, err)
	require.Empty(t, got)
}

// One refused code is that error; several are joined, each naming its
// partition.
func TestGroupCommitErrors(t *testing.T) {
	var answer *protocol.OffsetCommitResponse
	conn := &scriptConn{handle: func(protocol.Request) (protocol.Response, error) { return answer, nil }}
	g := newTestGroup(Config{ID: "g", RetentionTime: DefaultRetentionTime}, Deps{})
	gen := newGeneration(g, 1, "m")
	offsets := map[string]map[int]int64{"t": {0: 1, 1: 2}}

	answer = &protocol.OffsetCommitResponse{Topics: []protocol.OffsetCommitResponseTopic{{Name: "t", Partitions: []protocol.PartitionError{{PartitionIndex: 0}, {PartitionIndex: 1}}}}}
	require.NoError(t, gen.commit(context.Background(), conn, offsets))

	answer.Topics[0].Partitions[0].ErrorCode = codeIllegalGeneration
	answer.Topics[0].Partitions[1].ErrorCode = codeIllegalGeneration
	err := gen.commit(context.Background(), conn, offsets)
	require.Equal(t, codeError(codeIllegalGeneration), err, "one code: that error itself")

	answer.Topics[0].Partitions[1].ErrorCode = codeUnknownMemberID
	err = gen.commit(context.Background(), conn, offsets)
	require.ErrorIs(t, err, codeError(codeIllegalGeneration))
	require.ErrorIs(t, err, codeError(codeUnknownMemberID))
	require.Contains(t, err.Error(), "committing the offset of t/1: error code 25")

	r := conn.requests()[0].(*protocol.OffsetCommitRequest)
	require.Equal(t, int64(-1), r.RetentionTimeMs)
	require.Len(t, r.Topics, 1)
	require.Equal(t, []int32{0, 1}, []int32{r.Topics[0].Partitions[0].PartitionIndex, r.Topics[0].Partitions[1].PartitionIndex})
}

// FindCoordinator reads the top-level answer before v4 and the key's
// answer from v4; an error code carries the broker's message.
func TestFindCoordinatorVersions(t *testing.T) {
	msg := "loading"
	for _, tc := range []struct {
		name string
		v    int16
		resp *protocol.FindCoordinatorResponse
		want Coordinator
		err  string
	}{
		{"v3", 3, &protocol.FindCoordinatorResponse{NodeID: 2, Host: "h2", Port: 9092}, Coordinator{2, "h2", 9092}, ""},
		{"v4", 4, &protocol.FindCoordinatorResponse{Coordinators: []protocol.FindCoordinatorResponseCoordinator{{CoordinatorKey: "g", NodeID: 3, Host: "h3", Port: 9093}}}, Coordinator{3, "h3", 9093}, ""},
		{"v4 empty", 4, &protocol.FindCoordinatorResponse{}, Coordinator{}, "FindCoordinator answered without a coordinator"},
		{"v3 error", 3, &protocol.FindCoordinatorResponse{ErrorCode: codeCoordinatorNotAvailable, ErrorMessage: &msg}, Coordinator{}, "error code 15: loading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &scriptConn{v: tc.v, handle: func(protocol.Request) (protocol.Response, error) { return tc.resp, nil }}
			got, err := FindCoordinator(context.Background(), conn, "g", fakeErrors{})
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			r := conn.requests()[0].(*protocol.FindCoordinatorRequest)
			require.Equal(t, "g", r.CoordinatorKey)
			require.Equal(t, []string{"g"}, r.CoordinatorKeys)
		})
	}
}

// The coordinator connection is reused until it breaks or is dropped; a
// drop of a connection already replaced keeps the new one; an
// authorization failure is not retried.
func TestGroupCoordinatorConnection(t *testing.T) {
	fc := &fakeCluster{}
	g := newTestGroup(Config{ID: "g", Timeout: 5 * time.Second}, Deps{Cluster: fc, Failures: &fakeFailures{}})
	ctx := context.Background()
	c1, err := g.coordinator(ctx)
	require.NoError(t, err)
	c2, err := g.coordinator(ctx)
	require.NoError(t, err)
	require.Same(t, c1, c2)
	require.Equal(t, 1, fc.dialCount())

	c1.Close() // broken
	c3, err := g.coordinator(ctx)
	require.NoError(t, err)
	require.NotSame(t, c1, c3)
	g.dropCoordinatorConn(c1)
	c4, _ := g.coordinator(ctx)
	require.Same(t, c3, c4, "dropping a replaced connection keeps the current one")
	g.dropCoordinatorConn(c3)
	require.True(t, c3.Broken())
	require.Equal(t, 2, fc.dialCount())

	g.dropCoordinator()
	fc.setDialErr(codeError(codeGroupAuthorizationFailed))
	_, err = g.coordinator(ctx)
	require.EqualError(t, err, "finding the coordinator of group g: error code 30")
	require.Equal(t, 3, fc.dialCount(), "an authorization failure is not retried")
}

// A lookup that fails for a moment is retried, and the failure is
// remembered for a caller whose context ends meanwhile.
func TestGroupCoordinatorRetried(t *testing.T) {
	fc := &fakeCluster{}
	fails := &fakeFailures{}
	fc.setDialErr(codeError(codeCoordinatorNotAvailable))
	fc.failDials = 2
	g := newTestGroup(Config{ID: "g", Timeout: 5 * time.Second}, Deps{Cluster: fc, Failures: fails})
	_, err := g.coordinator(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, fc.dialCount())
	require.True(t, errors.Is(fails.last(), codeError(codeCoordinatorNotAvailable)), "remembered: %v", fails.last())
}
