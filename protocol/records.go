package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/rackfetch/kafka-go/compress"
)

// Record is one Kafka record.
//
// Records decoded by RecordReader alias memory they do not own, so that no
// record is copied: Key, Value and header values point into the bytes
// handed to RecordReader.Reset (uncompressed batches) or into the buffer
// that holds one decompressed batch (compressed ones). The reader never
// writes to that memory again (unless RecordReadOptions.ReuseBuffers is
// set), so records stay valid as long as the caller leaves its input alone;
// but any record kept keeps its whole buffer alive. Copy what you keep for
// long.
type Record struct {
	Offset int64
	// Timestamp in milliseconds since the Unix epoch, -1 when absent
	// (message format v0).
	Timestamp int64
	Key       []byte // nil when null
	Value     []byte // nil when null (a tombstone)
	Headers   []RecordHeader
}

// Time returns the timestamp as a time.Time, the zero time when absent.
func (r *Record) Time() time.Time {
	if r.Timestamp < 0 {
		return time.Time{}
	}
	return time.UnixMilli(r.Timestamp)
}

// RecordHeader is a record header (message format v2).
type RecordHeader struct {
	Key   string
	Value []byte // nil when null
}

// AbortedTransaction is an entry of a Fetch response's aborted transactions
// (same fields as FetchAbortedTransaction, which converts to it).
type AbortedTransaction struct {
	ProducerID  int64
	FirstOffset int64
}

// RecordReadOptions configure a RecordReader for one partition's records.
type RecordReadOptions struct {
	// MinOffset is the fetch offset. Records before it are skipped: a
	// broker answers with whole batches, which may start before it.
	MinOffset int64

	// MaxOffset, when > 0, is the exclusive end of what may be returned:
	// the high watermark, or the last stable offset when reading
	// committed. Reading stops at the first record at or past it, and
	// at the first batch (or legacy message) whose offset is at or past
	// it: the bytes from there on are ignored like a cut-off batch,
	// without their CRC being checked or anything decompressed.
	MaxOffset int64

	// IsolationLevel is the Fetch request's: 1 (read committed) drops the
	// records of aborted transactions, 0 returns everything.
	IsolationLevel int8

	// AbortedTransactions is the Fetch response partition's list, used
	// when reading committed.
	AbortedTransactions []AbortedTransaction

	// MaxDecodedSize bounds the decompressed size of each compressed batch;
	// 0 selects compress.DefaultDecodeLimit.
	MaxDecodedSize int

	// ReuseBuffers makes records valid only until the next call to Next or
	// Reset: the reader then decompresses every batch into the same
	// buffer and reuses the backing array of headers, so that reading
	// allocates nothing in the steady state. Set it only when each record
	// is copied (or done with) before the next call.
	ReuseBuffers bool
}

// recMaxKept bounds the decompression buffer a reader keeps with
// ReuseBuffers: after a larger batch the buffer is left to the GC.
const recMaxKept = 8 << 20

// recMaxKeptHeaders bounds the headers backing array kept with
// ReuseBuffers.
const recMaxKeptHeaders = 4096

// Errors of record decoding. Decoding errors come wrapped in a
// *RecordBatchError naming the batch.
var (
	ErrCorruptRecords = errors.New("kafka records: corrupt")
	ErrCRCMismatch    = errors.New("kafka records: CRC mismatch")
)

// RecordBatchError reports a batch (or a legacy message) that failed to
// decode. Such a batch is never skipped silently: reading stops there.
type RecordBatchError struct {
	// Offset is the batch's base offset (magic 2) or the message's offset
	// (magic 0 and 1).
	Offset int64
	Err    error
}

func (e *RecordBatchError) Error() string {
	return fmt.Sprintf("kafka records: batch at offset %d: %v", e.Offset, e.Err)
}

func (e *RecordBatchError) Unwrap() error { return e.Err }

// reader modes: what r.recs holds.
const (
	recModeNone   = iota
	recModeBatch  // the records of a v2 batch
	recModeLegacy // a legacy message set (a wrapper's inner set, or one message)
)

