package fetchengine

import (
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
	release := func() {
		t.Helper()
		select {
		case c.hold <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatal("no request waits for its answer")
		}
	}
	var keep atomic.Bool
	keep.Store(true)
	w := want(0, 0)
	w.Keep = keep.Load

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
