package fetchengine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A fetch whose partition the incremental response leaves out goes on
// waiting while its Keep says so, and goes out in the next request; once
// Keep says no, the next such answer reaches the caller, empty.
func TestEngineKeepsFetchWithoutNews(t *testing.T) {
	c := &sessionConn{fakeConn: *newFakeConn(), hw: map[int32]int64{0: 5}}
	c.hold = make(chan struct{})
	e := sessionEngine(t, c)
	release := answerer(t, c)
	var keep atomic.Bool
	keep.Store(true)
	w := want(0, 0)
	w.Keep = func() time.Time {
		if keep.Load() {
			return time.Now().Add(time.Hour)
		}
		return time.Time{}
	}

	first := fetchAsync(e, 1, w)
	assert.Equal(t, int32(0), sent(t, &c.fakeConn).SessionEpoch)
	release()
	require.NoError(t, recv(t, first).Err, "a full fetch answers every partition")

	// The same offset again: not listed, left out of the answer, kept.
	kept := fetchAsync(e, 1, w)
	assert.Empty(t, partitions(sent(t, &c.fakeConn)))
	release()
	next := sent(t, &c.fakeConn)
	assert.Equal(t, int32(2), next.SessionEpoch, "the kept fetch goes in the next request")
	assert.Empty(t, partitions(next), "a kept partition is not listed again")
	select {
	case r := <-kept:
		t.Fatalf("a fetch without news was answered: %+v", r)
	default:
	}
	assert.Equal(t, int64(1), e.Stats().Kept)

	keep.Store(false)
	release()
	r := recv(t, kept)
	require.NoError(t, r.Err)
	assert.Nil(t, r.Partition.Records)
	assert.Equal(t, int64(5), r.Partition.HighWatermark, "the last high watermark seen")
	assert.Equal(t, int64(1), e.Stats().Kept)
	close(c.hold)
}

// Within the time its Keep gave and under the same KeepEpoch, a kept fetch
// is kept again without asking: an idle poll touches no caller. A new epoch
// asks again, and so does the end of the time given.
func TestEngineAsksKeepOncePerEpoch(t *testing.T) {
	c := &sessionConn{fakeConn: *newFakeConn(), hw: map[int32]int64{0: 5}}
	c.hold = make(chan struct{})
	var epoch atomic.Uint64
	e := New(Config{
		Dial:      func(context.Context, int) (Conn, error) { return c, nil },
		MaxWait:   func(Want) time.Duration { return time.Second },
		KeepEpoch: epoch.Load,
	})
	t.Cleanup(e.Close)
	var clock atomic.Int64 // the engine's time, unix nanoseconds
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	e.mu.Lock()
	e.now = now
	e.mu.Unlock()
	release := answerer(t, c)
	var asked atomic.Int32
	var keep atomic.Bool
	keep.Store(true)
	w := want(0, 0)
	w.Keep = func() time.Time {
		asked.Add(1)
		if !keep.Load() {
			return time.Time{}
		}
		return now().Add(10 * time.Second)
	}
	first := fetchAsync(e, 1, w)
	sent(t, &c.fakeConn)
	release()
	require.NoError(t, recv(t, first).Err)

	kept := fetchAsync(e, 1, w)
	for i := 0; i < 3; i++ {
		sent(t, &c.fakeConn)
		release()
	}
	sent(t, &c.fakeConn) // the fourth request is out: three answers were handled
	assert.Equal(t, int32(1), asked.Load(), "Keep asked again within its time, under the same epoch")

	epoch.Add(1)
	release()
	sent(t, &c.fakeConn)
	assert.Equal(t, int32(2), asked.Load(), "a new epoch asks Keep again")

	clock.Add(int64(11 * time.Second)) // past the time Keep gave
	release()
	sent(t, &c.fakeConn)
	assert.Equal(t, int32(3), asked.Load(), "the end of Keep's time asks it again")

	keep.Store(false)
	epoch.Add(1)
	release()
	r := recv(t, kept)
	require.NoError(t, r.Err)
	assert.Equal(t, int32(4), asked.Load())
	close(c.hold)
}

// answerer returns a func that lets the request c holds be answered.
func answerer(t *testing.T, c *sessionConn) func() {
	return func() {
		t.Helper()
		select {
		case c.hold <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatal("no request waits for its answer")
		}
	}
}