// RecordReader decodes the records of one partition of a Fetch response:
// v2 record batches and legacy v0/v1 message sets, possibly mixed, possibly
// compressed. It checks every CRC, skips control batches (using them to
// track transactions), filters aborted transactions when reading committed,
// honours the offset bounds, and treats a batch cut off at the end of the
// data as the end (brokers cut responses at max bytes).
//
// Decoding allocates nothing per record: records alias the input (see
// Record); headers share one backing array per batch. A RecordReader is
// reusable through Reset and keeps its buffers. With
// RecordReadOptions.ReuseBuffers it allocates nothing per batch either.
type RecordReader struct {
	data   []byte
	opts   RecordReadOptions
	maxOff int64 // opts.MaxOffset, or MaxInt64 for none
	err    error

	next      int64 // NextOffset
	entries   int   // complete batches or messages met
	truncated bool
	needBytes int
	cutAt     Cut
	done      bool // MaxOffset reached

	mode     int8
	batch    RecordBatchHeader
	batchEnd int64 // last offset + 1 of the current batch
	recs     []byte
	base     []byte // what the current batch's records alias (Buffer)
	left     int32  // records left in a v2 batch
	// Legacy inner sets: absolute offset = legacyBase + stored offset;
	// legacyTime >= 0 overrides inner timestamps (log append time).
	legacyBase int64
	legacyTime int64

	hdrs []RecordHeader // spare headers backing array, never handed out yet
	// With ReuseBuffers: the decompression buffer and the headers array,
	// reused for every batch and record.
	buf      []byte
	hdrsKeep []RecordHeader
	// Sizes of the last compressed batch and of its decompression, whose
	// ratio sizes the next buffer.
	lastIn, lastOut int

	aborted     []AbortedTransaction // sorted by first offset
	abortedNext int                  // aborted[abortedNext:] are not consumed yet
	abortedPIDs []int64              // producers inside an aborted transaction
	keys        [16]string           // recent header keys, to avoid allocating them
}

// NewRecordReader returns a reader over data.
func NewRecordReader(data []byte, opts RecordReadOptions) *RecordReader {
	r := new(RecordReader)
	r.Reset(data, opts)
	return r
}

// Reset points the reader at data (the records of one fetched partition).
// Records already returned stay valid, the reader's buffers are never
// handed out twice, unless the previous options had ReuseBuffers.
func (r *RecordReader) Reset(data []byte, opts RecordReadOptions) {
	r.data, r.opts, r.err, r.base = data, opts, nil, nil
	if !opts.ReuseBuffers {
		r.buf, r.hdrsKeep = nil, nil
	}
	r.maxOff = opts.MaxOffset
	if r.maxOff <= 0 {
		r.maxOff = math.MaxInt64
	}
	r.next, r.entries, r.truncated, r.needBytes, r.done = opts.MinOffset, 0, false, 0, false
	r.cutAt = Cut{}
	r.mode, r.batch, r.batchEnd, r.recs, r.left = recModeNone, RecordBatchHeader{}, 0, nil, 0
	r.aborted, r.abortedNext, r.abortedPIDs = r.aborted[:0], 0, r.abortedPIDs[:0]
	if opts.IsolationLevel == 1 && len(opts.AbortedTransactions) > 0 {
		r.aborted = append(r.aborted, opts.AbortedTransactions...)
		slices.SortStableFunc(r.aborted, func(a, b AbortedTransaction) int {
			switch {
			case a.FirstOffset < b.FirstOffset:
				return -1
			case a.FirstOffset > b.FirstOffset:
				return 1
			}
			return 0
		})
	}
}

// Next returns the next record, io.EOF at the end of the data (or at
// MaxOffset), or the error of a batch that failed to decode; errors stick.
func (r *RecordReader) Next() (Record, error) {
	var rec Record
	for {
		switch {
		case r.err != nil:
			return Record{}, r.err
		case r.left > 0:
			if r.nextInBatch(&rec) {
				return rec, nil
			}
		case r.mode == recModeLegacy && len(r.recs) > 0:
			if r.nextLegacy(&rec) {
				return rec, nil
			}
		default:
			if !r.nextEntry() {
				if r.err != nil {
					return Record{}, r.err
				}
				return Record{}, io.EOF
			}
		}
	}
}

// ReadAll appends every remaining record to dst.
func (r *RecordReader) ReadAll(dst []Record) ([]Record, error) {
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
		dst = append(dst, rec)
	}
}

// Batch returns the header of the batch the last record came from. For
// legacy messages it holds the (wrapper) message's magic, attributes,
// offset (as BaseOffset) and timestamp (as MaxTimestamp), and -1 producer
// fields.
func (r *RecordReader) Batch() RecordBatchHeader { return r.batch }

// Buffer returns the bytes the records of the current batch alias: part of
// the input, or the buffer a compressed batch was decompressed into.
func (r *RecordReader) Buffer() []byte { return r.base }

