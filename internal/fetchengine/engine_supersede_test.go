package fetchengine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A late fetcher of a partition (a stopped one, its context already
// cancelled) takes nobody's place: the live fetch of the same partition
// waiting behind a request in flight is still sent and answered.
func TestEngineCancelledFetchKeepsTheLiveWaiter(t *testing.T) {
	c, e, inFlight, live := waitBehindInFlight(t)
	stale, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, e.Fetch(stale, 1, want(0, 3)).Err, context.Canceled)
	close(c.hold)
	require.NoError(t, recv(t, inFlight).Err)
	e.Release(0, "t", 1)
	r := recv(t, live)
	require.NoError(t, r.Err, "the live fetch of partition 0")
	assert.Equal(t, int64(6), r.Partition.HighWatermark, "fetched at the live caller's offset")
}

// Two fetches of one partition waiting at once: the earlier is answered
// ErrSuperseded at once, and the later one, even if its caller then gives
// up, leaves no one waiting for ever.
func TestEngineSupersededFetchIsAnswered(t *testing.T) {
	c, e, inFlight, first := waitBehindInFlight(t)
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan Result, 1)
	go func() { second <- e.Fetch(ctx, 1, want(0, 7)) }()
	assert.ErrorIs(t, recv(t, first).Err, ErrSuperseded)
	cancel()
	assert.ErrorIs(t, recv(t, second).Err, context.Canceled)
	close(c.hold)
	require.NoError(t, recv(t, inFlight).Err)
}

// waitBehindInFlight keeps a fetch of partition 1 in flight (c.hold) and
// a fetch of partition 0 at offset 5 waiting behind it.
func waitBehindInFlight(t *testing.T) (c *fakeConn, e *Engine, inFlight, waiting chan Result) {
	t.Helper()
	c = newFakeConn()
	c.hold = make(chan struct{})
	e = testEngine(t, c, Config{})
	inFlight = fetchAsync(e, 1, want(1, 0))
	sent(t, c)
	waiting = fetchAsync(e, 1, want(0, 5))
	waitPending(t, e, 1, 1)
	return c, e, inFlight, waiting
}
