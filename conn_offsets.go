package kafka

import (
	"context"
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

const (
	SeekStart    = 0 // Seek relative to the first offset available in the partition.
	SeekAbsolute = 1 // Seek to an absolute offset.
	SeekEnd      = 2 // Seek relative to the last offset available in the partition.
	SeekCurrent  = 3 // Seek relative to the current offset.

	// SeekDontCheck may be combined with SeekAbsolute or SeekCurrent to skip
	// the bounds check, which needs a ListOffsets request. Followers refuse
	// ListOffsets, so a Conn to a follower must seek with this flag.
	SeekDontCheck = 1 << 30
)

// Offset returns the current offset of the connection and how to read it:
// SeekStart and SeekEnd for the FirstOffset and LastOffset markers,
// SeekAbsolute otherwise.
func (c *Conn) Offset() (offset int64, whence int) {
	c.offsetMu.Lock()
	offset = c.offset
	c.offsetMu.Unlock()
	switch offset {
	case FirstOffset:
		return 0, SeekStart
	case LastOffset:
		return 0, SeekEnd
	default:
		return offset, SeekAbsolute
	}
}

func (c *Conn) setOffset(offset int64) {
	c.offsetMu.Lock()
	c.offset = offset
	c.offsetMu.Unlock()
}

// Seek sets the offset of the next read. Without SeekDontCheck the result
// is checked against the partition's first and last offsets (ListOffsets,
// which only the leader answers). It returns the new absolute offset.
func (c *Conn) Seek(offset int64, whence int) (int64, error) {
	dontCheck := whence&SeekDontCheck != 0
	whence &^= SeekDontCheck
	switch whence {
	case SeekStart, SeekAbsolute, SeekEnd, SeekCurrent:
	default:
		return 0, fmt.Errorf("whence must be one of 0, 1, 2, or 3. (whence = %d)", whence)
	}
	if dontCheck {
		switch whence {
		case SeekAbsolute:
			c.setOffset(offset)
			return offset, nil
		case SeekCurrent:
			c.offsetMu.Lock()
			c.offset += offset
			offset = c.offset
			c.offsetMu.Unlock()
			return offset, nil
		}
	}
	if whence == SeekAbsolute {
		c.offsetMu.Lock()
		unchanged := offset == c.offset
		c.offsetMu.Unlock()
		if unchanged {
			return offset, nil
		}
	}
	if whence == SeekCurrent {
		c.offsetMu.Lock()
		offset += c.offset
		c.offsetMu.Unlock()
	}
	first, last, err := c.ReadOffsets()
	if err != nil {
		return 0, err
	}
	switch whence {
	case SeekStart:
		offset = first + offset
	case SeekEnd:
		offset = last - offset
	}
	if offset < first || offset > last {
		return 0, fmt.Errorf("seeking %s/%d to %d outside [%d, %d]: %w", c.topic, c.partition, offset, first, last, OffsetOutOfRange)
	}
	c.setOffset(offset)
	return offset, nil
}

// ReadOffset returns the offset of the first message with a timestamp equal
// or greater to t.
func (c *Conn) ReadOffset(t time.Time) (int64, error) {
	return c.readOffset(context.Background(), t.UnixMilli())
}

// ReadFirstOffset returns the first offset available on the connection.
func (c *Conn) ReadFirstOffset() (int64, error) {
	return c.readOffset(context.Background(), FirstOffset)
}

// ReadLastOffset returns the last offset available on the connection.
func (c *Conn) ReadLastOffset() (int64, error) {
	return c.readOffset(context.Background(), LastOffset)
}

// ReadOffsets returns the first and last offsets of the partition.
func (c *Conn) ReadOffsets() (first, last int64, err error) {
	if first, err = c.ReadFirstOffset(); err != nil {
		return 0, 0, err
	}
	if last, err = c.ReadLastOffset(); err != nil {
		return 0, 0, err
	}
	return first, last, nil
}

// readOffset sends ListOffsets for the Conn's partition. timestamp is a
// time in milliseconds, or FirstOffset (-2) / LastOffset (-1). Only the
// leader answers: a follower returns NotLeaderForPartition.
func (c *Conn) readOffset(ctx context.Context, timestamp int64) (int64, error) {
	req := &protocol.ListOffsetsRequest{
		ReplicaID: -1,
		Topics: []protocol.ListOffsetsRequestTopic{{
			Name: c.topic,
			Partitions: []protocol.ListOffsetsRequestPartition{{
				PartitionIndex:     c.partition,
				CurrentLeaderEpoch: c.leaderEpoch.Load(),
				Timestamp:          timestamp,
			}},
		}},
	}
	resp, _, err := c.roundTrip(ctx, req, -1)
	if err != nil {
		return 0, fmt.Errorf("listing offsets of %s/%d: %w", c.topic, c.partition, err)
	}
	for _, t := range resp.(*protocol.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			if p.PartitionIndex != c.partition || t.Name != c.topic {
				continue
			}
			if p.ErrorCode != 0 {
				return 0, fmt.Errorf("listing offsets of %s/%d on broker %d: %w", c.topic, c.partition, c.broker, Error(p.ErrorCode))
			}
			return p.Offset, nil
		}
	}
	return 0, fmt.Errorf("listing offsets of %s/%d: partition missing from the response", c.topic, c.partition)
}
