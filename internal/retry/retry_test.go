package retry

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffGrowsQuadraticallyToMax(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 400 * time.Millisecond, 3: 900 * time.Millisecond, 4: time.Second, 1 << 40: time.Second} {
		assert.Equal(t, want, Backoff(n, 100*time.Millisecond, time.Second), "failure %d", n)
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, Sleep(ctx, time.Hour))
	assert.False(t, Sleep(ctx, 0))
	assert.True(t, Sleep(context.Background(), time.Millisecond))
}
