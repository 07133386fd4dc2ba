package kafka

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/protocol"
)

// The Reader's fetches go through one fetch engine (internal/fetchengine):
// per broker one data connection and one loop, each Fetch request carrying
// every partition the Reader reads from that broker at the moment. This
// file connects the engine to the Reader's connections and settings.

// defaultReaderMaxBufferedBytes is the default of
// ReaderConfig.MaxBufferedBytes.
const defaultReaderMaxBufferedBytes = 192 << 20

// DefaultReaderBufferLimit is the default of SetReaderBufferLimit.
const DefaultReaderBufferLimit = 256 << 20

// readersBudget is shared by every Reader of the process.
var readersBudget = fetchengine.NewBudget(DefaultReaderBufferLimit)

// SetReaderBufferLimit bounds the bytes (keys and values) that all the
// Readers of the process together fetch ahead of their applications, on
// top of each Reader's MaxBufferedBytes: a program that runs one Reader per
// partition, as kafka-go programs often do, holds no more than this
// however many partitions it reads. The default is
// DefaultReaderBufferLimit (256 MiB); 0 removes the bound. A Reader that
// holds nothing may always fetch, so reading never stops.
func SetReaderBufferLimit(bytes int) {
	readersBudget.SetLimit(int64(max(bytes, 0)))
}

// brokerAddrs remembers the address of every broker a fetcher asked the
// engine to fetch from (the cluster's list may not have caught up yet).
type brokerAddrs struct{ m sync.Map }

func (a *brokerAddrs) put(b Broker) {
	if old, ok := a.m.Load(b.ID); !ok || old.(Broker) != b {
		a.m.Store(b.ID, b)
	}
}

// engineConn is a Conn as the engine uses it.
type engineConn struct{ c *Conn }

func (ec engineConn) Versions() (protocol.Versions, error) { return ec.c.apiVersions() }
func (ec engineConn) Broken() bool                         { return ec.c.isBroken() }
func (ec engineConn) Close() error                         { return ec.c.Close() }

func (ec engineConn) Fetch(ctx context.Context, req *protocol.FetchRequest, stallBy time.Time) (*protocol.FetchResponse, error) {
	vs, err := ec.c.apiVersions()
	if err != nil {
		return nil, err
	}
	v, err := vs.Pick(req, ec.c.fetchVersionLimit)
	if err != nil {
		return nil, err
	}
	if v >= 13 {
		for _, t := range req.Topics {
			if t.TopicID == ([16]byte{}) {
				v = 12 // a topic without a known id: name topics instead
				break
			}
		}
	}
	if !stallBy.IsZero() {
		ctx = withResponseStart(ctx, stallBy)
	}
	resp := new(protocol.FetchResponse)
	// The frame is never handed back (releaseBuffer): messages alias it.
	if _, err := ec.c.exchangeRetain(ctx, req, resp, v); err != nil {
		return nil, fmt.Errorf("fetching %d partitions from broker %d: %w", countPartitions(req), ec.c.broker, err)
	}
	return resp, nil
}

func countPartitions(req *protocol.FetchRequest) int {
	n := 0
	for _, t := range req.Topics {
		n += len(t.Partitions)
	}
	return n
}

// engineMaxWait returns the long poll of a fetch of w: MaxWait, and at
// most followerActivePoll at a follower while records flow to the
// partition. Whether they flow is what the lag check's sampling says when
// it runs (quiet: the leader's high watermark stays put,
// internal/consumer/pace.go), else what the follower said last (w.Drained:
// no records for the previous fetch).
func engineMaxWait(config *ReaderConfig, w fetchengine.Want, quiet func() bool) time.Duration {
	wait := config.MaxWait
	if !w.Follower {
		return wait
	}
	if config.MaxFollowerLag > 0 {
		if quiet() {
			return wait
		}
		wait = min(wait, followerActivePoll)
		if config.Rack != "" {
			wait = min(wait, config.followerLagPoll())
		}
		return wait
	}
	if w.Drained {
		return wait
	}
	return min(wait, followerActivePoll)
}

// followerActivePoll bounds a follower's long poll while records flow to
// its partitions. A follower holds a fetch until records arrive or
// replica.fetch.wait.max.ms (500 ms by default) passes, so asking for
// 500 ms adds no request while records flow, and it bounds how long a
// silent path to the follower (a black hole, a frozen broker) goes
// unnoticed: the poll plus ReplicaStallTimeout, under 4 s with the
// defaults. It also keeps the lag check (internal/routing/lag.go), which
// runs between fetches, at the pace of the leader's samples. An idle
// partition's follower is long-polled for MaxWait.
const followerActivePoll = 500 * time.Millisecond

// clampInt32 bounds n to an int32.
func clampInt32(n int) int32 {
	return int32(min(max(n, 0), math.MaxInt32))
}
