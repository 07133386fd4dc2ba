package faults

import (
	"sort"
	"strconv"
	"sync"
	"time"
)

// record holds what the producer had acknowledged and what the consumer
// returned, per partition, with times; every client is accounted the same
// way, from what its application sees.
type record struct {
	mu       sync.Mutex
	acks     [Partitions][]ack
	prodErrs int
	deliver  [Partitions][]time.Time
	readSeq  [Partitions]map[int64]bool // sequence numbers read
	seen     [Partitions]map[int64]bool // offsets returned
	maxOff   [Partitions]int64
	maxSeq   [Partitions]int64 // the highest sequence number read
	dup, ooo int
	appErrs  []appErr
	foreign  int // records the producer did not write
}

type ack struct {
	at   time.Time
	seq0 int64
	n    int
}

type appErr struct {
	at  time.Time
	err string
}

func newRecord() *record {
	r := &record{}
	for p := range r.readSeq {
		r.readSeq[p], r.seen[p], r.maxOff[p], r.maxSeq[p] = map[int64]bool{}, map[int64]bool{}, -1, -1
	}
	return r
}

func (r *record) acked(p int, seq0 int64, n int, at time.Time) {
	r.mu.Lock()
	r.acks[p] = append(r.acks[p], ack{at: at, seq0: seq0, n: n})
	r.mu.Unlock()
}

func (r *record) produceFailed() {
	r.mu.Lock()
	r.prodErrs++
	r.mu.Unlock()
}

// delivered is one record the application got.
func (r *record) delivered(p int, offset int64, value []byte) {
	now := time.Now()
	seq, ok := parseSeq(value)
	r.mu.Lock()
	defer r.mu.Unlock()
	if p < 0 || p >= Partitions || !ok {
		r.foreign++
		return
	}
	r.deliver[p] = append(r.deliver[p], now)
	r.readSeq[p][seq] = true
	r.maxSeq[p] = max(r.maxSeq[p], seq)
	switch {
	case r.seen[p][offset]:
		r.dup++
	case offset < r.maxOff[p]:
		r.ooo++
	}
	r.seen[p][offset] = true
	r.maxOff[p] = max(r.maxOff[p], offset)
}

func (r *record) appError(err error) {
	r.mu.Lock()
	r.appErrs = append(r.appErrs, appErr{at: time.Now(), err: err.Error()})
	r.mu.Unlock()
}

// everyPartitionSince: every partition returned a record after t.
func (r *record) everyPartitionSince(t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.deliver {
		if n := len(r.deliver[p]); n == 0 || r.deliver[p][n-1].Before(t) {
			return false
		}
	}
	return true
}

// ackedHeads returns each partition's last acknowledged sequence number
// (-1: none).
func (r *record) ackedHeads() [Partitions]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var heads [Partitions]int64
	for p, as := range r.acks {
		heads[p] = -1
		if n := len(as); n > 0 {
			heads[p] = as[n-1].seq0 + int64(as[n-1].n) - 1
		}
	}
	return heads
}

// behind counts the records up to heads not read yet, from the highest
// read (a partition's records are written, so returned, in sequence).
func (r *record) behind(heads [Partitions]int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for p, h := range heads {
		n += max(0, h-r.maxSeq[p])
	}
	return n
}

// lastDelivery is when partition p last returned a record (zero: never).
func (r *record) lastDelivery(p int) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.deliver[p]); n > 0 {
		return r.deliver[p][n-1]
	}
	return time.Time{}
}

// lost counts the acknowledged records never returned.
func (r *record) lost() (lost, acked int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.acks {
		for _, a := range r.acks[p] {
			acked += int64(a.n)
			for s := a.seq0; s < a.seq0+int64(a.n); s++ {
				if !r.readSeq[p][s] {
					lost++
				}
			}
		}
	}
	return lost, acked
}

// longestGap returns the longest time one of parts went without a delivery
// within [from, to), and which partition.
func (r *record) longestGap(parts []int, from, to time.Time) (time.Duration, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gap time.Duration
	which := -1
	for _, p := range parts {
		if g := maxGap(r.deliver[p], from, to); g > gap || which < 0 {
			gap, which = g, p
		}
	}
	return gap, which
}

// longestStall is the longest time a partition went without an
// acknowledgement within [from, to): the producer's own gap, which no
// consumer can beat.
func (r *record) longestStall(from, to time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var stall time.Duration
	for p := range r.acks {
		times := make([]time.Time, len(r.acks[p]))
		for i, a := range r.acks[p] {
			times[i] = a.at
		}
		stall = max(stall, maxGap(times, from, to))
	}
	return stall
}

// firstAckAfter is the seconds from at until every one of parts had an
// acknowledgement at or after it; -1 when one had none.
func (r *record) firstAckAfter(parts []int, at time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	back := 0.0
	for _, p := range parts {
		first := -1.0
		for _, a := range r.acks[p] {
			if !a.at.Before(at) {
				first = a.at.Sub(at).Seconds()
				break
			}
		}
		if first < 0 {
			return -1
		}
		back = max(back, first)
	}
	return back
}

// ackedPerS is the records per second acknowledged on parts within
// [from, to).
func (r *record) ackedPerS(parts []int, from, to time.Time) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range parts {
		for _, a := range r.acks[p] {
			if !a.at.Before(from) && a.at.Before(to) {
				n += a.n
			}
		}
	}
	if d := to.Sub(from).Seconds(); d > 0 {
		return float64(n) / d
	}
	return 0
}

// appErrors returns how many errors the application got and the first few.
func (r *record) appErrors() (int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first []string
	for i, e := range r.appErrs {
		if i == 3 {
			break
		}
		first = append(first, e.at.UTC().Format("15:04:05.000")+" "+e.err)
	}
	return len(r.appErrs), first
}

// maxGap is the longest time between consecutive events in times (sorted)
// within [from, to), counting from from and to to.
func maxGap(times []time.Time, from, to time.Time) time.Duration {
	if !from.Before(to) {
		return 0
	}
	last := from
	var gap time.Duration
	i := sort.Search(len(times), func(i int) bool { return !times[i].Before(from) })
	for ; i < len(times) && times[i].Before(to); i++ {
		gap = max(gap, times[i].Sub(last))
		last = times[i]
	}
	return max(gap, to.Sub(last))
}

// The producer's values start with a 12-digit sequence number, counted per
// partition.
const valueSize = 200

func makeValue(p int, seq int64) []byte {
	v := make([]byte, valueSize)
	n := copy(v, strconv.AppendInt(nil, 1e12+seq, 10)[1:]) // zero-padded to 12 digits
	v[n] = '-'
	for i := n + 1; i < len(v); i++ {
		v[i] = byte('a' + (int(seq)+i+p)%26)
	}
	return v
}

func parseSeq(v []byte) (int64, bool) {
	if len(v) < 12 {
		return 0, false
	}
	s, err := strconv.ParseInt(string(v[:12]), 10, 64)
	return s, err == nil
}
