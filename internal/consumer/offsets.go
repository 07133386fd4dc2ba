package consumer

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rackfetch/kafka-go/protocol"
)

// Start offsets, asked in batches. A Reader starting on many partitions
// asks their leaders for a start offset each. Asks for one connection that
// come while a ListOffsets request is in flight there wait for it and go
// together in the next one: a group Reader on 300 partitions sends a few
// requests per leader instead of 300 (franz-go and the Java consumer also
// ask per broker), and a lone ask goes at once.

// OffsetAsk is one partition's ListOffsets question.
type OffsetAsk struct {
	Topic     string
	Partition int32
	Epoch     int32 // the leader epoch the asker knows (fencing); -1: none
	Timestamp int64 // milliseconds, or -2 (first) / -1 (last)
}

// OffsetTarget is where asks go: one queue per connection and isolation
// level (a request carries one).
type OffsetTarget struct {
	Conn      any // the connection, as a key
	Broker    int // its broker, for errors
	Isolation int8
	RoundTrip func(ctx context.Context, req protocol.Request) (protocol.Response, error)
	ErrorCode func(code int16) error // a partition's error code as the caller's error
}

type offsetAsk struct {
	OffsetAsk
	done chan offsetAnswer // buffered: answered once, never blocks
}

type offsetAskKey struct {
	topic     string
	partition int32
}

func (a *offsetAsk) key() offsetAskKey { return offsetAskKey{a.Topic, a.Partition} }

type offsetAnswer struct {
	offset int64
	err    error
}

type offsetQueueKey struct {
	conn      any
	isolation int8
}

// offsetQueue is the asks waiting for one connection; sending says one
// caller is sending them.
type offsetQueue struct {
	sending bool
	asks    []*offsetAsk
}

var (
	offsetRequests atomic.Int64
	offsetQueues   = struct {
		mu sync.Mutex
		m  map[offsetQueueKey]*offsetQueue
	}{m: map[offsetQueueKey]*offsetQueue{}}
)

// OffsetRequests returns the ListOffsets requests sent for asks so far.
func OffsetRequests() int64 { return offsetRequests.Load() }

// QueuedOffsetAsks returns how many asks for the connections match selects
// wait for a request.
func QueuedOffsetAsks(match func(conn any) bool) int {
	offsetQueues.mu.Lock()
	defer offsetQueues.mu.Unlock()
	n := 0
	for k, q := range offsetQueues.m {
		if match(k.conn) {
			n += len(q.asks)
		}
	}
	return n
}

// ListOffset answers ask at t, in one request with whatever other asks for
// t's connection are waiting. The caller that finds nobody sending sends
// for everyone until no ask is left; its own cancellation does not cut the
// others' requests short (they keep ctx's deadline).
func ListOffset(ctx context.Context, t OffsetTarget, ask OffsetAsk) (int64, error) {
	a := &offsetAsk{OffsetAsk: ask, done: make(chan offsetAnswer, 1)}
	k := offsetQueueKey{t.Conn, t.Isolation}
	offsetQueues.mu.Lock()
	q := offsetQueues.m[k]
	if q == nil {
		q = &offsetQueue{}
		offsetQueues.m[k] = q
	}
	q.asks = append(q.asks, a)
	if q.sending {
		offsetQueues.mu.Unlock()
		select {
		case ans := <-a.done:
			return ans.offset, ans.err
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	q.sending = true
	sendCtx := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		sendCtx, cancel = context.WithDeadline(sendCtx, d)
		defer cancel()
	}
	for len(q.asks) > 0 {
		asks := takeDistinct(q)
		offsetQueues.mu.Unlock()
		sendOffsetAsks(sendCtx, t, asks)
		offsetQueues.mu.Lock()
	}
	q.sending = false
	delete(offsetQueues.m, k)
	offsetQueues.mu.Unlock()
	ans := <-a.done
	return ans.offset, ans.err
}

// takeDistinct takes the asks of q for distinct partitions (a request
// names a partition once); the others wait for the next request.
func takeDistinct(q *offsetQueue) []*offsetAsk {
	seen := make(map[offsetAskKey]bool, len(q.asks))
	var take, rest []*offsetAsk
	for _, a := range q.asks {
		if k := a.key(); !seen[k] {
			seen[k] = true
			take = append(take, a)
		} else {
			rest = append(rest, a)
		}
	}
	q.asks = rest
	return take
}

// sendOffsetAsks sends one ListOffsets request for asks and answers each.
func sendOffsetAsks(ctx context.Context, t OffsetTarget, asks []*offsetAsk) {
	req := &protocol.ListOffsetsRequest{ReplicaID: -1, IsolationLevel: t.Isolation}
	for _, a := range asks {
		req.AddPartition(a.Topic, protocol.ListOffsetsRequestPartition{
			PartitionIndex: a.Partition, CurrentLeaderEpoch: a.Epoch, Timestamp: a.Timestamp,
		})
	}
	offsetRequests.Add(1)
	resp, err := t.RoundTrip(ctx, req)
	if err != nil {
		for _, a := range asks {
			a.done <- offsetAnswer{err: fmt.Errorf("listing offsets of %s/%d: %w", a.Topic, a.Partition, err)}
		}
		return
	}
	lr, ok := resp.(*protocol.ListOffsetsResponse)
	if !ok {
		for _, a := range asks {
			a.done <- offsetAnswer{err: fmt.Errorf("listing offsets of %s/%d: unexpected response %T", a.Topic, a.Partition, resp)}
		}
		return
	}
	got := map[offsetAskKey]protocol.ListOffsetsResponsePartition{}
	for _, tp := range lr.Topics {
		for _, p := range tp.Partitions {
			got[offsetAskKey{tp.Name, p.PartitionIndex}] = p
		}
	}
	for _, a := range asks {
		p, ok := got[a.key()]
		switch {
		case !ok:
			a.done <- offsetAnswer{err: fmt.Errorf("listing offsets of %s/%d: partition missing from the response", a.Topic, a.Partition)}
		case p.ErrorCode != 0:
			a.done <- offsetAnswer{err: fmt.Errorf("listing offsets of %s/%d on broker %d: %w", a.Topic, a.Partition, t.Broker, t.ErrorCode(p.ErrorCode))}
		default:
			a.done <- offsetAnswer{offset: p.Offset}
		}
	}
}
