package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/protocol"
)

// Offsets of the Reader are resolved at the partition LEADER, through the
// cluster's control connection to it: ListOffsets (first, last, by time)
// and OffsetForLeaderEpoch (KIP-320 truncation checks). Followers refuse
// both, so the fetch path never sends them to the broker it reads from.

// leaderAttempts bounds the retries of one leader request while leadership
// moves (each retry refreshes metadata first).
const leaderAttempts = 6

// retriableLeaderError reports errors after which a leader request is worth
// retrying with fresh metadata: leadership moved, the leader is not ready
// yet, or the connection failed.
func retriableLeaderError(err error) bool {
	switch {
	case errors.Is(err, NotLeaderForPartition), errors.Is(err, FencedLeaderEpoch),
		errors.Is(err, UnknownLeaderEpoch), errors.Is(err, LeaderNotAvailable),
		errors.Is(err, OffsetNotAvailable), errors.Is(err, UnknownTopicOrPartition),
		errors.Is(err, ReplicaNotAvailable), errors.Is(err, RequestTimedOut),
		errors.Is(err, NotEnoughReplicas), errors.Is(err, KafkaStorageError):
		return true
	}
	return isConnError(err)
}

// isConnError reports failures of the connection itself, after which it
// must be dialed again.
func isConnError(err error) bool {
	var ne net.Error
	return errors.Is(err, errConnBroken) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || errors.As(err, &ne) || errors.Is(err, RequestTimedOut)
}

// atLeader runs do on the control connection to the partition's leader,
// refreshing metadata and retrying while the error is retriable. do must
// use the context it is given, which carries the request's deadline.
func (r *Reader) atLeader(ctx context.Context, topic string, partition int, do func(context.Context, *Conn, Partition) error) error {
	var err error
	for attempt := 0; attempt < leaderAttempts; attempt++ {
		if attempt > 0 {
			if !retry.Sleep(ctx, r.backoff(attempt)) {
				return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
			}
			if rerr := r.cluster.refresh(ctx, topic); rerr != nil && err == nil {
				err = rerr
			}
		}
		// One attempt under the cluster's control deadline: a frozen
		// leader fails it with RequestTimedOut, and the next attempt reads
		// metadata again, which names the new leader once one is elected.
		err = r.cluster.atLeader(ctx, topic, partition, do)
		if err == nil || !retriableLeaderError(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// listOffset asks the partition leader for the offset of timestamp: a time
// in milliseconds, or FirstOffset (-2) / LastOffset (-1). With
// ReadCommitted, LastOffset is the last stable offset.
func (r *Reader) listOffset(ctx context.Context, topic string, partition int, timestamp int64) (int64, error) {
	var offset int64
	err := r.atLeader(ctx, topic, partition, func(ctx context.Context, c *Conn, p Partition) error {
		var err error
		offset, err = consumer.ListOffset(ctx, offsetTarget(c, int8(r.config.IsolationLevel)), consumer.OffsetAsk{
			Topic: topic, Partition: int32(partition), Epoch: int32(p.LeaderEpoch), Timestamp: timestamp})
		return err
	})
	return offset, err
}

// offsetTarget sends the batched start-offset asks (consumer.ListOffset)
// over c.
func offsetTarget(c *Conn, isolation int8) consumer.OffsetTarget {
	return consumer.OffsetTarget{Conn: c, Broker: int(c.broker), Isolation: isolation,
		RoundTrip: func(ctx context.Context, req protocol.Request) (protocol.Response, error) {
			resp, _, err := c.roundTrip(ctx, req, -1)
			return resp, err
		},
		ErrorCode: func(code int16) error { return Error(code) },
	}
}

// firstLastOffsets returns the partition's first and last offsets.
func (r *Reader) firstLastOffsets(ctx context.Context, topic string, partition int) (first, last int64, err error) {
	if first, err = r.listOffset(ctx, topic, partition, FirstOffset); err != nil {
		return 0, 0, err
	}
	if last, err = r.listOffset(ctx, topic, partition, LastOffset); err != nil {
		return 0, 0, err
	}
	return first, last, nil
}

// epochEnd asks the partition leader where leader epoch ends (KIP-320):
// the largest epoch it knows that is <= epoch, and that epoch's end
// offset, -1 when the leader knows no such epoch.
func (r *Reader) epochEnd(ctx context.Context, topic string, partition int, epoch int32) (endEpoch int32, end int64, err error) {
	end = -1
	err = r.atLeader(ctx, topic, partition, func(ctx context.Context, c *Conn, p Partition) error {
		req := &protocol.OffsetForLeaderEpochRequest{
			ReplicaID: -1,
			Topics: []protocol.OffsetForLeaderEpochRequestTopic{{
				Topic: topic,
				Partitions: []protocol.OffsetForLeaderEpochRequestPartition{{
					Partition:          int32(partition),
					CurrentLeaderEpoch: int32(p.LeaderEpoch),
					LeaderEpoch:        epoch,
				}},
			}},
		}
		resp, _, err := c.roundTrip(ctx, req, -1)
		if err != nil {
			return fmt.Errorf("asking the end of leader epoch %d of %s/%d: %w", epoch, topic, partition, err)
		}
		for _, t := range resp.(*protocol.OffsetForLeaderEpochResponse).Topics {
			for _, rp := range t.Partitions {
				if t.Topic != topic || rp.Partition != int32(partition) {
					continue
				}
				if rp.ErrorCode != 0 {
					return fmt.Errorf("asking the end of leader epoch %d of %s/%d on broker %d: %w", epoch, topic, partition, c.broker, Error(rp.ErrorCode))
				}
				endEpoch, end = rp.LeaderEpoch, rp.EndOffset
				return nil
			}
		}
		return fmt.Errorf("asking the end of leader epoch %d of %s/%d: partition missing from the response", epoch, topic, partition)
	})
	return endEpoch, end, err
}

// humanOffset prints FirstOffset and LastOffset by name in log lines.
type humanOffset int64

func (o humanOffset) String() string {
	switch int64(o) {
	case FirstOffset:
		return "first offset"
	case LastOffset:
		return "last offset"
	}
	return strconv.FormatInt(int64(o), 10)
}

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
