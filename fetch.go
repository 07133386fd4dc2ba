package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
	"unsafe"

	"github.com/rackfetch/kafka-go/protocol"
)

// The fetch path of the Reader: turning one fetched partition into a run
// of records the application pops Messages from.
//
// Nothing is copied: keys, values and headers of uncompressed batches stay
// in the fetch response's frame, those of compressed batches in the buffer
// the batch was decompressed into, and neither buffer is ever reused (the
// engine reads every response into a fresh one, the record reader
// decompresses every batch into a fresh one). A run keeps each record as a
// compact, pointer-free entry (where its bytes are), and the Message is
// made when the application takes it: the garbage collector never scans
// per-record pointers, and a Message the application keeps keeps its
// buffer alive, as a kafka-go Message keeps the bytes it was given.

// span locates a key or value: n bytes at off in the run's buffer buf; n
// is -1 for null.
type span struct{ buf, off, n int32 }

// compactRecord is one record of a run.
type compactRecord struct {
	offset     int64
	timestamp  int64 // ms since the epoch, -1: none
	key, value span
	hdrs       int32 // first header in the run's hdrs
	nhdrs      int32
}

// fetchedBatch is what one fetch of one partition produced.
type fetchedBatch struct {
	run   *queuedRun // nil when no record
	bytes int64      // keys and values, as kafka-go's Bytes stat counts them

	// next is the offset to fetch next: past the last record and past
	// control batches, aborted and compacted records.
	next int64

	// epoch is the partition leader epoch of the batch the last record
	// came from (-1: unknown, legacy messages or no record).
	epoch int32
	// lastOffset is the offset of the last record (-1: none).
	lastOffset int64
}

func (fb *fetchedBatch) records() int {
	if fb.run == nil {
		return 0
	}
	return len(fb.run.recs)
}

// partitionDecoder decodes fetched partitions; one per fetcher, so that
// its record reader's state is reused.
type partitionDecoder struct {
	records protocol.RecordReader
}

// decode reads every record of p, fetched at offset from broker within
// lim, into a run. err is the partition's error (nil at a clean end);
// records before an error are still returned, so nothing fetched is
// dropped.
func (d *partitionDecoder) decode(p *protocol.FetchResponsePartition, topic string, partition int, offset int64, isolation IsolationLevel, broker int, lim fetchLimits) (fb fetchedBatch, err error) {
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
	var run *queuedRun
	last := -1 // index in run.bufs of the current batch's buffer
	var lastBase []byte
	for {
		rec, e := r.Next()
		if e != nil {
			if !errors.Is(e, io.EOF) {
				err = fmt.Errorf("decoding %s/%d: %w", topic, partition, e)
			} else {
				err = cutError(r, len(p.Records), topic, partition, offset, broker, lim, run != nil || r.NextOffset() > offset)
			}
			break
		}
		if run == nil {
			run = &queuedRun{topic: topic, partition: partition, hw: p.HighWatermark,
				recs: make([]compactRecord, 0, countRecords(p.Records))}
		}
		if base := r.Buffer(); last < 0 || !sameBuffer(base, lastBase) {
			run.bufs = append(run.bufs, base)
			last, lastBase = len(run.bufs)-1, base
		}
		cr := compactRecord{offset: rec.Offset, timestamp: rec.Timestamp, hdrs: -1}
		cr.key = run.place(last, rec.Key)
		cr.value = run.place(last, rec.Value)
		if len(rec.Headers) > 0 {
			cr.hdrs, cr.nhdrs = int32(len(run.hdrs)), int32(len(rec.Headers))
			run.hdrs = append(run.hdrs, rec.Headers...)
		}
		run.recs = append(run.recs, cr)
		fb.epoch = r.Batch().PartitionLeaderEpoch
		fb.lastOffset = rec.Offset
		fb.bytes += int64(len(rec.Key) + len(rec.Value))
	}
	if run != nil {
		run.bytes = fb.bytes
		fb.run = run
	}
	if n := r.NextOffset(); n > fb.next {
		fb.next = n
	}
	if fb.lastOffset >= fb.next {
		fb.next = fb.lastOffset + 1
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

// place returns where s lies in buffer i of the run; bytes that lie
// elsewhere (never, as the record reader works today) are copied into a
// buffer of their own.
func (run *queuedRun) place(i int, s []byte) span {
	if s == nil {
		return span{n: -1}
	}
	if off, ok := offsetIn(run.bufs[i], s); ok {
		return span{buf: int32(i), off: int32(off), n: int32(len(s))}
	}
	run.bufs = append(run.bufs, append([]byte(nil), s...))
	return span{buf: int32(len(run.bufs) - 1), n: int32(len(s))}
}

// offsetIn returns the offset of s within buf, if s lies wholly inside it.
func offsetIn(buf, s []byte) (int, bool) {
	if len(s) == 0 {
		return 0, true
	}
	b := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	if p < b || p-b > uintptr(len(buf)) || uintptr(len(s)) > uintptr(len(buf))-(p-b) {
		return 0, false
	}
	return int(p - b), true
}

// slice returns the bytes sp locates.
func (run *queuedRun) slice(sp span) []byte {
	if sp.n < 0 {
		return nil
	}
	end := sp.off + sp.n
	return run.bufs[sp.buf][sp.off:end:end]
}

// fill makes *m the Message of record i. It stores field by field into
// the caller's Message (no Message-sized temporary to copy: those copies
// were half of FetchMessage's own cost).
func (run *queuedRun) fill(i int, m *Message) {
	if run.msgs != nil {
		*m = run.msgs[i]
		return
	}
	cr := &run.recs[i]
	m.Topic = run.topic
	m.Partition = run.partition
	m.Offset = cr.offset
	m.HighWaterMark = run.hw
	m.Key = run.slice(cr.key)
	m.Value = run.slice(cr.value)
	m.Headers = nil
	if cr.nhdrs > 0 {
		end := cr.hdrs + cr.nhdrs
		m.Headers = run.hdrs[cr.hdrs:end:end]
	}
	m.WriterData = nil
	m.Time = time.Time{}
	if cr.timestamp >= 0 {
		m.Time = time.UnixMilli(cr.timestamp)
	}
}

// size returns the bytes of keys and values of records [i, j).
func (run *queuedRun) size(i, j int) int64 {
	if run.msgs != nil {
		var n int64
		for _, m := range run.msgs[i:j] {
			n += int64(len(m.Key) + len(m.Value))
		}
		return n
	}
	if i == 0 && j == len(run.recs) {
		return run.bytes
	}
	var n int64
	for k := i; k < j; k++ {
		n += int64(max(run.recs[k].key.n, 0) + max(run.recs[k].value.n, 0))
	}
	return n
}

// len returns the records of the run.
func (run *queuedRun) len() int {
	if run.msgs != nil {
		return len(run.msgs)
	}
	return len(run.recs)
}
