package group

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A coordinator that is not there yet is looked up again soon, doubling
// from 100ms up to JoinGroupBackoff; any other failure waits the full
// JoinGroupBackoff and resets the doubling.
func TestGroupJoinRetryBackoff(t *testing.T) {
	g := newTestGroup(Config{JoinGroupBackoff: time.Second}, Deps{})
	retries := 0
	var got []time.Duration
	for i := 0; i < 6; i++ {
		got = append(got, g.joinRetryBackoff(codeError(codeNotCoordinator), &retries))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	require.Equal(t, want, got, "coordinator retries")
	d := g.joinRetryBackoff(codeError(codeRebalanceInProgress), &retries)
	require.Equal(t, time.Second, d, "other errors wait the full backoff")
	require.Zero(t, retries, "other errors reset the doubling")
}
