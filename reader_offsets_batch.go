package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rackfetch/kafka-go/protocol"
)

// A Reader starting on many partitions asks their leaders for a start
// offset each. Asks for one control connection that come while a
// ListOffsets request is in flight there wait for it and go together in
// the next one: a group Reader on 300 partitions sends a few requests per
// leader instead of 300 (franz-go and the Java consumer also ask per
// broker), and a lone ask goes at once, as before.

// offsetAsk is one partition's ListOffsets question and its answer.
type offsetAsk struct {
	topic     string
	partition int32
	epoch     int32 // the leader epoch the asker knows (fencing)
	timestamp int64
	done      chan offsetAnswer // buffered: answered once, never blocks
}

// offsetAskKey names the partition an ask is about.
type offsetAskKey struct {
	topic     string
	partition int32
}

func (a *offsetAsk) key() offsetAskKey { return offsetAskKey{a.topic, a.partition} }

type offsetAnswer struct {
	offset int64
	err    error
}

// offsetQueueKey: a request carries one isolation level.
type offsetQueueKey struct {
	conn      *Conn
	isolation int8
}

// offsetQueue is the asks waiting for one connection; sending says one
// caller is sending them.
type offsetQueue struct {
	sending bool
	asks    []*offsetAsk
}

// offsetRequests counts the ListOffsets requests sent for asks (tests).
var offsetRequests atomic.Int64

var offsetQueues = struct {
	mu sync.Mutex
	m  map[offsetQueueKey]*offsetQueue
}{m: map[offsetQueueKey]*offsetQueue{}}

// listOffsetBatched answers ask on c, in one request with whatever other
// asks for c are waiting. The caller that finds nobody sending sends for
// everyone until no ask is left; its own cancellation does not cut the
// others' requests short (they keep ctx's deadline).
func listOffsetBatched(ctx context.Context, c *Conn, isolation int8, ask *offsetAsk) (int64, error) {
	k := offsetQueueKey{c, isolation}
	offsetQueues.mu.Lock()
	q := offsetQueues.m[k]
	if q == nil {
		q = &offsetQueue{}
		offsetQueues.m[k] = q
	}
	q.asks = append(q.asks, ask)
	if q.sending {
		offsetQueues.mu.Unlock()
		select {
		case a := <-ask.done:
			return a.offset, a.err
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
		sendOffsetAsks(sendCtx, c, isolation, asks)
		offsetQueues.mu.Lock()
	}
	q.sending = false
	delete(offsetQueues.m, k)
	offsetQueues.mu.Unlock()
	a := <-ask.done
	return a.offset, a.err
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
func sendOffsetAsks(ctx context.Context, c *Conn, isolation int8, asks []*offsetAsk) {
	req := &protocol.ListOffsetsRequest{ReplicaID: -1, IsolationLevel: isolation}
	for _, a := range asks {
		req.AddPartition(a.topic, protocol.ListOffsetsRequestPartition{
			PartitionIndex: a.partition, CurrentLeaderEpoch: a.epoch, Timestamp: a.timestamp,
		})
	}
	offsetRequests.Add(1)
	resp, _, err := c.roundTrip(ctx, req, -1)
	if err != nil {
		for _, a := range asks {
			a.done <- offsetAnswer{err: fmt.Errorf("listing offsets of %s/%d: %w", a.topic, a.partition, err)}
		}
		return
	}
	got := map[offsetAskKey]protocol.ListOffsetsResponsePartition{}
	for _, t := range resp.(*protocol.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			got[offsetAskKey{t.Name, p.PartitionIndex}] = p
		}
	}
	for _, a := range asks {
		p, ok := got[a.key()]
		switch {
		case !ok:
			a.done <- offsetAnswer{err: fmt.Errorf("listing offsets of %s/%d: partition missing from the response", a.topic, a.partition)}
		case p.ErrorCode != 0:
			a.done <- offsetAnswer{err: fmt.Errorf("listing offsets of %s/%d on broker %d: %w", a.topic, a.partition, c.broker, Error(p.ErrorCode))}
		default:
			a.done <- offsetAnswer{offset: p.Offset}
		}
	}
}
