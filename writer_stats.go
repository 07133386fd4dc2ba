package kafka

import (
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
}

// SummaryStats and DurationStats, shared with ReaderStats, are in
// reader_stats.go.

// writerStats accumulates a Writer's statistics between two calls of Stats.
type writerStats struct {
	dials          statCounter
	writes         statCounter
	messages       statCounter
	bytes          statCounter
	errors         statCounter
	retries        statCounter
	dialTime       statSummary
	batchTime      statSummary
	batchQueueTime statSummary
	writeTime      statSummary
	waitTime       statSummary
	batchSize      statSummary
	batchSizeBytes statSummary
}

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
	case producer.StatWaitTime:
		s.waitTime.observe(v)
	case producer.StatBatchSize:
		s.batchSize.observe(v)
	case producer.StatBatchBytes:
		s.batchSizeBytes.observe(v)
	}
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
// system.
//
// Writes counts produce requests; one request carries the batches of every
// partition the broker leads. WriteTime is the duration of produce requests,
// WaitTime the time brokers asked to throttle, BatchQueueTime the time from
// a batch's first message until it is closed to new ones, and BatchTime
// until it is first sent.
func (w *Writer) Stats() WriterStats {
	s := w.stats()
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
	}
}
