package kafka

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/internal/producer"
)

// WriterStats is a data structure returned by a call to Writer.Stats that
// exposes details about the behavior of the writer.
type WriterStats struct {
	Writes   int64 `metric:"kafka.writer.write.count"     type:"counter"`
	Messages int64 `metric:"kafka.writer.message.count"   type:"counter"`
	Bytes    int64 `metric:"kafka.writer.message.bytes"   type:"counter"`
	Errors   int64 `metric:"kafka.writer.error.count"     type:"counter"`

	BatchTime      DurationStats `metric:"kafka.writer.batch.seconds"`
	BatchQueueTime DurationStats `metric:"kafka.writer.batch.queue.seconds"`
	WriteTime      DurationStats `metric:"kafka.writer.write.seconds"`
	WaitTime       DurationStats `metric:"kafka.writer.wait.seconds"`
	Retries        int64         `metric:"kafka.writer.retries.count" type:"counter"`
	BatchSize      SummaryStats  `metric:"kafka.writer.batch.size"`
	BatchBytes     SummaryStats  `metric:"kafka.writer.batch.bytes"`

	MaxAttempts     int64         `metric:"kafka.writer.attempts.max"  type:"gauge"`
	WriteBackoffMin time.Duration `metric:"kafka.writer.backoff.min"   type:"gauge"`
	WriteBackoffMax time.Duration `metric:"kafka.writer.backoff.max"   type:"gauge"`
	MaxBatchSize    int64         `metric:"kafka.writer.batch.max"     type:"gauge"`
	BatchTimeout    time.Duration `metric:"kafka.writer.batch.timeout" type:"gauge"`
	ReadTimeout     time.Duration `metric:"kafka.writer.read.timeout"  type:"gauge"`
	WriteTimeout    time.Duration `metric:"kafka.writer.write.timeout" type:"gauge"`
	RequiredAcks    int64         `metric:"kafka.writer.acks.required" type:"gauge"`
	Async           bool          `metric:"kafka.writer.async"         type:"gauge"`

	Topic string `tag:"topic"`

	// DEPRECATED: these fields will only be reported for backward compatibility
	// if the Writer was constructed with NewWriter.
	Dials    int64         `metric:"kafka.writer.dial.count" type:"counter"`
	DialTime DurationStats `metric:"kafka.writer.dial.seconds"`

	// DEPRECATED: these fields were meaningful prior to kafka-go 0.4, changes
	// to the internal implementation and the introduction of the transport type
	// made them unnecessary.
	//
	// The values will be zero but are left for backward compatibility to avoid
	// breaking programs that used these fields.
	Rebalances        int64
	RebalanceInterval time.Duration
	QueueLength       int64
	QueueCapacity     int64
	ClientID          string

	// SameRackBytes and OtherRackBytes are the bytes of the encoded record
	// batches (after compression: what went to the brokers) that partition
	// leaders acknowledged, split by the leader's rack: the Writer's Rack,
	// or another (a leader without a rack included). Each batch counts once,
	// at the attempt that wrote it (with RequiredAcks None, once sent);
	// failed attempts count nothing. Both stay 0 when the Writer has no
	// Rack; WriterTotals.RackBytes counts by rack with or without one.
	SameRackBytes  int64 `metric:"kafka.writer.rack.same.bytes"  type:"counter"`
	OtherRackBytes int64 `metric:"kafka.writer.rack.other.bytes" type:"counter"`
}

// SummaryStats and DurationStats, shared with ReaderStats, are in
// reader_stats.go.

// writerStats accumulates a Writer's statistics: those of Stats between
// two of its calls, and the totals of Totals, which nothing resets.
type writerStats struct {
	dials          writerCounter
	writes         writerCounter
	messages       writerCounter
	bytes          writerCounter
	errors         writerCounter
	retries        writerCounter
	dialTime       statSummary
	batchTime      statSummary
	batchQueueTime statSummary
	writeTime      statSummary
	waitTime       statSummary
	batchSize      statSummary
	batchSizeBytes statSummary

	// Totals of what Stats only summarises.
	batches, writeTimeTotal, waitTimeTotal atomic.Int64

	// Encoded record batch bytes acknowledged, by the leader's rack.
	racksMu sync.Mutex
	racks   map[string]*writerCounter
}

// writerCounter counts for both views: the window Stats returns and
// resets, and the total Totals returns.
type writerCounter struct{ window, total atomic.Int64 }

func (c *writerCounter) observe(n int64) {
	c.window.Add(n)
	c.total.Add(n)
}

func (c *writerCounter) snapshot() int64 { return c.window.Swap(0) }

// Observe counts what the Writer's runtime observed.
func (s *writerStats) Observe(stat producer.Stat, v int64) {
	switch stat {
	case producer.StatWrites:
		s.writes.observe(v)
	case producer.StatMessages:
		s.messages.observe(v)
	case producer.StatBytes:
		s.bytes.observe(v)
	case producer.StatErrors:
		s.errors.observe(v)
	case producer.StatRetries:
		s.retries.observe(v)
	case producer.StatBatchTime:
		s.batchTime.observe(v)
	case producer.StatBatchQueueTime:
		s.batchQueueTime.observe(v)
	case producer.StatWriteTime:
		s.writeTime.observe(v)
		s.writeTimeTotal.Add(v)
	case producer.StatWaitTime:
		s.waitTime.observe(v)
		s.waitTimeTotal.Add(v)
	case producer.StatBatchSize:
		s.batchSize.observe(v)
		s.batches.Add(1)
	case producer.StatBatchBytes:
		s.batchSizeBytes.observe(v)
	}
}

