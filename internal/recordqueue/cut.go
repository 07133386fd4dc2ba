package recordqueue

import (
	"errors"
	"fmt"

	"github.com/rackfetch/kafka-go/protocol"
)

// A broker ends a partition's data inside a record batch only at a limit
// of the fetch: the partition's max bytes, or the response's max bytes once
// earlier partitions took the rest. The cut batch is then fetched again,
// first in the next answer; KIP-74 brokers send a response's first batch
// whole. Data that ends inside a batch short of both limits was sent
// malformed: fetching it again at once brings the same bytes, and treated
// as a cut it was fetched again and again without a pause or an error.

// ErrTruncatedBatch says the leader sent a record batch shorter than its
// length within the fetch's limits.
var ErrTruncatedBatch = errors.New("record batch truncated within the fetch's max bytes")

// codeMessageSizeTooLarge is Kafka's MESSAGE_TOO_LARGE.
const codeMessageSizeTooLarge = 10

// Limits is what bounded one fetched partition's data.
type Limits struct {
	MaxBytes int  // the Reader's MaxBytes: the most a fetch ever asks
	Asked    int  // the partition's max bytes in this request (MaxBytes or less)
	Full     bool // the response's records reached the request's max bytes
}

// cutError tells what the partition's data ending inside a batch means,
// once every record before it was read: nil when the fetch is only to be
// made again from the cut batch. progress says records or batches before
// it were read: the next fetch starts at the cut batch, so it cannot loop.
func (d *Decoder) cutError(r *protocol.RecordReader, size int, topic string, partition int, offset int64, broker int, lim Limits, progress bool) error {
	c, ok := r.CutBatch()
	if !ok {
		return nil
	}
	if need, first := r.NeedMoreBytes(); first && size >= lim.MaxBytes {
		// Cut by the partition's own limit: it will be cut there forever.
		return fmt.Errorf("fetching %s/%d at offset %d: the record batch there (%d bytes) is larger than the fetch's max bytes: %w",
			topic, partition, max(offset, r.NextOffset()), need, d.KafkaError(codeMessageSizeTooLarge))
	}
	if progress || size >= lim.Asked || lim.Full {
		return nil
	}
	return fmt.Errorf("fetching %s/%d at offset %d from broker %d: %w", topic, partition, offset, broker, &protocol.RecordBatchError{
		Offset: c.Offset,
		Err: fmt.Errorf("%w: %w: its length says %d bytes, %d arrived, in %d bytes of records for the partition (max bytes %d) and a response under its max bytes",
			protocol.ErrCorruptRecords, ErrTruncatedBatch, c.Size, c.Present, size, lim.Asked),
	})
}
