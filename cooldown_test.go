package kafka

import (
	"sync"
	"testing"
	"time"
)

func TestCooldownCache(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCooldownCache()

	if c.cooling(1, t0) {
		t.Fatal("an unknown broker is cooling")
	}
	c.fail(1, t0, time.Minute)
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{
		{0, true},
		{time.Minute - time.Nanosecond, true},
		{time.Minute, false}, // cooling while now < until
		{2 * time.Minute, false},
	} {
		if got := c.cooling(1, t0.Add(tc.at)); got != tc.want {
			t.Errorf("cooling at +%v = %v, want %v", tc.at, got, tc.want)
		}
	}
	if c.size() != 0 {
		t.Errorf("expired entry kept: size %d", c.size())
	}
	if c.cooling(2, t0) {
		t.Error("cooldown of broker 1 leaked to broker 2")
	}
}

func TestCooldownCacheExtendsNeverShortens(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCooldownCache()

	c.fail(1, t0, 10*time.Minute)
	c.fail(1, t0.Add(time.Minute), time.Minute) // ends earlier: ignored
	if end, ok := c.coolingUntil(1, t0.Add(5*time.Minute)); !ok || !end.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("after a shorter failure: until %v (cooling %v), want +10m", end, ok)
	}
	c.fail(1, t0.Add(9*time.Minute), 5*time.Minute) // ends later: extends
	if end, ok := c.coolingUntil(1, t0.Add(9*time.Minute)); !ok || !end.Equal(t0.Add(14*time.Minute)) {
		t.Fatalf("after a longer failure: until %v (cooling %v), want +14m", end, ok)
	}

	c.fail(2, t0, 0) // no cooldown at all
	if c.cooling(2, t0) {
		t.Error("a zero cooldown made the broker cool")
	}
}

func TestCooldownCacheBounded(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCooldownCache()
	// 10 000 brokers fail one per second, each for 10 s: at most the
	// last 10 (plus the one being added) stay, never asked about again.
	for i := 0; i < 10000; i++ {
		c.fail(i, t0.Add(time.Duration(i)*time.Second), 10*time.Second)
		if n := c.size(); n > 11 {
			t.Fatalf("after %d failures the cache holds %d entries", i+1, n)
		}
	}
}

func TestCooldownCacheNilAndZero(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var nilCache *cooldownCache
	nilCache.fail(1, t0, time.Minute)
	if nilCache.cooling(1, t0) {
		t.Error("a nil cache reports cooling")
	}
	var zero cooldownCache // map not made yet
	zero.fail(1, t0, time.Minute)
	if !zero.cooling(1, t0) {
		t.Error("a zero cache lost its entry")
	}
}

func TestCooldownCacheConcurrent(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCooldownCache()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				now := t0.Add(time.Duration(i) * time.Millisecond)
				c.fail((g+i)%5, now, 50*time.Millisecond)
				c.cooling(i%5, now)
			}
		}(g)
	}
	wg.Wait()
	if n := c.size(); n > 5 {
		t.Fatalf("%d entries for 5 brokers", n)
	}
}
