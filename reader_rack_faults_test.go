package kafka

// Fake-broker tests of the Reader through broker faults: what a leader
// change does to a partition read from its rack's follower, transient
// failures that must not reach the application, and a follower that
// leaves the ISR while it still answers.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// A leader change elsewhere fences the follower's fetches (the client's
// epoch is old): the Reader refreshes metadata and keeps reading the same
// follower with the new epoch — no cooldown, no cross-rack reads.
func TestReaderRackLeaderMoveKeepsFollower(t *testing.T) {
	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 8)
	log := &rtLogger{}
	r := rtRackReader(t, c, log)
	rtExpect(t, r, 0, 8)
	require.Equal(t, 2, r.Stats().Routing[0].Broker, "not on the rack-b follower before the leader move")

	epoch := c.SetLeader("t", 0, 3)
	rtAppend(c, 0, 8, 8)
	rtExpect(t, r, 8, 8)

	assert.Empty(t, log.find("follower failed"), "the follower was left after a leader move")
	rt := r.Stats().Routing[0]
	assert.Equal(t, 2, rt.Broker)
	assert.Equal(t, 3, rt.Leader)
	assert.Zero(t, c.Broker(3).FetchBytes(), "records read from the new leader in rack c")
	assert.Zero(t, c.Broker(1).Requests(protocol.Fetch)-1, "the old leader fetched from again")
	newEpoch := false
	for _, rec := range c.Broker(2).Received(protocol.Fetch) {
		for _, tp := range rec.Request.(*protocol.FetchRequest).Topics {
			for _, p := range tp.Partitions {
				newEpoch = newEpoch || p.CurrentLeaderEpoch == epoch
			}
		}
	}
	assert.True(t, newEpoch, "the follower never got a fetch with the new leader epoch %d", epoch)
}

// The leader goes away and another broker takes over: the dial failures
// and the election are retried and logged; FetchMessage returns only
// messages, in order.
func TestReaderTransientFailuresNotReturned(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{Brokers: 3}, 1, 3)
	rtAppend(c, 0, 0, 4)
	errLog := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Brokers = c.Addrs()
		cfg.ErrorLogger = errLog
		cfg.MaxAttempts = 1 // the old rule returned every failure
	})
	rtExpect(t, r, 0, 4)

	c.Broker(1).Stop()
	// Several failures, each enough for the old rule to return it.
	require.Eventually(t, func() bool {
		return len(errLog.all()) >= 3
	}, 10*time.Second, 10*time.Millisecond)
	c.SetLeader("t", 0, 2)
	rtAppend(c, 0, 4, 4)
	rtExpect(t, r, 4, 4)
	assert.NotEmpty(t, errLog.find("broker 1"), "the failures were not logged")
}

// A fatal error (authorization) still reaches the application.
func TestReaderFatalErrorReturned(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{Brokers: 1}, 1, 1)
	rtAppend(c, 0, 0, 4)
	c.Broker(1).Script(protocol.Fetch, 1, fakebroker.Step{ErrorCode: int16(TopicAuthorizationFailed)})
	r := rtReader(t, c, nil)
	_, err := r.FetchMessage(rtCtx(t))
	require.Error(t, err)
	assert.True(t, errors.Is(err, TopicAuthorizationFailed), "got %v", err)
	rtExpect(t, r, 0, 4)
}

// A follower that left the ISR but still answers is left within one of
// the Reader's own metadata refreshes: nothing in its answers says so.
func TestReaderRackFollowerLeavesISRWhileAnswering(t *testing.T) {
	// Restored after the Reader's cleanup has closed it (cleanups run last
	// first): its metadata loop reads the interval until then.
	old := readerPinnedMetadataInterval
	t.Cleanup(func() { readerPinnedMetadataInterval = old })
	readerPinnedMetadataInterval = 200 * time.Millisecond

	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 4)
	log := &rtLogger{}
	r := rtRackReader(t, c, log)
	rtExpect(t, r, 0, 4)
	require.Equal(t, 2, r.Stats().Routing[0].Broker)

	st := c.Partition("t", 0)
	st.ISR = []int32{1, 3}
	c.SetPartition("t", 0, st)
	require.Eventually(t, func() bool { return r.Stats().Routing[0].Broker == 1 }, 10*time.Second, 20*time.Millisecond,
		"still reading the follower out of the ISR")
	assert.NotEmpty(t, log.find("broker 2 (rack b) → broker 1 (rack a), follower left the ISR"))
	rtAppend(c, 0, 4, 4)
	rtExpect(t, r, 4, 4)
}

// A follower that accepts connections but never answers ApiVersions (a
// frozen process) is left after ReplicaStallTimeout, even with a Dialer
// that has no timeout.
func TestReaderRackFrozenFollowerDial(t *testing.T) {
	c := rtRackCluster(t, true)
	rtAppend(c, 0, 0, 4)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	follower := c.Broker(2)
	follower.Handle(protocol.ApiVersions, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		return follower.Default(req, hdr), fakebroker.Action{Wait: hold}
	})
	log := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes, cfg.Logger = "b", 1, log
		cfg.Dialer = &Dialer{ClientID: "reader-test"} // no Timeout
		cfg.ReplicaStallTimeout = 300 * time.Millisecond
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 4; i++ {
		m, err := r.FetchMessage(ctx)
		require.NoError(t, err)
		require.EqualValues(t, i, m.Offset)
	}
	assert.NotEmpty(t, log.find("broker 2 (rack b) → broker 1 (rack a), follower failed"))
}

