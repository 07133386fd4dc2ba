package e2e

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client that starts sooner but then reads slower is ahead in records/s
// from the start and behind from the first record: the report shows both.
func TestSummarizeSteadyRate(t *testing.T) {
	set := Setting{Mode: ModeGroup, Partitions: 6, ValueSize: 100, Records: 1001, FetchBytes: 1 << 20}
	sum := Sum{Records: 1001, Bytes: 100100, Hash: 7}
	run := func(client string, round int, first, last time.Duration) Run {
		return Run{Spec: Spec{Setting: set, Client: client}, Round: round, CPU: 1, MaxRSS: 1 << 20,
			Report: Report{Sum: sum, First: first, Last: last}, Expected: sum}
	}
	runs := []Run{
		// franz-go: first record at 400 ms, 1000 more in 600 ms (1.0 s in all).
		run(Base, 0, 400*time.Millisecond, time.Second),
		// rackfetch: first at 100 ms, 1000 more in 800 ms (0.9 s in all).
		run("rackfetch", 0, 100*time.Millisecond, 900*time.Millisecond),
	}
	sums := Summarize(runs)
	require.Len(t, sums, 1)
	rf := sums[0].Clients[1]
	require.Equal(t, "rackfetch", rf.Client)
	assert.InDelta(t, 1.0/0.9, rf.RecSRatio.Med, 1e-9, "records/s from the start")
	assert.InDelta(t, 0.6/0.8, rf.SteadyRatio.Med, 1e-9, "records/s from the first record")
	assert.InDelta(t, 1000/0.8, rf.Steady.Med, 1e-6)

	var md, ov bytes.Buffer
	Markdown(&md, sums)
	Overview(&ov, sums)
	assert.Contains(t, md.String(), "| rackfetch | 1k | 1.11× | 1k | 0.75× |")
	assert.Contains(t, ov.String(), "| 1.11 · 1.00 | 0.75 | 1.00 | 0 (0) |")
}

func TestSteadyPerSecShortRun(t *testing.T) {
	r := Run{Report: Report{Sum: Sum{Records: 1}, First: time.Second, Last: time.Second}}
	assert.InDelta(t, 1.0, r.SteadyPerSec(), 1e-9, "one record: the rate from the start")
}
