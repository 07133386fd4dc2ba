package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// Partition-mode Readers with the same settings share one fetch engine:
// one connection per broker and one request for their partitions; two
// Readers of the same partition each get every record; the engine stops
// with its last Reader.
func TestReadersShareOneEngine(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 4, 1) // partitions 0 and 3 on broker 1
	for _, p := range []int32{0, 3} {
		vals := make([]string, 50)
		for i := range vals {
			vals[i] = fmt.Sprintf("p%d-%d", p, i)
		}
		c.AppendRecords("t", p, vals...)
	}
	dialer := &Dialer{ClientID: "share-test", Timeout: 5 * time.Second}
	reader := func(p int, d *Dialer) *Reader {
		return NewReader(ReaderConfig{Brokers: c.Addrs()[:1], Topic: "t", Partition: p, Dialer: d,
			MaxWait: 100 * time.Millisecond, ReadLagInterval: -1})
	}
	r0, r3 := reader(0, dialer), reader(3, dialer)
	// A Dialer of its own with the same settings, as a program building a
	// config per Reader makes.
	again := reader(0, &Dialer{ClientID: "share-test", Timeout: 5 * time.Second})
	other := reader(3, &Dialer{ClientID: "share-test-2", Timeout: 5 * time.Second})
	defer other.Close()
	require.Same(t, r0.engine, r3.engine, "same settings: one engine")
	require.Same(t, r0.engine, again.engine, "an equal Dialer: the same engine")
	assert.NotSame(t, r0.engine, other.engine, "another client ID: another engine")
	assert.NotEqual(t, r0.owner, again.owner, "each Reader its own owner number")

	ctx := rtCtx(t)
	for _, tc := range []struct {
		r *Reader
		p int
	}{{r0, 0}, {r3, 3}, {again, 0}, {other, 3}} {
		for i := 0; i < 50; i++ {
			m, err := tc.r.FetchMessage(ctx)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("p%d-%d", tc.p, i), string(m.Value))
			require.Equal(t, int64(i), m.Offset)
		}
	}
	assert.Equal(t, 1, r0.engine.Conns(), "one connection to broker 1 for the three Readers")
	// Both fetchers now long-poll at broker 1: their next fetches go in
	// one request.
	require.Eventually(t, func() bool {
		for _, rq := range c.Broker(1).Received(protocol.Fetch) {
			n := 0
			for _, tp := range rq.Request.(*protocol.FetchRequest).Topics {
				n += len(tp.Partitions)
			}
			if n == 2 {
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "partitions 0 and 3 in one request")

	require.NoError(t, r0.Close())
	require.NoError(t, r3.Close())
	key := engineKeyOf(&again.config)
	engineShares.mu.Lock()
	_, running := engineShares.m[key]
	engineShares.mu.Unlock()
	assert.True(t, running, "a Reader still uses it")
	require.NoError(t, again.Close())
	engineShares.mu.Lock()
	_, running = engineShares.m[key]
	engineShares.mu.Unlock()
	assert.False(t, running, "stopped with its last Reader")
}

// A follower's long poll is short while records flow and MaxWait once they
// stop, whether the lag check's sampling or the follower's own answers say
// so; a leader is always polled for MaxWait.
func TestEngineMaxWaitFollowsRecordFlow(t *testing.T) {
	quiet := func() bool { return true }
	busy := func() bool { return false }
	lag := ReaderConfig{MaxWait: 10 * time.Second, MaxFollowerLag: 30 * time.Second, Rack: "b"}
	noLag := ReaderConfig{MaxWait: 10 * time.Second, MaxFollowerLag: -1, Rack: "b"}
	for _, c := range []struct {
		name  string
		cfg   ReaderConfig
		want  fetchengine.Want
		quiet func() bool
		wait  time.Duration
	}{
		{"leader", lag, fetchengine.Want{}, busy, 10 * time.Second},
		{"follower, leader's end moves", lag, fetchengine.Want{Follower: true}, busy, followerActivePoll},
		{"follower, leader's end stays", lag, fetchengine.Want{Follower: true, Drained: true}, quiet, 10 * time.Second},
		{"follower drained, leader's end moves", lag, fetchengine.Want{Follower: true, Drained: true}, busy, followerActivePoll},
		{"no lag check, follower sent records", noLag, fetchengine.Want{Follower: true}, busy, followerActivePoll},
		{"no lag check, follower drained", noLag, fetchengine.Want{Follower: true, Drained: true}, busy, 10 * time.Second},
		{"short MaxWait", ReaderConfig{MaxWait: 100 * time.Millisecond, MaxFollowerLag: -1}, fetchengine.Want{Follower: true}, busy, 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.wait, engineMaxWait(&c.cfg, c.want, c.quiet))
		})
	}
}
