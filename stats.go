package kafka

import (
	"sync"
	"sync/atomic"
	"time"
)

// Statistics shared by ReaderStats and WriterStats: counters and summaries
// reset by each snapshot (each call to Stats), gauges kept.

// SummaryStats is a data structure that carries a summary of observed values.
type SummaryStats struct {
	Avg   int64 `metric:"avg" type:"gauge"`
	Min   int64 `metric:"min" type:"gauge"`
	Max   int64 `metric:"max" type:"gauge"`
	Count int64 `metric:"count" type:"counter"`
	Sum   int64 `metric:"sum" type:"counter"`
}

// DurationStats is a data structure that carries a summary of observed
// duration values.
type DurationStats struct {
	Avg   time.Duration `metric:"avg" type:"gauge"`
	Min   time.Duration `metric:"min" type:"gauge"`
	Max   time.Duration `metric:"max" type:"gauge"`
	Count int64         `metric:"count" type:"counter"`
	Sum   time.Duration `metric:"sum" type:"counter"`
}

// statCounter is a counter reset by each snapshot.
type statCounter struct{ v atomic.Int64 }

func (c *statCounter) observe(n int64) { c.v.Add(n) }
func (c *statCounter) snapshot() int64 { return c.v.Swap(0) }

// statGauge holds the last value observed.
type statGauge struct{ v atomic.Int64 }

func (g *statGauge) observe(n int64) { g.v.Store(n) }
func (g *statGauge) snapshot() int64 { return g.v.Load() }

// statSummary keeps count, sum, min and max until the next snapshot.
type statSummary struct {
	mu                   sync.Mutex
	count, sum, min, max int64
}

func (s *statSummary) observe(n int64) {
	s.mu.Lock()
	if s.count == 0 || n < s.min {
		s.min = n
	}
	if s.count == 0 || n > s.max {
		s.max = n
	}
	s.count++
	s.sum += n
	s.mu.Unlock()
}

func (s *statSummary) observeDuration(d time.Duration) { s.observe(int64(d)) }

func (s *statSummary) snapshot() SummaryStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := SummaryStats{Min: s.min, Max: s.max, Count: s.count, Sum: s.sum}
	if s.count > 0 {
		out.Avg = s.sum / s.count
	}
	s.count, s.sum, s.min, s.max = 0, 0, 0, 0
	return out
}

func (s *statSummary) snapshotDuration() DurationStats {
	v := s.snapshot()
	return DurationStats{Avg: time.Duration(v.Avg), Min: time.Duration(v.Min), Max: time.Duration(v.Max), Count: v.Count, Sum: time.Duration(v.Sum)}
}
