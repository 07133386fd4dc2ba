package netfault

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want Fault
	}{
		{[]string{"blackhole", "30s"}, Fault{Blackhole: true, For: 30 * time.Second}},
		{[]string{"oneway"}, Fault{DropReplies: true}},
		{[]string{"latency", "300ms"}, Fault{Delay: 300 * time.Millisecond}},
		{[]string{"loss", "5%", "1m"}, Fault{Loss: 0.05, For: time.Minute}},
		{[]string{"bandwidth", "1mbit"}, Fault{Rate: 125000}},
		{[]string{"latency", "100ms", "loss", "20%"}, Fault{Delay: 100 * time.Millisecond, Loss: 0.2}},
		{[]string{"reset"}, Fault{Reset: true}},
		{[]string{"silent", "10s"}, Fault{Silent: true, For: 10 * time.Second}},
	} {
		got, err := Parse(tc.in)
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
		again, err := Parse(splitWords(got.String()))
		require.NoError(t, err, "%q → %q", tc.in, got.String())
		assert.Equal(t, got, again, "String then Parse of %q", tc.in)
	}
	for rate, want := range map[int64]string{125000: "bandwidth 1mbit", 64000: "bandwidth 512kbit", 1000: "bandwidth 8kbit", 3: "bandwidth 24bit"} {
		assert.Equal(t, want, Fault{Rate: rate}.String())
	}
	for _, bad := range [][]string{nil, {"30s"}, {"latency"}, {"latency", "-1s"}, {"loss", "120%"}, {"bandwidth", "fast"}, {"blackhole", "30s", "oneway"}, {"flood"}} {
		_, err := Parse(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// splitWords reads String's output back as words ("for" is a separator there).
func splitWords(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		if w != "for" {
			out = append(out, w)
		}
	}
	return out
}

func TestLossStall(t *testing.T) {
	assert.Zero(t, lossStall(1448, 0))
	// One segment per chunk: a stall with probability p, each a power-of-two multiple of the RTO.
	const n = 20000
	stalls := 0
	for i := 0; i < n; i++ {
		d := lossStall(1448, 0.05)
		if d == 0 {
			continue
		}
		stalls++
		require.GreaterOrEqual(t, d, minRTO)
		require.LessOrEqual(t, d, maxLossStall)
		require.Zero(t, d%minRTO, "a stall of %v is not a multiple of the RTO", d)
	}
	assert.InDelta(t, 0.05, float64(stalls)/n, 0.01, "share of one-segment chunks stalled at 5 %% loss")
	// Eleven segments at 20 %: 1-0.8^11 ≈ 91 % of chunks stall.
	stalls = 0
	for i := 0; i < n; i++ {
		if lossStall(11*1448, 0.2) > 0 {
			stalls++
		}
	}
	assert.InDelta(t, 0.914, float64(stalls)/n, 0.02, "share of 11-segment chunks stalled at 20 %% loss")
}

func TestBucket(t *testing.T) {
	var b bucket
	assert.Zero(t, b.take(1<<20, 0), "no rate, no wait")
	// The burst passes at once; then every byte waits its share of the rate.
	assert.Zero(t, b.take(bucketBurst, 1000))
	w := b.take(500, 1000)
	assert.InDelta(t, float64(500*time.Millisecond), float64(w), float64(50*time.Millisecond))
}
