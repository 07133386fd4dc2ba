package kafka

import (
	"errors"
	"io"

	"github.com/rackfetch/kafka-go/compress"
	"github.com/rackfetch/kafka-go/protocol"
)

// The fetch path of the Reader: turning one fetched Batch into Messages.
//
// Records decoded by a Batch alias its response buffer, which goes back to
// the Conn on Close, or its decompression buffer, which the next compressed
// batch reuses. The Reader hands messages to the application long after
// that, so they are copied out; to keep allocations per batch rather than
// per record, every key, value and header value of a batch is copied into
// one buffer (one per decFlush bytes), the messages into one slice and the
// headers into one more. A message kept by the application keeps that
// buffer alive.

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

// batchDecoder decodes batches; it keeps scratch space across batches so
// that decoding allocates per batch, not per record. One per fetcher.
//
// The Batch reuses its decompression buffer and headers array
// (protocol.RecordReadOptions.ReuseBuffers), so a record is only valid
// until the next one is read. Keys and values of uncompressed batches
// alias the response buffer, which lasts until the Batch is closed, and are
// kept as they are; those of compressed batches are copied at once into the
// scratch buffer. The messages get one exact copy of either at the end, or
// whenever the scratch buffer fills up (decFlush), which bounds it.
type batchDecoder struct {
	recs    []protocol.Record
	hdrs    []protocol.RecordHeader
	scratch []byte
}

const (
	// decFlush is how many scratch bytes make the decoder build the
	// messages of the records decoded so far.
	decFlush = 1 << 20
	// decMaxScratch bounds the scratch buffer kept after a batch (a
	// single record may be larger than decFlush).
	decMaxScratch = 8 << 20
)

// decode reads every record of b into messages the caller owns. err is the
// batch's error (nil at a clean end); records before an error are still
// returned, so nothing fetched is dropped.
func (d *batchDecoder) decode(b *Batch) (fb fetchedBatch, err error) {
	fb.epoch, fb.lastOffset = -1, -1
	d.recs, d.hdrs, d.scratch = d.recs[:0], d.hdrs[:0], d.scratch[:0]
	for {
		rec, e := b.next()
		if e != nil {
			if !errors.Is(e, io.EOF) {
				err = e
			}
			break
		}
		h := b.records.Batch()
		fb.epoch = h.PartitionLeaderEpoch
		fb.lastOffset = rec.Offset
		fb.bytes += int64(len(rec.Key) + len(rec.Value))
		if len(rec.Headers) > 0 {
			start := len(d.hdrs)
			d.hdrs = append(d.hdrs, rec.Headers...)
			rec.Headers = d.hdrs[start:len(d.hdrs):len(d.hdrs)]
		}
		if h.Compression() != compress.None {
			// Slices into an outgrown scratch array stay valid: nothing
			// is written over before the next flush.
			rec.Key, rec.Value = d.keep(rec.Key), d.keep(rec.Value)
			for i := range rec.Headers {
				rec.Headers[i].Value = d.keep(rec.Headers[i].Value)
			}
		}
		d.recs = append(d.recs, rec)
		if len(d.scratch) >= decFlush {
			d.flush(b, &fb)
		}
	}
	fb.next = b.offset
	d.flush(b, &fb)
	if cap(d.scratch) > decMaxScratch {
		d.scratch = nil
	}
	return fb, err
}

// keep copies p into the scratch buffer.
func (d *batchDecoder) keep(p []byte) []byte {
	if p == nil {
		return nil
	}
	start := len(d.scratch)
	d.scratch = append(d.scratch, p...)
	return d.scratch[start:len(d.scratch):len(d.scratch)]
}

// flush appends the messages of the records decoded so far to fb.msgs,
// copying their bytes into one buffer, and empties the scratch space.
func (d *batchDecoder) flush(b *Batch, fb *fetchedBatch) {
	if len(d.recs) == 0 {
		return
	}
	size := 0
	for i := range d.recs {
		rec := &d.recs[i]
		size += len(rec.Key) + len(rec.Value)
		for _, h := range rec.Headers {
			size += len(h.Value)
		}
	}
	buf := make([]byte, 0, size)
	var hdrs []Header
	if len(d.hdrs) > 0 {
		hdrs = make([]Header, 0, len(d.hdrs))
	}
	if fb.msgs == nil {
		fb.msgs = make([]Message, 0, len(d.recs))
	}
	for i := range d.recs {
		rec := &d.recs[i]
		m := Message{
			Topic:         b.topic,
			Partition:     b.partition,
			Offset:        rec.Offset,
			HighWaterMark: b.highWaterMark,
			Time:          rec.Time(),
			Key:           clip(&buf, rec.Key),
			Value:         clip(&buf, rec.Value),
		}
		if len(rec.Headers) > 0 {
			start := len(hdrs)
			for _, h := range rec.Headers {
				hdrs = append(hdrs, Header{Key: h.Key, Value: clip(&buf, h.Value)})
			}
			m.Headers = hdrs[start:len(hdrs):len(hdrs)]
		}
		fb.msgs = append(fb.msgs, m)
	}
	// Drop the aliases into the response buffer before it is reused.
	clear(d.recs)
	clear(d.hdrs)
	d.recs, d.hdrs, d.scratch = d.recs[:0], d.hdrs[:0], d.scratch[:0]
}
