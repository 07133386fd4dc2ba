package kafka

// A group Reader whose coordinator freezes, on the fake brokers: the
// partitions keep being fetched and delivered in the same generation, and
// heartbeats resume at the coordinator looked up again.

import (
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/require"
)

// Broker 1, the coordinator (and leader of partition 0), freezes: group
// requests and its fetches get no answer. Messages written to partition 1
// (led by broker 2) meanwhile are delivered while it is still frozen, in
// the same generation. When it wakes up it no longer coordinates the group
// (NotCoordinator, as Kafka answers once the group moved): the member looks
// the coordinator up again, heartbeats go to broker 2, nothing rejoins.
func TestReaderGroupFrozenCoordinatorKeepsFetching(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{Brokers: 2}, 2, 1)
	b1, b2 := c.Broker(1), c.Broker(2)
	rtAppend(c, 0, 0, 3)
	rtAppend(c, 1, 0, 3)
	r := rtGroupReader(t, c, "rgc-frozen", func(cfg *ReaderConfig) {
		cfg.SessionTimeout = 10 * time.Second
	})
	ctx := rtCtx(t)
	next := map[int]int64{}
	read := func(part int, upTo int64) {
		t.Helper()
		for next[part] < upTo {
			m, err := r.FetchMessage(ctx)
			require.NoError(t, err)
			require.Equal(t, next[m.Partition], m.Offset, "partition %d", m.Partition)
			next[m.Partition] = m.Offset + 1
		}
	}
	read(0, 3)
	read(1, 3)
	gen := rsGeneration(r)
	require.GreaterOrEqual(t, gen, int32(0))
	joins := b1.Requests(protocol.JoinGroup)
	cgWait(t, b1.Await(protocol.Heartbeat, b1.Requests(protocol.Heartbeat)+2), 5*time.Second, "heartbeats before the freeze")

	release := make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	for _, key := range []protocol.ApiKey{protocol.Heartbeat, protocol.OffsetCommit, protocol.FindCoordinator} {
		b1.Handle(key, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := b1.Default(req, hdr)
			switch resp := resp.(type) {
			case *protocol.HeartbeatResponse:
				resp.ErrorCode = int16(NotCoordinatorForGroup)
			case *protocol.OffsetCommitResponse:
				for i := range resp.Topics {
					for j := range resp.Topics[i].Partitions {
						resp.Topics[i].Partitions[j].ErrorCode = int16(NotCoordinatorForGroup)
					}
				}
			}
			return resp, fakebroker.Action{Wait: release}
		})
	}
	b1.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return b1.Default(req, hdr), fakebroker.Action{Wait: release}
	})
	frozen := b1.Requests(protocol.Heartbeat)
	cgWait(t, b1.Await(protocol.Heartbeat, frozen+1), 5*time.Second, "a heartbeat held by the frozen coordinator")
	frozenAt := time.Now()

	// Written while broker 1 is frozen, to the partition broker 2 leads.
	rtAppend(c, 1, 3, 5)
	read(1, 8)
	require.Equal(t, gen, rsGeneration(r), "the generation changed while the coordinator was frozen")
	require.Equal(t, frozen+1, b1.Requests(protocol.Heartbeat), "the heartbeat was not held")
	deliveredIn := time.Since(frozenAt)

	// The group moves to broker 2, and broker 1 wakes up.
	cgMoveCoordinator(c, b1, b2)
	cgNameCoordinator(b1, b2)
	b1.Handle(protocol.Fetch, nil)
	close(release)
	released = true
	cgWait(t, b2.Await(protocol.Heartbeat, 2), 10*time.Second, "heartbeats at the new coordinator")
	rtAppend(c, 0, 3, 2)
	read(0, 5)
	require.Equal(t, gen, rsGeneration(r), "the generation changed")
	require.Equal(t, joins, b1.Requests(protocol.JoinGroup)+b2.Requests(protocol.JoinGroup), "JoinGroup requests")

	// Commits go to the new coordinator.
	require.NoError(t, r.CommitMessages(ctx, Message{Topic: "t", Partition: 1, Offset: 7}))
	off, ok := c.Committed("rgc-frozen", "t", 1)
	require.True(t, ok)
	require.Equal(t, int64(8), off)
	t.Logf("messages written during the freeze delivered %v after it began", deliveredIn.Round(time.Millisecond))
}
