package fetchengine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
)

// pollBroker is a broker that long-polls: a fetch with no partition behind
// its high watermark is held for its MaxWait (as Kafka holds it), one
// request at a time per connection.
type pollBroker struct {
	mu    sync.Mutex
	hw    map[int32]int64
	conns []*pollConn
}

func (b *pollBroker) dial(context.Context, int) (Conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := &pollConn{b: b, sent: make(chan *protocol.FetchRequest, 100)}
	b.conns = append(b.conns, c)
	return c, nil
}

// requests returns what each connection was sent.
func (b *pollBroker) requests() [][]*protocol.FetchRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([][]*protocol.FetchRequest, len(b.conns))
	for i, c := range b.conns {
		out[i] = append(out[i], c.reqs...)
	}
	return out
}

type pollConn struct {
	b    *pollBroker
	reqs []*protocol.FetchRequest // guarded by b.mu
	sent chan *protocol.FetchRequest
}

func (c *pollConn) Versions() (protocol.Versions, error) { return protocol.Versions{}, nil }
func (c *pollConn) Broken() bool                         { return false }
func (c *pollConn) Close() error                         { return nil }

func (c *pollConn) Fetch(ctx context.Context, req *protocol.FetchRequest, _ time.Time) (*protocol.FetchResponse, error) {
	c.b.mu.Lock()
	c.reqs = append(c.reqs, req)
	ready := false
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			ready = ready || p.FetchOffset < c.b.hw[p.Partition]
		}
	}
	c.b.mu.Unlock()
	c.sent <- req
	if !ready {
		t := time.NewTimer(time.Duration(req.MaxWaitMs) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	resp := &protocol.FetchResponse{}
	for _, t := range req.Topics {
		rt := protocol.FetchResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := protocol.FetchResponsePartition{PartitionIndex: p.Partition, HighWatermark: c.b.hw[p.Partition], PreferredReadReplica: -1}
			if p.FetchOffset < rp.HighWatermark {
				rp.Records = []byte("x")
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func pollEngine(t *testing.T, b *pollBroker, maxWait time.Duration) *Engine {
	e := New(Config{
		Dial:       b.dial,
		MaxWait:    func(Want) time.Duration { return maxWait },
		JoinSettle: -1,
	})
	t.Cleanup(e.Close)
	return e
}

// tail fetches partition p from offset 0 up to its end and then again and
// again, as a caught-up fetcher does, until ctx ends.
func tail(ctx context.Context, e *Engine, p int32) {
	off := int64(0)
	for ctx.Err() == nil {
		if r := e.Fetch(ctx, 1, want(p, off)); r.Err == nil {
			off = r.Partition.HighWatermark
		}
	}
}

// An idle loop sends one fetch per MaxWait, each asking for the whole of
// it: no cap makes an idle consumer poll more often.
func TestEngineIdleLoopPollsOncePerMaxWait(t *testing.T) {
	b := &pollBroker{hw: map[int32]int64{0: 0}}
	e := pollEngine(t, b, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tail(ctx, e, 0)
	observe := time.After(2200 * time.Millisecond)
	<-observe
	reqs := b.requests()
	require.Len(t, reqs, 1, "one connection")
	assert.LessOrEqual(t, len(reqs[0]), 3, "requests in 2.2 s of an idle loop with MaxWait 1 s")
	for _, r := range reqs[0] {
		assert.Equal(t, int32(1000), r.MaxWaitMs, "each poll asks for MaxWait")
	}
}

// A partition that asks while the loop's idle long poll is in flight is
// fetched at once on the loop's second connection, not after the poll.
func TestEngineArrivalDuringIdlePollGoesSide(t *testing.T) {
	b := &pollBroker{hw: map[int32]int64{0: 1, 1: 3}}
	e := pollEngine(t, b, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tail(ctx, e, 0)
	// The second request is idle: partition 0 read its end.
	require.Eventually(t, func() bool {
		reqs := b.requests()
		return len(reqs) == 1 && len(reqs[0]) == 2
	}, 10*time.Second, time.Millisecond)
	poll := b.requests()[0][1]
	require.Equal(t, int32(5000), poll.MaxWaitMs, "the idle poll asks for MaxWait")

	start := time.Now()
	r := e.Fetch(ctx, 1, want(1, 0))
	took := time.Since(start)
	require.NoError(t, r.Err)
	assert.Equal(t, []byte("x"), r.Partition.Records)
	t.Logf("the arriving partition was answered after %v (MaxWait 5 s)", took.Round(time.Millisecond))
	assert.Less(t, took, time.Second, "answered while the 5 s poll is in flight")
	reqs := b.requests()
	require.Len(t, reqs, 2, "a second connection")
	require.Len(t, reqs[1], 1)
	assert.Equal(t, []int32{1}, partitions(reqs[1][0]), "only the arriving partition on it")
	assert.Equal(t, int32(-1), reqs[1][0].SessionEpoch, "sessionless")
	assert.Len(t, reqs[0], 2, "the idle poll still in flight, alone on the main connection")

	// Caught up, the partition polls on the side no longer than SidePoll.
	r = e.Fetch(ctx, 1, want(1, 3))
	require.NoError(t, r.Err)
	reqs = b.requests()
	require.Len(t, reqs[1], 2)
	assert.LessOrEqual(t, reqs[1][1].MaxWaitMs, int32(SidePoll/time.Millisecond))
}
