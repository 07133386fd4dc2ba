package recordqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/rackfetch/kafka-go/protocol"
)

// Batch is what one fetch of one partition produced.
type Batch struct {
	Run   *Run  // nil when no record
	Bytes int64 // keys and values, as kafka-go's Bytes stat counts them

	// Next is the offset to fetch next: past the last record and past
	// control batches, aborted and compacted records.
	Next int64

	// Epoch is the partition leader epoch of the batch the last record
	// came from (-1: unknown, legacy messages or no record).
	Epoch int32
	// LastOffset is the offset of the last record (-1: none).
	LastOffset int64
}

// Records returns the records of the batch.
func (fb *Batch) Records() int {
	if fb.Run == nil {
		return 0
	}
	return len(fb.Run.recs)
}

// readCommitted is the isolation level of a fetch reading only committed
// records (the Fetch request's and protocol.RecordReadOptions').
const readCommitted = 1

// Decoder decodes fetched partitions; one per fetcher, so that its record
// reader's state is reused.
type Decoder struct {
	// KafkaError returns the error of a Kafka error code (the client's
	// own error type, which applications match).
	KafkaError func(code int16) error

	records protocol.RecordReader
}

// Decode reads every record of p, fetched at offset from broker within lim
// at the isolation level, into a run. err is the partition's error (nil at
// a clean end); records before an error are still returned, so nothing
// fetched is dropped.
func (d *Decoder) Decode(p *protocol.FetchResponsePartition, topic string, partition int, offset int64, isolation int8, broker int, lim Limits) (fb Batch, err error) {
	fb.Epoch, fb.LastOffset, fb.Next = -1, -1, offset
	if p.ErrorCode != 0 {
		return fb, fmt.Errorf("fetching %s/%d at offset %d from broker %d: %w", topic, partition, offset, broker, d.KafkaError(p.ErrorCode))
	}
	// Nothing past the high watermark (or, reading committed, the last
	// stable offset) is ever handed out, whatever the broker sent.
	limit := p.HighWatermark
	if isolation == readCommitted && p.LastStableOffset >= 0 {
		limit = p.LastStableOffset
	}
	if limit <= 0 || len(p.Records) == 0 {
		return fb, nil
	}
	opts := protocol.RecordReadOptions{MinOffset: offset, MaxOffset: limit, IsolationLevel: isolation}
	for _, a := range p.AbortedTransactions {
		opts.AbortedTransactions = append(opts.AbortedTransactions, protocol.AbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset})
	}
	r := &d.records
	r.Reset(p.Records, opts)
	defer r.Reset(nil, protocol.RecordReadOptions{}) // drop the aliases
	var run *Run
	last := -1 // index in run.bufs of the current batch's buffer
	var lastBase []byte
	for {
		rec, e := r.Next()
		if e != nil {
			if !errors.Is(e, io.EOF) {
				err = fmt.Errorf("decoding %s/%d: %w", topic, partition, e)
			} else {
				err = d.cutError(r, len(p.Records), topic, partition, offset, broker, lim, run != nil || r.NextOffset() > offset)
			}
			break
		}
		if run == nil {
			run = &Run{Topic: topic, Partition: partition, HW: p.HighWatermark,
				recs: make([]Record, 0, countRecords(p.Records))}
		}
		if base := r.Buffer(); last < 0 || !sameBuffer(base, lastBase) {
			run.bufs = append(run.bufs, base)
			last, lastBase = len(run.bufs)-1, base
		}
		cr := Record{Offset: rec.Offset, Timestamp: rec.Timestamp, hdrs: -1}
		cr.key = run.place(last, rec.Key)
		cr.value = run.place(last, rec.Value)
		if len(rec.Headers) > 0 {
			cr.hdrs, cr.nhdrs = int32(len(run.hdrs)), int32(len(rec.Headers))
			run.hdrs = append(run.hdrs, rec.Headers...)
		}
		run.recs = append(run.recs, cr)
		fb.Epoch = r.Batch().PartitionLeaderEpoch
		fb.LastOffset = rec.Offset
		fb.Bytes += int64(len(rec.Key) + len(rec.Value))
	}
	if run != nil {
		run.bytes = fb.Bytes
		fb.Run = run
	}
	if n := r.NextOffset(); n > fb.Next {
		fb.Next = n
	}
	if fb.LastOffset >= fb.Next {
		fb.Next = fb.LastOffset + 1
	}
	return fb, err
}

// countRecords sizes a run: the records the v2 batch headers of data
// announce, one per legacy message, within what the bytes can hold (a
// record takes 7 bytes at least), so a hostile count allocates nothing
// large. Decoding checks everything; this only reads lengths.
func countRecords(data []byte) int {
	const minRecord = 7
	n, total := 0, len(data)
	for len(data) >= 61 {
		size := int(int32(binary.BigEndian.Uint32(data[8:])))
		if size < 0 || size > len(data)-12 {
			break
		}
		if data[16] == 2 {
			n += max(int(int32(binary.BigEndian.Uint32(data[57:]))), 0)
		} else {
			n++
		}
		data = data[12+size:]
	}
	return min(n, total/minRecord) + 1
}

// sameBuffer reports whether a and b start at the same byte.
func sameBuffer(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}
