package kafka

import (
	"context"
	"fmt"
)

// Where a partition's position goes when the leader says it is off: the
// KIP-320 truncation check after a leader change, and the reset policy for
// an offset out of range.

// validate checks the position at the leader after a leader change
// (KIP-320): when the new leader's log ends, for the epoch of the last
// record fetched, below the position, the records after that end were
// truncated away. That is reported and the position moves back to where
// the logs diverged, so what replaced them is read; nothing is skipped.
func (f *fetcher) validate(ctx context.Context) bool {
	if f.epoch < 0 || f.offset < 0 {
		return true // nothing fetched yet: nothing to check
	}
	r := f.r
	endEpoch, end, err := r.epochEnd(ctx, f.tp.topic, f.tp.partition, f.epoch)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		// Fetches carry the leader epoch, so a stale position is still
		// fenced; the check runs again at the next leader change.
		r.errorf("kafka reader: partition %s: checking offset %d of leader epoch %d at the leader: %v", f.tp, f.offset, f.epoch, err)
		return true
	}
	switch {
	case end < 0:
		// The leader knows no epoch as old: its log starts later.
		r.errorf("kafka reader: partition %s: the leader knows no leader epoch <= %d (offset %d)", f.tp, f.epoch, f.offset)
		return f.resetOutOfRange(ctx)
	case end < f.offset:
		r.stats.errors.observe(1)
		err := fmt.Errorf("kafka reader: partition %s: log truncated: the leader's epoch %d ends at offset %d, below the position %d (last record fetched in epoch %d); %d records fetched are no longer in the log: %w",
			f.tp, endEpoch, end, f.offset, f.epoch, f.offset-end, OffsetOutOfRange)
		r.errorf("%v", err)
		if r.config.OffsetOutOfRangeError {
			r.queue.pushPartitionErr(f.gen, f.tp, err)
			return false
		}
		r.errorf("kafka reader: partition %s: resuming at offset %d, where the logs diverge", f.tp, end)
		f.offset = end
	}
	return true
}

// resetOutOfRange handles the LEADER saying the position is out of range,
// as kafka-go's Reader does. Past the last offset the position is kept: the
// fetch is retried after the fetcher's backoff (ReadBackoffMin growing to
// ReadBackoffMax) until the offset exists, as when SetOffset runs ahead of
// the writes or a new topic's leader is still catching up. Moving back
// would deliver what the application chose to skip. Below the first offset
// (retention deleted it) the position moves to the first offset, or to the
// last with StartOffset LastOffset. Both are reported through ErrorLogger.
// With OffsetOutOfRangeError the error is returned instead and the
// partition stops.
func (f *fetcher) resetOutOfRange(ctx context.Context) bool {
	r := f.r
	first, last, err := r.firstLastOffsets(ctx, f.tp.topic, f.tp.partition)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		r.errorf("the kafka reader got an error while attempting to determine whether it was reading before the first offset or after the last offset of partition %d of %s: %v", f.tp.partition, f.tp.topic, err)
		return true // the fetch is retried, and fails again if still out of range
	}
	if f.offset >= first && f.offset <= last {
		return true // the log moved meanwhile: retry
	}
	if r.config.OffsetOutOfRangeError {
		err := fmt.Errorf("kafka reader: partition %s: offset %d outside [%d, %d]: %w", f.tp, f.offset, first, last, OffsetOutOfRange)
		r.errorf("%v", err)
		r.queue.pushPartitionErr(f.gen, f.tp, err)
		return false
	}
	if f.offset > last {
		r.errorf("the kafka reader is reading past the last offset for partition %d of %s at offset %d (log end %d): waiting for the offset to exist",
			f.tp.partition, f.tp.topic, f.offset, last)
		// A log that ends before the position may be a topic deleted and
		// created again: fresh metadata (a new topic ID) tells the next
		// step (fetcher.recreated).
		if err := r.refreshMetadata(ctx, f.tp.topic); err != nil && ctx.Err() == nil {
			r.errorf("kafka reader: partition %s: refreshing metadata: %v", f.tp, err)
		}
		return true
	}
	target := first
	if r.config.StartOffset == LastOffset {
		target = last
	}
	r.stats.errors.observe(1)
	r.errorf("the kafka reader is reading before the first offset for partition %d of %s (offset %d < first offset %d): moving to offset %d (%d messages skipped)",
		f.tp.partition, f.tp.topic, f.offset, first, target, target-f.offset)
	f.offset = target
	return true
}
