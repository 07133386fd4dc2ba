package netfault

import (
	"math"
	"math/rand"
	"sync"
	"time"
)

const (
	// segmentSize is a TCP segment's payload on a 1500-byte MTU path with timestamps.
	segmentSize = 1448
	// minRTO is Linux's least retransmission timeout (TCP_RTO_MIN); maxLossStall caps the doubling.
	minRTO       = 200 * time.Millisecond
	maxLossStall = 6400 * time.Millisecond
	// bucketBurst is the most a rate-capped direction sends at once after being idle.
	bucketBurst = chunkSize
)

// lossStall approximates, for a chunk of n bytes, what losing each TCP segment with probability p costs
// the connection: the chunk holds ceil(n/1448) segments, and when one of them is lost (probability
// 1-(1-p)^segments) the direction stalls one retransmission timeout (200 ms, Linux's minimum), doubled
// for each further loss of the retransmission (probability p each), as TCP's backoff does. Fast
// retransmit (recovery within one round trip when later segments arrive) is not modelled, so isolated
// losses on a busy connection cost more here than on a real path; the stall stops the whole direction
// (head-of-line), as a lost segment does for a TCP stream.
func lossStall(n int, p float64) time.Duration {
	if p <= 0 || n <= 0 {
		return 0
	}
	segments := (n + segmentSize - 1) / segmentSize
	if rand.Float64() >= 1-math.Pow(1-p, float64(segments)) {
		return 0
	}
	stall := minRTO
	for stall < maxLossStall && rand.Float64() < p {
		stall *= 2
	}
	return stall
}

// bucket is a token bucket shared by a path's connections in one direction.
type bucket struct {
	mu     sync.Mutex
	rate   int64
	tokens float64
	last   time.Time
}

// take spends n bytes at rate bytes/s (0: no cap) and returns how long the caller waits before sending
// them. The bucket goes into debt, so a chunk larger than the burst waits its own time.
func (b *bucket) take(n int, rate int64) time.Duration {
	if rate <= 0 {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.rate != rate {
		b.rate, b.tokens, b.last = rate, bucketBurst, now
	}
	b.tokens = math.Min(bucketBurst, b.tokens+now.Sub(b.last).Seconds()*float64(rate))
	b.last = now
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / float64(rate) * float64(time.Second))
}