// ObserveLeaderRack counts a record batch the leader in rack acknowledged.
func (s *writerStats) ObserveLeaderRack(rack string, bytes int64) {
	s.racksMu.Lock()
	c := s.racks[rack]
	if c == nil {
		if s.racks == nil {
			s.racks = map[string]*writerCounter{}
		}
		c = new(writerCounter)
		s.racks[rack] = c
	}
	s.racksMu.Unlock()
	c.observe(bytes)
}

// rackWindow takes the window of every rack's bytes, split by rack
// (the Writer's Rack) into same and other; both are 0 without a rack.
func (s *writerStats) rackWindow(rack string) (same, other int64) {
	s.racksMu.Lock()
	defer s.racksMu.Unlock()
	for r, c := range s.racks {
		n := c.snapshot()
		switch {
		case rack == "":
		case r == rack:
			same += n
		default:
			other += n
		}
	}
	return same, other
}

// rackTotals returns the total bytes of every rack, in a map of its own,
// and their split by rack (the Writer's Rack) into same and other; both
// are 0 without a rack.
func (s *writerStats) rackTotals(rack string) (by map[string]int64, same, other int64) {
	s.racksMu.Lock()
	defer s.racksMu.Unlock()
	by = make(map[string]int64, len(s.racks))
	for r, c := range s.racks {
		n := c.total.Load()
		by[r] = n
		switch {
		case rack == "":
		case r == rack:
			same += n
		default:
			other += n
		}
	}
	return by, same, other
}

func (w *Writer) stats() *writerStats {
	w.once.Do(func() {
		// NewWriter sets it already, to share it with the dial function.
		if w.writerStats == nil {
			w.writerStats = new(writerStats)
		}
	})
	return w.writerStats
}

// Stats returns a snapshot of the writer stats since the last time the method
// was called, or since the writer was created if it is called for the first
// time.
//
// A typical use of this method is to spawn a goroutine that will periodically
// call Stats on a kafka writer and report the metrics to a stats collection
// system. Since each call resets the counters, only one goroutine should:
// metrics collectors use Totals, which resets nothing.
//
// Writes counts produce requests; one request carries the batches of the
// partitions a broker leads that were ready together. WriteTime is the duration of produce requests,
// WaitTime the time brokers asked to throttle, BatchQueueTime the time from
// a batch's first message until it is closed to new ones, and BatchTime
// until it is first sent. SameRackBytes and OtherRackBytes split the
// encoded record batch bytes leaders acknowledged by the leader's rack
// (see their fields).
func (w *Writer) Stats() WriterStats {
	s := w.stats()
	same, other := s.rackWindow(w.Rack)
	return WriterStats{
		Dials:           s.dials.snapshot(),
		Writes:          s.writes.snapshot(),
		Messages:        s.messages.snapshot(),
		Bytes:           s.bytes.snapshot(),
		Errors:          s.errors.snapshot(),
		DialTime:        s.dialTime.snapshotDuration(),
		BatchTime:       s.batchTime.snapshotDuration(),
		BatchQueueTime:  s.batchQueueTime.snapshotDuration(),
		WriteTime:       s.writeTime.snapshotDuration(),
		WaitTime:        s.waitTime.snapshotDuration(),
		Retries:         s.retries.snapshot(),
		BatchSize:       s.batchSize.snapshot(),
		BatchBytes:      s.batchSizeBytes.snapshot(),
		MaxAttempts:     int64(w.maxAttempts()),
		WriteBackoffMin: w.writeBackoffMin(),
		WriteBackoffMax: w.writeBackoffMax(),
		MaxBatchSize:    int64(w.batchSize()),
		BatchTimeout:    w.batchTimeout(),
		ReadTimeout:     w.readTimeout(),
		WriteTimeout:    w.writeTimeout(),
		RequiredAcks:    int64(w.RequiredAcks),
		Async:           w.Async,
		Topic:           w.Topic,
		SameRackBytes:   same,
		OtherRackBytes:  other,
	}
}