// rtReadEight starts a rack-b Reader (one record per fetch) on a 3-broker
// rack cluster and reads the 8 records of t/0 with it.
func rtReadEight(t *testing.T) (*fakebroker.Cluster, *Reader, *rtLogger) {
	c := rtCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true}, 1, 3)
	rtAppend(c, 0, 0, 8)
	errLog := &rtLogger{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes, cfg.ErrorLogger, cfg.Logger = "b", 1, errLog, errLog
	})
	rtExpect(t, r, 0, 8)
	return c, r, errLog
}

// The topic is deleted and created again (a new topic ID, leader epochs
// from 0): the Reader notices, says so, and reads the new topic from its
// start instead of waiting at the old topic's offset.
func TestReaderTopicRecreated(t *testing.T) {
	c, r, errLog := rtReadEight(t)
	oldID := c.TopicID("t")

	c.DeleteTopic("t")
	c.CreateTopic("t", 1, 3)
	require.NotEqual(t, oldID, c.TopicID("t"))
	c.AppendRecords("t", 0, "new0", "new1", "new2")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		m, err := r.FetchMessage(ctx)
		if !assert.NoError(t, err) {
			break
		}
		require.EqualValues(t, i, m.Offset)
		require.Equal(t, "new"+string(rune('0'+i)), string(m.Value))
	}
	assert.NotEmpty(t, errLog.find("deleted and created again"))
	if t.Failed() {
		for _, l := range errLog.all() {
			t.Log(l)
		}
	}
}

// The cluster behind the Reader's addresses is rebuilt (a new cluster ID)
// and the topic created there again with more records than the Reader had
// read. While the new cluster's metadata does not show the topic yet, the
// Reader's cache holds no ID for it; its fetches must still name the old
// topic's ID (which the new cluster refuses), not the topic's name, which
// would return the new log's records from the old log's offset. Metadata
// hides the topic until two fetches have been sent at the new cluster.
func TestReaderClusterRebuilt(t *testing.T) {
	c, r, errLog := rtReadEight(t)

	fetches := func() (n int) {
		for _, b := range c.Brokers() {
			n += b.Requests(protocol.Fetch)
		}
		return n
	}
	hideUntil := fetches() + 2
	for _, b := range c.Brokers() {
		b.Handle(protocol.Metadata, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := b.Default(req, hdr).(*protocol.MetadataResponse)
			if fetches() < hideUntil {
				for i := range resp.Topics {
					resp.Topics[i] = protocol.MetadataResponseTopic{ErrorCode: 3, Name: resp.Topics[i].Name}
				}
			}
			return resp, fakebroker.Action{}
		})
	}
	c.SetClusterID("rebuilt")
	c.DeleteTopic("t")
	c.CreateTopic("t", 1, 3)
	vals := make([]string, 12)
	for i := range vals {
		vals[i] = fmt.Sprintf("new%d", i)
	}
	c.AppendRecords("t", 0, vals...)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range vals {
		m, err := r.FetchMessage(ctx)
		require.NoError(t, err)
		require.EqualValues(t, i, m.Offset, "offset of message %d after the rebuild", i)
		require.Equal(t, vals[i], string(m.Value))
	}
	assert.GreaterOrEqual(t, fetches(), hideUntil, "fetches sent while the topic was hidden")
	assert.NotEmpty(t, errLog.find("deleted and created again"))
}

// A follower on a broker older than 3.5 (Fetch < v15) ends a consumer's
// fetch only when its wait passes, whatever arrives meanwhile
// (KAFKA-14334). With MaxWait 10 s, it is long-polled for at most 500 ms
// (fetchengine.OldBrokerPoll).
func TestReaderRackOldFollowerShortPoll(t *testing.T) {
	c := rtRackCluster(t, true)
	c.Broker(2).SetMaxVersion(protocol.Fetch, 13)
	rtAppend(c, 0, 0, 4)
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes = "b", 1
		cfg.MaxWait = 10 * time.Second
	})
	rtExpect(t, r, 0, 4)
	require.Eventually(t, func() bool {
		for _, rec := range c.Broker(2).Received(protocol.Fetch) {
			if rec.Request.(*protocol.FetchRequest).MaxWaitMs == 500 {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "no follower fetch with a 500 ms wait")
	rtNoPollOver500ms(t, c, 2, "")
}

// A leader older than 3.3 (DescribeAcls < v3) that names a preferred
// replica first waits for the whole long poll: with MaxWait 10 s, fetches
// carrying the rack to it are long-polled for at most 500 ms.
func TestReaderRackOldLeaderShortPoll(t *testing.T) {
	c := rtRackCluster(t, false) // names nobody: the reader stays on the leader
	c.Broker(1).SetMaxVersion(protocol.DescribeAcls, 2)
	rtAppend(c, 0, 0, 4)
	withRack := rtReader(t, c, func(cfg *ReaderConfig) { cfg.Rack, cfg.MaxWait = "b", 10*time.Second })
	rtExpect(t, withRack, 0, 4)
	require.Eventually(t, func() bool {
		for _, rec := range c.Broker(1).Received(protocol.Fetch) {
			if r := rec.Request.(*protocol.FetchRequest); r.RackID == "b" && r.MaxWaitMs == 500 {
				return true
			}
		}
		return false
	}, 10*time.Second, 10*time.Millisecond, "no 500 ms fetch with the rack at the old leader")
	rtNoPollOver500ms(t, c, 1, "b")
}

// rtNoPollOver500ms checks that broker id got no fetch waiting over 500 ms
// (only those carrying rack, when set).
func rtNoPollOver500ms(t *testing.T, c *fakebroker.Cluster, id int32, rack string) {
	t.Helper()
	for _, rec := range c.Broker(id).Received(protocol.Fetch) {
		if r := rec.Request.(*protocol.FetchRequest); rack == "" || r.RackID == rack {
			assert.LessOrEqual(t, r.MaxWaitMs, int32(500), "broker %d: a long poll over 500 ms", id)
		}
	}
}
