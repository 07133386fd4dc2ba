package kafka

import (
	"errors"
	"io"

	"github.com/rackfetch/kafka-go/protocol"
)

// The fetch path of the Reader: turning one fetched Batch into Messages.
//
// Records decoded by a Batch alias its response buffer, which goes back to
// the Conn on Close. The Reader hands messages to the application long
// after that, so they are copied out; to keep allocations per batch rather
// than per record, every key, value and header value of a batch is copied
// into one buffer, the messages into one slice and the headers into one
// more. A message kept by the application keeps that batch's buffer alive.

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

// batchDecoder decodes batches; it keeps a scratch slice of records so
// decoding allocates per batch, not per record. One per fetcher.
type batchDecoder struct {
	recs []protocol.Record
}

// decode reads every record of b into messages the caller owns. err is the
// batch's error (nil at a clean end); records before an error are still
// returned, so nothing fetched is dropped.
func (d *batchDecoder) decode(b *Batch) (fb fetchedBatch, err error) {
	fb.epoch, fb.lastOffset = -1, -1
	d.recs = d.recs[:0]
	size, headers := 0, 0
	for {
		rec, e := b.next()
		if e != nil {
			if !errors.Is(e, io.EOF) {
				err = e
			}
			break
		}
		d.recs = append(d.recs, rec)
		fb.epoch = b.records.Batch().PartitionLeaderEpoch
		fb.lastOffset = rec.Offset
		size += len(rec.Key) + len(rec.Value)
		fb.bytes += int64(len(rec.Key) + len(rec.Value))
		for _, h := range rec.Headers {
			size += len(h.Value)
		}
		headers += len(rec.Headers)
	}
	fb.next = b.offset
	if len(d.recs) == 0 {
		return fb, err
	}

	buf := make([]byte, 0, size)
	var hdrs []Header
	if headers > 0 {
		hdrs = make([]Header, 0, headers)
	}
	fb.msgs = make([]Message, len(d.recs))
	for i := range d.recs {
		rec := &d.recs[i]
		m := &fb.msgs[i]
		m.Topic = b.topic
		m.Partition = b.partition
		m.Offset = rec.Offset
		m.HighWaterMark = b.highWaterMark
		m.Time = rec.Time()
		m.Key = clip(&buf, rec.Key)
		m.Value = clip(&buf, rec.Value)
		if len(rec.Headers) > 0 {
			start := len(hdrs)
			for _, h := range rec.Headers {
				hdrs = append(hdrs, Header{Key: h.Key, Value: clip(&buf, h.Value)})
			}
			m.Headers = hdrs[start:len(hdrs):len(hdrs)]
		}
	}
	// Drop the aliases into the response buffer before it is reused.
	clear(d.recs)
	d.recs = d.recs[:0]
	return fb, err
}
