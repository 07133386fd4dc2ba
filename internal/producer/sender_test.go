package producer

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While a produce request is in flight, the messages of concurrent
// synchronous writers pile up and leave together in the next request.
func TestBatchesGrowWhileInFlight(t *testing.T) {
	c, tc := newTestCore(t, &testSettings{batchSize: 100, batchBytes: 1 << 20})
	release := make(chan struct{})
	tc.received = make(chan struct{}, 2)
	tc.script(testStep{hold: release})
	var wg sync.WaitGroup
	errs := make(chan []error, 51)
	write := func() {
		defer wg.Done()
		errs <- testWrite(t, c, "0")
	}
	wg.Add(1)
	go write()
	<-tc.received // held by the broker
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go write()
	}
	// All 50 are in the open batch once the runtime's state says so.
	deadline := time.Now().Add(10 * time.Second)
	for c.openMessages("t", 0) < 50 {
		require.False(t, time.Now().After(deadline), "the writes did not reach the batch")
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for e := range errs {
		assert.Nil(t, e)
	}
	assert.Equal(t, [][]int32{{1}, {50}}, tc.batchSizes(), "the held request, then one batch of 50")
}

// Close waits for the messages of an asynchronous writer even when they
// need retries, and reports failures to Completion.
func TestCloseFlushesRetries(t *testing.T) {
	var mu sync.Mutex
	var got []error
	set := &testSettings{async: true, batchSize: 100, batchBytes: 1 << 20}
	set.completion = func(msgs []testMsg, err error) {
		mu.Lock()
		got = append(got, err)
		mu.Unlock()
	}
	c, tc := newUnclosedTestCore(set)
	tc.script(testStep{code: errLeaderNotAvailable}, testStep{code: errRequestTimedOut})
	msgs, parts := testMessages(3, "c")
	assert.Nil(t, c.Enqueue(msgs, parts, false), "no refs for an asynchronous call")
	c.Close()
	assert.Equal(t, []error{nil}, got, "one success")
	assert.Len(t, tc.batchSizes(), 3, "produce requests")
	assert.Equal(t, int64(3), tc.appended(0))
}
