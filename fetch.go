package kafka

import (
	"errors"
	"fmt"
	"io"

	"github.com/rackfetch/kafka-go/protocol"
)

// The fetch path of the Reader: turning one fetched partition into
// Messages.
//
// Messages point into the fetch response: keys, values and headers of
// uncompressed batches alias the response frame, those of compressed
// batches the buffer the batch was decompressed into. Neither buffer is
// ever reused (the engine reads every response into a fresh one, the
// record reader decompresses every batch into a fresh one), so no record
// is copied; a Message the application keeps keeps its buffer alive, as a
// kafka-go Message keeps the bytes it was given.

// fetchedBatch is what one fetch of one partition produced.
type fetchedBatch struct {
	msgs  []Message
	bytes int64 // keys and values, as kafka-go's Bytes stat counts them

	// next is the offset to fetch next: past the last record and past
	// control batches, aborted and compacted records.
	next int64

	// epoch is the partition leader epoch of the batch the last record
	// came from (-1: unknown, legacy messages or no record).
	epoch int32
	// lastOffset is the offset of the last record (-1: none).
	lastOffset int64
}

// partitionDecoder decodes fetched partitions; one per fetcher, so that
// its record reader's state is reused.
type partitionDecoder struct {
	records protocol.RecordReader
}

// decode reads every record of p, fetched at offset from broker with
// partition max bytes partMax, into messages. err is the partition's error (nil at a clean end); records
// before an error are still returned, so nothing fetched is dropped.
func (d *partitionDecoder) decode(p *protocol.FetchResponsePartition, topic string, partition int, offset int64, isolation IsolationLevel, broker, partMax int) (fb fetchedBatch, err error) {
	fb.epoch, fb.lastOffset, fb.next = -1, -1, offset
	if p.ErrorCode != 0 {
		return fb, fmt.Errorf("fetching %s/%d at offset %d from broker %d: %w", topic, partition, offset, broker, Error(p.ErrorCode))
	}
	// Nothing past the high watermark (or, reading committed, the last
	// stable offset) is ever handed out, whatever the broker sent.
	limit := p.HighWatermark
	if isolation == ReadCommitted && p.LastStableOffset >= 0 {
		limit = p.LastStableOffset
	}
	if limit <= 0 || len(p.Records) == 0 {
		return fb, nil
	}
	opts := protocol.RecordReadOptions{MinOffset: offset, MaxOffset: limit, IsolationLevel: int8(isolation)}
	for _, a := range p.AbortedTransactions {
		opts.AbortedTransactions = append(opts.AbortedTransactions, protocol.AbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
	}
	r := &d.records
	r.Reset(p.Records, opts)
	defer r.Reset(nil, protocol.RecordReadOptions{}) // drop the aliases
	for {
		rec, e := r.Next()
		if e != nil {
			if !errors.Is(e, io.EOF) {
				err = fmt.Errorf("decoding %s/%d: %w", topic, partition, e)
			} else if size, ok := r.NeedMoreBytes(); ok && len(fb.msgs) == 0 && len(p.Records) >= partMax {
				// A batch cut short by the response's limit (the
				// Reader's budget, other partitions first) is only
				// fetched again; one cut by the partition's own limit
				// will be cut there forever.
				err = fmt.Errorf("fetching %s/%d at offset %d: the record batch there (%d bytes) is larger than the fetch's max bytes: %w",
					topic, partition, max(fb.next, r.NextOffset()), size, MessageSizeTooLarge)
			}
			break
		}
		if fb.msgs == nil {
			// Sized from the bytes: at least ~70 bytes a record on the wire.
			fb.msgs = make([]Message, 0, min(len(p.Records)/70+1, 1<<16))
		}
		fb.epoch = r.Batch().PartitionLeaderEpoch
		fb.lastOffset = rec.Offset
		fb.bytes += int64(len(rec.Key) + len(rec.Value))
		fb.msgs = append(fb.msgs, Message{
			Topic:         topic,
			Partition:     partition,
			Offset:        rec.Offset,
			HighWaterMark: p.HighWatermark,
			Time:          rec.Time(),
			Key:           rec.Key,
			Value:         rec.Value,
			Headers:       rec.Headers,
		})
	}
	if n := r.NextOffset(); n > fb.next {
		fb.next = n
	}
	if fb.lastOffset >= fb.next {
		fb.next = fb.lastOffset + 1
	}
	return fb, err
}
