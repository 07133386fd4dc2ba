package e2e

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client that starts sooner but then reads slower is ahead in records/s
// from the start and behind in the middle of the run: the report shows both.
func TestSummarizeMiddleRate(t *testing.T) {
	set := Setting{Mode: ModeGroup, Partitions: 6, ValueSize: 100, Records: 1001, FetchBytes: 1 << 20}
	sum := Sum{Records: 1001, Bytes: 100100, Hash: 7}
	run := func(client string, round int, middle, last time.Duration) Run {
		return Run{Spec: Spec{Setting: set, Client: client}, Round: round, CPU: 1, MaxRSS: 1 << 20,
			Report: Report{Sum: sum, Middle: middle, MiddleRecords: 800, Last: last}, Expected: sum}
	}
	runs := []Run{
		// franz-go: 800 records in the middle in 600 ms, 1.0 s in all.
		run(Base, 0, 600*time.Millisecond, time.Second),
		// rackfetch: 800 in 800 ms, 0.9 s in all.
		run("rackfetch", 0, 800*time.Millisecond, 900*time.Millisecond),
	}
	sums := Summarize(runs)
	require.Len(t, sums, 1)
	rf := sums[0].Clients[1]
	require.Equal(t, "rackfetch", rf.Client)
	assert.InDelta(t, 1.0/0.9, rf.RecSRatio.Med, 1e-9, "records/s from the start")
	assert.InDelta(t, 0.6/0.8, rf.MiddleRatio.Med, 1e-9, "records/s in the middle")
	assert.InDelta(t, 1000, rf.Middle.Med, 1e-6)

	var md, ov bytes.Buffer
	Markdown(&md, sums)
	Overview(&ov, sums)
	assert.Contains(t, md.String(), "| rackfetch | 1k | 1.11× | 1k | 0.75× |")
	assert.Contains(t, ov.String(), "| 1.11 · 1.00 | 0.75 | 1.00 | 0 (0) |")
}

func TestMiddlePerSecWithoutMarks(t *testing.T) {
	r := Run{Report: Report{Sum: Sum{Records: 100}, Last: time.Second}}
	assert.InDelta(t, 100.0, r.MiddlePerSec(), 1e-9, "no middle marks: the rate from the start")
}

// Goroutines that tick their own counts mark the tenth and nine tenths of
// the run's records once each, at counts the shared counter passed (a
// goroutine that lost the race to mark may have been one tick ahead).
func TestCounterMarksTheMiddle(t *testing.T) {
	const goroutines, each = 8, 5000
	c := &counter{spec: Spec{Setting: Setting{Records: goroutines * each}}, start: time.Now()}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int64(1); n <= each; n++ {
				c.tick(n)
			}
		}()
	}
	wg.Wait()
	require.NotZero(t, c.at10.Load())
	require.GreaterOrEqual(t, c.at90.Load(), c.at10.Load())
	assert.GreaterOrEqual(t, c.passed10.Load(), int64(goroutines*each/10))
	assert.Less(t, c.passed10.Load(), int64(goroutines*each/10+goroutines*tickEvery))
	assert.GreaterOrEqual(t, c.passed90.Load(), int64(goroutines*each*9/10))
	assert.Less(t, c.passed90.Load(), int64(goroutines*each*9/10+goroutines*tickEvery))
}
