package kafka

// Unit tests of resetOutOfRange on the fake brokers: an offset past the log
// end is waited for (with the Reader's backoff, never moved backwards, no
// error for the application); below the log start it moves forward.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rpCollect runs FetchMessage in a goroutine until ctx ends, handing out
// messages and the first error.
func rpCollect(ctx context.Context, r *Reader) (<-chan Message, <-chan error) {
	msgs, errs := make(chan Message, 1000), make(chan error, 1)
	go func() {
		for {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				if ctx.Err() == nil {
					errs <- err
				}
				return
			}
			msgs <- m
		}
	}()
	return msgs, errs
}

// rpPoll polls cond until it holds, failing the test after d.
func rpPoll(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		require.False(t, time.Now().After(deadline), "%s: not within %v", what, d)
		time.Sleep(2 * time.Millisecond)
	}
}

// The leader answers OffsetOutOfRange for offset 42 while its log ends at
// 10, until it holds 50 records: the reader delivers exactly 42..49 and
// never anything below 42, retrying with its backoff and returning no
// error to the application.
func TestReaderWaitsForOffsetPastLogEnd(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 10)
	leader := c.Broker(1)
	var full atomic.Bool
	leader.Handle(protocol.Fetch, func(req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
		resp := leader.Default(req, hdr).(*protocol.FetchResponse)
		if !full.Load() {
			for i := range resp.Topics {
				for j := range resp.Topics[i].Partitions {
					p := &resp.Topics[i].Partitions[j]
					p.ErrorCode, p.Records, p.HighWatermark = int16(OffsetOutOfRange), nil, -1
				}
			}
		}
		return resp, fakebroker.Action{}
	})
	errLog := &rtLogger{}
	const backoffMin = 20 * time.Millisecond
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.ErrorLogger = errLog
		cfg.ReadBackoffMin, cfg.ReadBackoffMax = backoffMin, 100*time.Millisecond
	})
	require.NoError(t, r.SetOffset(42))
	msgs, errs := rpCollect(rtCtx(t), r)

	// Retries back off: from the 2nd fetch, 6 more take at least 6 waits
	// of ReadBackoffMin (they grow to ReadBackoffMax).
	rpPoll(t, 10*time.Second, "2 fetches", func() bool { return leader.Requests(protocol.Fetch) >= 2 })
	t0, n0 := time.Now(), leader.Requests(protocol.Fetch)
	rpPoll(t, 10*time.Second, "6 more fetches", func() bool { return leader.Requests(protocol.Fetch) >= n0+6 })
	assert.GreaterOrEqual(t, time.Since(t0), 6*backoffMin, "the retries do not back off")
	require.Empty(t, msgs, "delivered while the offset does not exist")
	require.Empty(t, errs, "an error reached the application")
	assert.NotEmpty(t, errLog.find("past the last offset for partition 0 of t at offset 42"), "the wait is not logged: %q", errLog.all())

	for from := 10; from < 50; from += 8 {
		rtAppend(c, 0, from, 8)
	}
	full.Store(true)
	deadline := time.After(10 * time.Second)
	for want := int64(42); want < 50; want++ {
		select {
		case m := <-msgs:
			require.Equal(t, want, m.Offset, "delivered out of order or below the position")
			require.Equal(t, fmt.Sprintf("v%d", want), string(m.Value))
		case err := <-errs:
			t.Fatalf("FetchMessage: %v", err)
		case <-deadline:
			t.Fatalf("offset %d not delivered", want)
		}
	}
	assert.Equal(t, int64(50), r.Offset())
	assert.Empty(t, errLog.find("moving to offset"), "the position moved")
	assert.Zero(t, r.Stats().Errors, "waiting is no error")
}

// Below the log start (retention) the position moves forward to the first
// offset, or to the last with StartOffset LastOffset, through ErrorLogger.
func TestReaderMovesForwardFromBelowLogStart(t *testing.T) {
	for _, tc := range []struct {
		start int64
		want  int64
	}{{FirstOffset, 20}, {LastOffset, 30}} {
		t.Run(fmt.Sprint(tc.start), func(t *testing.T) {
			c := rtCluster(t, fakebroker.Config{}, 1, 1)
			rtAppend(c, 0, 0, 30)
			c.SetLogStartOffset("t", 0, 20)
			errLog := &rtLogger{}
			r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.ErrorLogger, cfg.StartOffset = errLog, tc.start })
			require.NoError(t, r.SetOffset(5))
			msgs, errs := rpCollect(rtCtx(t), r)
			rpPoll(t, 10*time.Second, "reset logged", func() bool { return errLog.find("moving to offset") != "" })
			rtAppend(c, 0, 30, 2)
			for want := tc.want; want < tc.want+2; want++ {
				select {
				case m := <-msgs:
					require.Equal(t, want, m.Offset)
				case err := <-errs:
					t.Fatalf("FetchMessage: %v", err)
				case <-time.After(10 * time.Second):
					t.Fatalf("offset %d not delivered", want)
				}
			}
			line := errLog.find("before the first offset")
			assert.Contains(t, line, fmt.Sprintf("(offset 5 < first offset 20): moving to offset %d (%d messages skipped)", tc.want, tc.want-5))
		})
	}
}
