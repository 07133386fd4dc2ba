package kafka

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// testControlTimeout replaces the control deadline in these tests so that
// a stall costs little time; margins below are generous for a loaded CI.
const testControlTimeout = 300 * time.Millisecond

// freezeBroker makes b hold its answers to the given requests, as a
// SIGSTOPped broker does (the TCP connection stays up, nothing comes
// back), until the returned function is called (also at cleanup).
func freezeBroker(t *testing.T, b *fakebroker.Broker, keys ...protocol.ApiKey) (resume func()) {
	t.Helper()
	ch := make(chan struct{})
	for _, key := range keys {
		b.Handle(key, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			return b.Default(req, hdr), fakebroker.Action{Wait: ch}
		})
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			for _, key := range keys {
				b.Handle(key, nil)
			}
			close(ch)
		})
	}
	t.Cleanup(resume)
	return resume
}

// newTestCluster returns a cluster view of a 3-broker fake cluster with
// topic "t" (3 partitions, replicas on all brokers, partition p led by
// broker p+1), whose control connection is open to broker 1.
func newTestCluster(t *testing.T) (*fakebroker.Cluster, *cluster) {
	t.Helper()
	fc := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}})
	fc.CreateTopic("t", 3, 3)
	cl := newCluster(&Dialer{Timeout: 10 * time.Second}, fc.Addrs())
	cl.timeout = testControlTimeout
	t.Cleanup(cl.close)
	ctx := context.Background()
	require.NoError(t, cl.refresh(ctx, "t")) // from a bootstrap address
	require.NoError(t, cl.refresh(ctx, "t")) // from broker 1, now known
	require.Equal(t, 1, cl.controlTargets()[0].id, "the control connection should be to broker 1")
	return fc, cl
}

func TestClusterRefreshMovesOnFromFrozenBroker(t *testing.T) {
	fc, cl := newTestCluster(t)
	freezeBroker(t, fc.Broker(1), protocol.Metadata, protocol.ApiVersions)
	epoch := fc.SetLeader("t", 0, 2)
	before := fc.Broker(2).Requests(protocol.Metadata) + fc.Broker(3).Requests(protocol.Metadata)

	// The caller's context has no deadline, as a Reader's fetcher's.
	start := time.Now()
	require.NoError(t, cl.refresh(context.Background(), "t"))
	took := time.Since(start)
	t.Logf("refresh with the control broker frozen took %v (deadline %v)", took, testControlTimeout)
	assert.GreaterOrEqual(t, took, testControlTimeout, "broker 1 was asked first")
	assert.Less(t, took, testControlTimeout+time.Second, "refresh waited past the deadline")
	p, ok := cl.partition("t", 0)
	require.True(t, ok)
	assert.Equal(t, 2, p.Leader.ID)
	assert.Equal(t, int(epoch), p.LeaderEpoch)
	assert.Greater(t, fc.Broker(2).Requests(protocol.Metadata)+fc.Broker(3).Requests(protocol.Metadata), before)

	// Broker 1 is now remembered as unresponsive: asked last, not first.
	targets := cl.controlTargets()
	assert.Equal(t, 1, targets[len(targets)-1].id, "frozen broker should be tried last: %v", targets)
	start = time.Now()
	require.NoError(t, cl.refresh(context.Background(), "t"))
	assert.Less(t, time.Since(start), testControlTimeout, "the next refresh went to the frozen broker again")
}

// A broker that restarted closed the kept control connection: the next
// control request there goes again on a fresh connection, and the broker
// is not taken for unresponsive (asked last for a while); a leader-only
// request succeeds at once.
func TestClusterControlRetriesClosedKeptConnection(t *testing.T) {
	fc, cl := newTestCluster(t)
	b := fc.Broker(1)
	closeConn := fakebroker.Step{Action: fakebroker.Action{Close: true}}
	conns := b.Requests(protocol.ApiVersions)

	b.ScriptNext(protocol.Metadata, closeConn)
	require.NoError(t, cl.refresh(context.Background(), "t"))
	assert.Equal(t, conns+1, b.Requests(protocol.ApiVersions), "a fresh connection to broker 1")
	assert.Equal(t, 1, cl.controlTargets()[0].id, "broker 1 is still asked first")

	b.ScriptNext(protocol.ListOffsets, closeConn)
	err := cl.atLeader(context.Background(), "t", 0, func(ctx context.Context, c *Conn, p Partition) error {
		_, _, err := c.roundTrip(ctx, &protocol.ListOffsetsRequest{ReplicaID: -1, Topics: []protocol.ListOffsetsRequestTopic{{
			Name: "t", Partitions: []protocol.ListOffsetsRequestPartition{{PartitionIndex: 0, CurrentLeaderEpoch: int32(p.LeaderEpoch), Timestamp: LastOffset}},
		}}}, -1)
		return err
	})
	require.NoError(t, err, "ListOffsets at the leader whose kept connection was closed")
	assert.Equal(t, conns+2, b.Requests(protocol.ApiVersions))
}

func TestClusterControlDialUnderDeadline(t *testing.T) {
	fc := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	fc.CreateTopic("t", 1, 2)
	// Broker 1 accepts connections but never answers ApiVersions.
	freezeBroker(t, fc.Broker(1), protocol.ApiVersions)
	cl := newCluster(&Dialer{}, fc.Addrs()) // no Dialer.Timeout: no dial bound of its own
	cl.timeout = testControlTimeout
	t.Cleanup(cl.close)

	start := time.Now()
	require.NoError(t, cl.refresh(context.Background(), "t"))
	took := time.Since(start)
	assert.Less(t, took, testControlTimeout+time.Second)
	assert.GreaterOrEqual(t, fc.Broker(1).Requests(protocol.ApiVersions), 1, "broker 1 was not asked first")
	assert.GreaterOrEqual(t, fc.Broker(2).Requests(protocol.Metadata), 1)
	_, ok := cl.partition("t", 0)
	assert.True(t, ok)
}