// NextOffset is the offset to fetch next: past the last record returned and
// past every batch read to its end, including batches that returned
// nothing (control batches, aborted transactions, compacted-away records),
// but never past MaxOffset. It starts at MinOffset.
func (r *RecordReader) NextOffset() int64 { return r.next }

// Truncated reports whether the data ended inside a batch, which is how
// brokers cut responses at max bytes. The cut batch is not an error; it is
// fetched again from NextOffset.
func (r *RecordReader) Truncated() bool { return r.truncated }

// NeedMoreBytes reports, once Next returned io.EOF, whether the data ended
// inside its very first batch, so that nothing could be read at all: a
// fetch with the same max bytes would return the same cut batch forever.
// size is the cut batch's full size in bytes when its header arrived whole
// (0 otherwise); max bytes must be raised to at least that.
func (r *RecordReader) NeedMoreBytes() (size int, ok bool) {
	if r.truncated && r.entries == 0 {
		return r.needBytes, true
	}
	return 0, false
}

// Cut describes the batch the data ended inside (Truncated).
type Cut struct {
	// Offset is the batch's base offset (-1: its first 8 bytes were cut).
	Offset int64
	// Size is the batch's whole size as its length field says (0: the
	// field was cut); Present is the bytes of it the data holds.
	Size, Present int
}

// CutBatch returns, once Next returned io.EOF, the batch the data ended
// inside, if it did (Truncated). Whether a broker cut it at max bytes or
// sent it malformed only the fetch's limits tell.
func (r *RecordReader) CutBatch() (Cut, bool) { return r.cutAt, r.truncated }

// advance moves NextOffset to end, never past MaxOffset.
func (r *RecordReader) advance(end int64) {
	if end > r.maxOff {
		end = r.maxOff
	}
	if end > r.next {
		r.next = end
	}
}

// deliver applies the offset bounds to a decoded record and reports
// whether to return it: not before MinOffset, nor at MaxOffset, which ends
// reading.
func (r *RecordReader) deliver(rec *Record) bool {
	if rec.Offset >= r.maxOff {
		r.stop()
		return false
	}
	if rec.Offset < r.opts.MinOffset {
		return false
	}
	r.advance(rec.Offset + 1)
	return true
}

// stop ends reading at MaxOffset.
func (r *RecordReader) stop() {
	r.done, r.data, r.recs, r.left, r.mode = true, nil, nil, 0, recModeNone
}

func (r *RecordReader) fail(offset int64, err error) {
	r.err = &RecordBatchError{Offset: offset, Err: err}
	r.data, r.recs, r.left, r.mode = nil, nil, 0, recModeNone
}

func (r *RecordReader) failf(offset int64, format string, args ...any) {
	r.fail(offset, fmt.Errorf("%w: "+format, append([]any{ErrCorruptRecords}, args...)...))
}

// recEntryHeader is what v2 batches and legacy messages share: offset
// (int64), length (int32), then 4 bytes (leader epoch or CRC) and the magic.
const recEntryHeader = 17

// recLegacyMinSize is the smallest legacy message, after its length field
// (Kafka's RECORD_OVERHEAD_V0).
const recLegacyMinSize = 14

// nextEntry moves to the next batch or message with records to return,
// reading past the ones that have none for the caller. It returns false at
// the end of the data, at MaxOffset, or on error.
func (r *RecordReader) nextEntry() bool {
	if r.mode != recModeNone {
		// The current batch is used up: its whole offset range is done.
		if r.mode == recModeBatch && len(r.recs) != 0 {
			r.failf(r.batch.BaseOffset, "%d bytes after the last of %d records", len(r.recs), r.batch.NumRecords)
			return false
		}
		r.advance(r.batchEnd)
		r.mode, r.recs = recModeNone, nil
	}
	for !r.done && r.err == nil {
		d := r.data
		if len(d) == 0 {
			return false
		}
		// Bytes from an entry at or past MaxOffset on are not the
		// caller's (a broker may send its log beyond the high watermark):
		// like a cut-off batch they end the data, unchecked, never
		// decompressed nor decoded, whatever they hold. A v2 batch starts
		// with its base offset; a legacy wrapper with its last inner
		// offset, but brokers move the high watermark (and the last
		// stable offset) only between log entries, so a wrapper whose
		// last offset is at or past it lies wholly past it.
		if len(d) >= 8 && int64(binary.BigEndian.Uint64(d)) >= r.maxOff {
			r.stop()
			return false
		}
		if len(d) < recEntryHeader {
			r.cut(d)
			return false
		}
		base := int64(binary.BigEndian.Uint64(d))
		length := int32(binary.BigEndian.Uint32(d[8:]))
		if length < recLegacyMinSize {
			r.failf(base, "length %d", length)
			return false
		}
		if int64(length) > int64(len(d)-12) {
			r.cut(d)
			return false
		}
		size := 12 + int(length)
		entry := d[:size]
		r.data = d[size:]
		r.entries++
		var more bool
		switch magic := int8(d[16]); magic {
		case 2:
			more = r.startBatch(entry)
		case 0, 1:
			more = r.startLegacy(entry)
		default:
			r.fail(base, fmt.Errorf("%w: unknown magic %d", ErrCorruptRecords, magic))
		}
		if more {
			return true
		}
	}
	return false
}