// WriterTotals is a snapshot of a Writer's cumulative counters
// (Writer.Totals). Unlike Stats, reading them resets nothing: every counter
// only grows for the life of the Writer, so any number of collectors may
// read them beside the application's own calls to Stats, and rates come
// from differences between two snapshots.
type WriterTotals struct {
	// ClientID is the client ID of the Writer's Transport ("" when it is
	// not a *Transport), Topic the Writer's Topic ("" when each message
	// names its own).
	ClientID string
	Topic    string

	// Writes counts produce requests, Batches the record batches they
	// carried (one per partition and request, a retried batch at each
	// attempt), Messages and Bytes the messages of those batches and their
	// bytes.
	Writes   int64
	Batches  int64
	Messages int64
	Bytes    int64

	// Errors counts failed attempts, Retries the attempts made again after
	// one.
	Errors  int64
	Retries int64

	// WriteTime sums the durations of the produce requests (Writes of
	// them), WaitTime the throttle times brokers asked for.
	WriteTime time.Duration
	WaitTime  time.Duration

	// Dials counts connections opened, for a Writer made by NewWriter only
	// (as WriterStats.Dials).
	Dials int64

	// SameRackBytes and OtherRackBytes count the bytes of the encoded
	// record batches (after compression: what went to the brokers, not
	// Bytes) that partition leaders acknowledged: SameRackBytes those
	// whose leader is in the Writer's Rack, OtherRackBytes the others
	// (leaders without a rack included). Both stay 0 when the Writer has no
	// Rack. Each batch counts once, at the attempt that wrote it (with
	// RequiredAcks None, once sent); failed attempts count nothing.
	SameRackBytes  int64
	OtherRackBytes int64

	// RackBytes counts the same bytes by the leader's rack (its
	// broker.rack in the metadata; "" for leaders without one), with or
	// without a Rack on the Writer: SameRackBytes is RackBytes[Rack],
	// OtherRackBytes the sum of the others. Each call returns a map of its
	// own, empty before the first batch.
	RackBytes map[string]int64
}

// Totals returns the Writer's cumulative counters: the ones collectors
// read (metrics/kafkaprom, metrics/kafkaotel). It may be called at any
// rate from any goroutine; it resets nothing, and Stats still resets its
// own counters, as in kafka-go.
func (w *Writer) Totals() WriterTotals {
	s := w.stats()
	byRack, same, other := s.rackTotals(w.Rack)
	return WriterTotals{
		ClientID:  w.clientID(),
		Topic:     w.Topic,
		Writes:    s.writes.total.Load(),
		Batches:   s.batches.Load(),
		Messages:  s.messages.total.Load(),
		Bytes:     s.bytes.total.Load(),
		Errors:    s.errors.total.Load(),
		Retries:   s.retries.total.Load(),
		WriteTime: time.Duration(s.writeTimeTotal.Load()),
		WaitTime:  time.Duration(s.waitTimeTotal.Load()),
		Dials:     s.dials.total.Load(),

		SameRackBytes:  same,
		OtherRackBytes: other,
		RackBytes:      byRack,
	}
}

// clientID is the client ID the Writer's requests carry, "" when its
// Transport is not a *Transport.
func (w *Writer) clientID() string {
	rt := w.Transport
	if rt == nil {
		rt = DefaultTransport
	}
	if t, ok := rt.(*Transport); ok && t != nil {
		return t.ClientID
	}
	return ""
}

// add sums o's counters into t.
func (t *WriterTotals) add(o WriterTotals) {
	t.Writes += o.Writes
	t.Batches += o.Batches
	t.Messages += o.Messages
	t.Bytes += o.Bytes
	t.Errors += o.Errors
	t.Retries += o.Retries
	t.WriteTime += o.WriteTime
	t.WaitTime += o.WaitTime
	t.Dials += o.Dials
	t.SameRackBytes += o.SameRackBytes
	t.OtherRackBytes += o.OtherRackBytes
	if len(o.RackBytes) > 0 && t.RackBytes == nil {
		t.RackBytes = make(map[string]int64, len(o.RackBytes))
	}
	for r, n := range o.RackBytes {
		t.RackBytes[r] += n
	}
}

// WriterSet is a set of Writers whose totals are reported together, as the
// metrics integrations (metrics/kafkaprom, metrics/kafkaotel) do: Writers
// sharing a client ID and topic are summed into one entry. The zero value
// is an empty set; its methods are safe for concurrent use.
type WriterSet struct {
	mu      sync.Mutex
	writers []*Writer
}

// NewWriterSet returns a set holding writers.
func NewWriterSet(writers ...*Writer) *WriterSet {
	return &WriterSet{writers: append([]*Writer(nil), writers...)}
}

// Add adds w to the set.
func (s *WriterSet) Add(w *Writer) {
	s.mu.Lock()
	s.writers = append(s.writers, w)
	s.mu.Unlock()
}

// Remove removes w from the set (a Writer closed and replaced).
func (s *WriterSet) Remove(w *Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.writers {
		if x == w {
			s.writers = append(s.writers[:i], s.writers[i+1:]...)
			return
		}
	}
}

// Totals reads the Totals of every Writer in the set and sums those
// sharing a client ID and topic, in the order the first of each was added.
func (s *WriterSet) Totals() []WriterTotals {
	s.mu.Lock()
	writers := append([]*Writer(nil), s.writers...)
	s.mu.Unlock()
	type key struct{ clientID, topic string }
	index := map[key]int{}
	var out []WriterTotals
	for _, w := range writers {
		t := w.Totals()
		k := key{t.ClientID, t.Topic}
		if i, ok := index[k]; ok {
			out[i].add(t)
			continue
		}
		index[k] = len(out)
		out = append(out, t)
	}
	return out
}