func TestClusterWithControlClosesStalledConnection(t *testing.T) {
	fc, cl := newTestCluster(t)
	freezeBroker(t, fc.Broker(1), protocol.FindCoordinator, protocol.ApiVersions)

	// fn waits on a context of its own that never expires (as a caller of
	// withControl may): the stalled connection is closed under it.
	var answeredBy int
	start := time.Now()
	err := cl.withControl(context.Background(), func(c *Conn) error {
		resp, _, err := c.roundTrip(context.Background(), &protocol.FindCoordinatorRequest{
			CoordinatorKey: "g", CoordinatorKeys: []string{"g"},
		}, -1)
		if err == nil {
			_ = resp.(*protocol.FindCoordinatorResponse)
			answeredBy = int(c.broker)
		}
		return err
	})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), testControlTimeout+time.Second)
	assert.NotEqual(t, 1, answeredBy)
}

func TestClusterAtLeaderFailsFastOnFrozenLeader(t *testing.T) {
	fc, cl := newTestCluster(t)
	freezeBroker(t, fc.Broker(1), protocol.ListOffsets, protocol.ApiVersions)

	start := time.Now()
	err := cl.atLeader(context.Background(), "t", 0, func(ctx context.Context, c *Conn, p Partition) error {
		_, _, err := c.roundTrip(ctx, &protocol.ListOffsetsRequest{ReplicaID: -1, Topics: []protocol.ListOffsetsRequestTopic{{
			Name: "t", Partitions: []protocol.ListOffsetsRequestPartition{{PartitionIndex: 0, CurrentLeaderEpoch: int32(p.LeaderEpoch), Timestamp: LastOffset}},
		}}}, -1)
		return err
	})
	took := time.Since(start)
	require.Error(t, err)
	assert.True(t, errors.Is(err, RequestTimedOut), "want RequestTimedOut, got %v", err)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "the caller's context did not expire: %v", err)
	assert.True(t, retriableLeaderError(err))
	assert.GreaterOrEqual(t, took, testControlTimeout)
	assert.Less(t, took, testControlTimeout+time.Second)
}

func TestReaderListOffsetFollowsLeaderAwayFromFrozenBroker(t *testing.T) {
	fc, _ := newTestCluster(t)
	r := NewReader(ReaderConfig{Brokers: fc.Addrs(), Topic: "t", Partition: 0})
	defer r.Close()
	r.cluster.timeout = testControlTimeout
	ctx := context.Background()
	_, err := r.listOffset(ctx, "t", 0, LastOffset) // warm the cache: leader 1
	require.NoError(t, err)

	// Broker 1 freezes; the controller moves leadership to broker 2.
	freezeBroker(t, fc.Broker(1), protocol.ListOffsets, protocol.Metadata, protocol.ApiVersions)
	fc.SetLeader("t", 0, 2)
	before := fc.Broker(2).Requests(protocol.ListOffsets)
	start := time.Now()
	_, err = r.listOffset(ctx, "t", 0, LastOffset)
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("ListOffsets with the leader frozen answered in %v", took)
	assert.Less(t, took, 2*testControlTimeout+time.Second)
	assert.Greater(t, fc.Broker(2).Requests(protocol.ListOffsets), before, "the new leader was not asked")
}

func TestClusterRecreatedTopicOnFakeBroker(t *testing.T) {
	fc := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3})
	fc.CreateTopic("t", 2, 3)
	cl := newCluster(nil, fc.Addrs())
	t.Cleanup(cl.close)
	ctx := context.Background()
	fc.SetLeader("t", 0, 2)
	fc.SetLeader("t", 0, 3) // epoch 2
	require.NoError(t, cl.refresh(ctx, "t"))
	oldID, gen := cl.topicID("t")
	assert.Equal(t, fc.TopicID("t"), oldID)
	assert.Equal(t, 1, gen)
	p, _ := cl.partition("t", 0)
	require.Equal(t, 2, p.LeaderEpoch)

	// Deleted and created again with one partition: epochs restart at 0.
	fc.DeleteTopic("t")
	fc.CreateTopic("t", 1, 3)
	require.NoError(t, cl.refresh(ctx, "t"))
	newID, gen := cl.topicID("t")
	assert.Equal(t, fc.TopicID("t"), newID)
	assert.NotEqual(t, oldID, newID)
	assert.Equal(t, 2, gen)
	p, ok := cl.partition("t", 0)
	require.True(t, ok)
	assert.Equal(t, 0, p.LeaderEpoch)
	assert.Equal(t, 1, p.Leader.ID)
	ps, _ := cl.topicPartitions("t")
	assert.Len(t, ps, 1, "a partition of the deleted topic is still listed")
}

func TestControlTimeout(t *testing.T) {
	for _, tt := range []struct {
		dial time.Duration
		want time.Duration
	}{
		{0, 3 * time.Second},
		{10 * time.Second, 2500 * time.Millisecond},
		{30 * time.Second, 3 * time.Second},
		{2 * time.Second, time.Second},
		{500 * time.Millisecond, 500 * time.Millisecond},
	} {
		assert.Equal(t, tt.want, controlTimeout(&Dialer{Timeout: tt.dial}), "Dialer.Timeout %v", tt.dial)
	}
	assert.Equal(t, defaultControlTimeout, controlTimeout(nil))
}
