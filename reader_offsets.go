package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

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
			if !sleep(ctx, r.backoff(attempt)) {
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
		ask := &offsetAsk{topic: topic, partition: int32(partition), epoch: int32(p.LeaderEpoch), timestamp: timestamp,
			done: make(chan offsetAnswer, 1)}
		var err error
		offset, err = listOffsetBatched(ctx, c, int8(r.config.IsolationLevel), ask)
		return err
	})
	return offset, err
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
