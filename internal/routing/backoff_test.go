package routing

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorBackoffGrowth(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		n        int
		min, max time.Duration
		want     time.Duration
	}{
		{1, 100 * ms, time.Second, 100 * ms},
		{2, 100 * ms, time.Second, 400 * ms},
		{3, 100 * ms, time.Second, 900 * ms},
		{4, 100 * ms, time.Second, time.Second}, // 1.6 s, bounded
		{1000, 100 * ms, time.Second, time.Second},
		{1 << 40, 100 * ms, time.Second, time.Second}, // overflow: the bound
		{2, 10 * ms, 5 * ms, 5 * ms},                  // max below min: max
	} {
		assert.Equal(t, tc.want, retry.Backoff(tc.n, tc.min, tc.max), "n=%d min=%v max=%v", tc.n, tc.min, tc.max)
	}
}

// The decision's Backoff is the fetcher's only wait: the larger of what
// routing asks and what the event earns (ReadBackoffMin→Max per failure in
// a row, ReadBackoffMin after an empty answer given at once).
func TestSelectorOneWait(t *testing.T) {
	ms := time.Millisecond
	leaderFail := func(i int) Event { return evErr(time.Duration(i)*time.Second, 1, connLost) }
	for _, tc := range []struct {
		name   string
		cfg    Config
		setup  []Event
		events []Event
		want   []time.Duration // Backoff of each of events
	}{
		{name: "leader failures: n² × 100ms, bounded at 1s (the leader's own 2ⁿ steps are below)",
			events: rsRepeat(5, leaderFail),
			want:   []time.Duration{100 * ms, 400 * ms, 900 * ms, time.Second, time.Second}},
		{name: "leader failures: routing's steps when larger (min 300ms, 2ⁿ)",
			cfg:    Config{LeaderBackoffMin: 300 * ms, LeaderBackoffMax: 5 * time.Second},
			events: rsRepeat(4, leaderFail),
			want:   []time.Duration{300 * ms, 600 * ms, 1200 * ms, 2400 * ms}},
		{name: "a follower failure: back to the leader, which routing asks at once; the failure still waits",
			setup: pin2, events: []Event{evErr(time.Second, 2, connLost)}, want: []time.Duration{100 * ms}},
		{name: "dial failures count like fetch errors",
			events: []Event{evDial(0, 1), evErr(time.Second, 1, RequestTimedOut), evDial(2*time.Second, 1)},
			want:   []time.Duration{100 * ms, 400 * ms, 900 * ms}},
		{name: "a fetch that works starts the count again; metadata does not",
			events: []Event{leaderFail(0), leaderFail(1), evMeta(2*time.Second, rsDefault), leaderFail(3), evFetch(4*time.Second, 1, -1), leaderFail(5)},
			want:   []time.Duration{100 * ms, 400 * ms, 0, 900 * ms, 0, 100 * ms}},
		{name: "an empty answer at once naming nobody pauses ReadBackoffMin",
			events: []Event{evEmpty(0, 1, 100, 100)}, want: []time.Duration{100 * ms}},
		{name: "a long-polled empty answer does not",
			events: []Event{{Kind: EventFetched, Broker: 1, Now: rsT0, Preferred: -1, Empty: true, FetchOffset: 100, HighWatermark: 100, LongPolled: true}},
			want:   []time.Duration{0}},
		{name: "an empty answer naming a replica moves there at once",
			events: []Event{evNamed(0, 1, 2)}, want: []time.Duration{0}},
		{name: "a follower at its high watermark: routing's step when larger than the pause",
			cfg:   Config{Rack: "b", FollowerBackoffMin: 150 * ms, FollowerBackoffMax: time.Second},
			setup: pin2, events: []Event{evEmpty(time.Second, 2, 100, 100), evEmpty(2*time.Second, 2, 100, 100)},
			want: []time.Duration{150 * ms, 300 * ms}},
		{name: "configured error backoff",
			cfg:    Config{ErrorBackoffMin: 10 * ms, ErrorBackoffMax: 50 * ms, LeaderBackoffMin: ms, LeaderBackoffMax: ms},
			events: rsRepeat(3, leaderFail), want: []time.Duration{10 * ms, 40 * ms, 50 * ms}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Len(t, tc.want, len(tc.events))
			cfg := tc.cfg
			if cfg.Rack == "" {
				cfg.Rack = "b"
			}
			s := New(cfg, NewCooldowns(), rsDefault, rsT0)
			for _, ev := range tc.setup {
				s.Next(ev)
			}
			for i, ev := range tc.events {
				assert.Equal(t, tc.want[i], s.Next(ev).Backoff, fmt.Sprint("event ", i))
			}
		})
	}
}

// Every backoff range gets its defaults and never a max below its min.
func TestConfigBackoffRanges(t *testing.T) {
	cfg := Config{FollowerBackoffMin: time.Second, FollowerBackoffMax: time.Millisecond,
		ErrorBackoffMin: 2 * time.Second, ErrorBackoffMax: time.Second}.withDefaults()
	assert.Equal(t, time.Second, cfg.FollowerBackoffMax, "follower max raised to its min")
	assert.Equal(t, 2*time.Second, cfg.ErrorBackoffMax, "error max raised to its min")
	assert.Equal(t, routeDefaultLeaderBackoffMin, cfg.LeaderBackoffMin)
	assert.Equal(t, routeDefaultLeaderBackoffMax, cfg.LeaderBackoffMax)
}
