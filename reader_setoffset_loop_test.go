package kafka

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// longPoll makes broker b hold a fetch that brings no records for the
// wait it asks for, as a Kafka broker does.
func longPoll(b *fakebroker.Broker) {
	b.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := b.Default(req, hdr).(*protocol.FetchResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if len(p.Records) > 0 || p.ErrorCode != 0 {
					return resp, fakebroker.Action{}
				}
			}
		}
		wait := make(chan struct{})
		time.AfterFunc(time.Duration(req.(*protocol.FetchRequest).MaxWaitMs)*time.Millisecond, func() { close(wait) })
		return resp, fakebroker.Action{Wait: wait}
	})
}

// A partition Reader moved with SetOffset again and again, while another
// Reader sharing its engine long-polls the same broker: each move stops
// and joins the old fetcher before the new one asks the engine, so no
// stopped fetcher takes the new one's place there, and every FetchMessage
// returns the record at the offset set, promptly.
func TestReaderSetOffsetLoopWithSharedLongPoll(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 2, 1)
	longPoll(c.Broker(1))
	const records = 200
	rtAppend(c, 0, 0, records)
	cfg := func(p int) func(*ReaderConfig) {
		return func(rc *ReaderConfig) { rc.Partition, rc.MaxWait = p, 10*time.Millisecond }
	}
	var moved *Reader                              // set before the hook runs
	t.Cleanup(func() { fetcherBeforeFetch = nil }) // after the Readers closed

	// A fetcher stopped on its way to the engine is descheduled there
	// until its successor waits in the engine (at most 10 ms): the order
	// in which a stopped fetcher that was not joined would take the new
	// one's place.
	fetcherBeforeFetch = func(ctx context.Context, f *fetcher) {
		if f.r != moved {
			return
		}
		pause, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		select {
		case <-ctx.Done():
		case <-pause.Done():
			return
		}
		deadline := time.After(10 * time.Millisecond)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for !moved.engine.Waiting(moved.owner, "t", 0) {
			select {
			case <-deadline:
				return
			case <-tick.C:
			}
		}
	}
	idle := rtReader(t, c, cfg(1))
	moved = rtReader(t, c, cfg(0))
	require.Same(t, idle.engine, moved.engine, "the two Readers share an engine")
	// The idle Reader's fetcher keeps a long poll going at broker 1.
	go func() { _, _ = idle.FetchMessage(rtCtx(t)) }()

	for i := 0; i < 1000; i++ {
		off := int64((i * 37) % records)
		require.NoError(t, moved.SetOffset(off))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		m, err := moved.FetchMessage(ctx)
		cancel()
		require.NoError(t, err, "FetchMessage %d after SetOffset(%d)", i, off)
		require.Equal(t, off, m.Offset, "FetchMessage %d", i)
		require.Equal(t, fmt.Sprintf("v%d", off), string(m.Value))
	}
}
