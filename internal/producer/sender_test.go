package producer

import (
	"strconv"
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

// A request the broker holds does not hold back the other partitions it
// leads: each goes out in a request of its own, up to MaxInFlight at once,
// while a partition still has one batch in flight.
func TestRequestsInFlightPerBroker(t *testing.T) {
	c, tc := newTestCore(t, &testSettings{batchSize: 100, batchBytes: 1 << 20})
	release := make(chan struct{})
	tc.received = make(chan struct{}, 16)
	holds := make([]testStep, MaxInFlight+2)
	for i := range holds {
		holds[i] = testStep{hold: release}
	}
	tc.script(holds...)

	var wg sync.WaitGroup
	errs := make(chan []error, MaxInFlight+2)
	for p := 0; p < MaxInFlight; p++ {
		wg.Add(1)
		go func(key string) {
			defer wg.Done()
			errs <- testWrite(t, c, key)
		}(strconv.Itoa(p))
		select { // its own request, while the earlier ones are held
		case <-tc.received:
		case <-time.After(10 * time.Second):
			t.Fatalf("partition %d waited behind the %d held requests", p, p)
		}
	}
	// A second write to partition 0 waits for its first batch; a write
	// to partition 5 waits for a free lane.
	for _, key := range []string{"0", "5"} {
		wg.Add(1)
		go func(key string) {
			defer wg.Done()
			errs <- testWrite(t, c, key)
		}(key)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.openMessages("t", 0)+c.openMessages("t", 5) < 2 {
		require.False(t, time.Now().After(deadline), "the writes did not reach their batches")
		time.Sleep(time.Millisecond)
	}
	assert.Len(t, tc.batchSizes(), 0, "every request held")
	select {
	case <-tc.received:
		t.Fatalf("more than %d requests in flight", MaxInFlight)
	default:
	}
	assert.Equal(t, MaxInFlight, c.lanes(testBroker.ID))

	close(release)
	wg.Wait()
	close(errs)
	for e := range errs {
		assert.Nil(t, e)
	}
	for p := 0; p <= 5; p++ {
		want := int64(1)
		if p == 0 {
			want = 2
		}
		assert.Equal(t, want, tc.appended(p), "records of partition %d", p)
	}
	for _, n := range tc.numbering(0) {
		assert.Equal(t, int32(1), n.Records, "partition 0: one batch at a time")
	}
}

// A lane without work for the idle timeout stops, and its connection
// with it; the next write starts one again.
func TestIdleLanesStop(t *testing.T) {
	c, tc := newTestCore(t, &testSettings{batchSize: 100, batchBytes: 1 << 20})
	tc.idle = 10 * time.Millisecond
	require.Nil(t, testWrite(t, c, "0"))
	deadline := time.Now().Add(10 * time.Second)
	for c.lanes(testBroker.ID) != 0 {
		require.False(t, time.Now().After(deadline), "the idle lane did not stop")
		time.Sleep(time.Millisecond)
	}
	require.Nil(t, testWrite(t, c, "1"))
	assert.Equal(t, int64(1), tc.appended(1))
}

// lanes counts the running lanes of a broker's sender.
func (c *Core[M]) lanes(id int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bw := c.brokers[id]; bw != nil {
		return bw.lanes
	}
	return 0
}