// cut records that the data ends inside a batch.
func (r *RecordReader) cut(d []byte) {
	r.truncated = true
	r.data = nil
	r.cutAt = Cut{Offset: -1, Present: len(d)}
	if len(d) >= 8 {
		r.cutAt.Offset = int64(binary.BigEndian.Uint64(d))
	}
	if len(d) >= 12 {
		if n := int64(int32(binary.BigEndian.Uint32(d[8:]))); n >= recLegacyMinSize && 12+n <= math.MaxInt {
			r.cutAt.Size = int(12 + n)
		}
	}
	if r.entries == 0 {
		r.needBytes = r.cutAt.Size
	}
}

// nextHeaders returns a slice of n headers from the shared backing array,
// allocating a new array sized for the rest of the batch when it runs out.
// With ReuseBuffers every record gets the same array.
func (r *RecordReader) nextHeaders(n int) []RecordHeader {
	if r.opts.ReuseBuffers && n <= recMaxKeptHeaders {
		if cap(r.hdrsKeep) < n {
			r.hdrsKeep = make([]RecordHeader, max(n, 16))
		}
		return r.hdrsKeep[:n:n]
	}
	if len(r.hdrs) < n {
		// Records of a batch usually carry the same headers. The estimate
		// is bounded by the bytes left, two bytes per header at least.
		c := n * int(r.left+1)
		if limit := n + len(r.recs)/2; c > limit {
			c = limit
		}
		if c < 16 {
			c = 16
		}
		r.hdrs = make([]RecordHeader, c)
	}
	h := r.hdrs[:n:n]
	r.hdrs = r.hdrs[n:]
	return h
}

// headerKey returns b as a string, reusing a recent identical key.
func (r *RecordReader) headerKey(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	slot := &r.keys[(len(b)*7+int(b[0])+int(b[len(b)-1])*3)&15]
	if *slot == string(b) {
		return *slot
	}
	*slot = string(b)
	return *slot
}

// recUvarint reads an unsigned varint, fast for the one-byte case.
func recUvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// recVarint reads a zig-zag varint.
func recVarint(b []byte) (int64, int) {
	u, n := recUvarint(b)
	return int64(u>>1) ^ -int64(u&1), n
}

// decompress returns the decompression of src in a buffer of its own,
// which the records of the batch alias; with ReuseBuffers, in the buffer
// of the previous batch.
func (r *RecordReader) decompress(c compress.Compression, src []byte) ([]byte, error) {
	max := r.opts.MaxDecodedSize
	if max <= 0 {
		max = compress.DefaultDecodeLimit
	}
	// Size the buffer by the ratio measured on the previous batch, with
	// some slack, so that it rarely grows: never by a size read from src.
	hint := 2 * int64(len(src))
	if r.lastIn > 0 {
		if h := int64(len(src)) * int64(r.lastOut) / int64(r.lastIn); h+h/8+64 > hint {
			hint = h + h/8 + 64
		}
	}
	if hint > int64(max) {
		hint = int64(max)
	}
	var dst []byte
	if r.opts.ReuseBuffers && cap(r.buf) >= int(hint) {
		dst = r.buf[:0]
	} else {
		dst = make([]byte, 0, int(hint))
	}
	out, err := c.DecodeLimit(dst, src, max)
	if err != nil {
		return nil, err
	}
	if r.opts.ReuseBuffers {
		// Keep the larger of the two, within the bound.
		if cap(out) > cap(r.buf) && cap(out) <= recMaxKept {
			r.buf = out[:0]
		}
	}
	r.lastIn, r.lastOut = len(src), len(out)
	return out, nil
}
