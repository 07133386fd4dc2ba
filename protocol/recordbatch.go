package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/rackfetch/kafka-go/compress"
)

// RecordBatchHeader is the header of a record batch (magic 2):
//
//	baseOffset int64, batchLength int32, partitionLeaderEpoch int32,
//	magic int8, crc uint32 (CRC-32C of everything after it),
//	attributes int16, lastOffsetDelta int32, baseTimestamp int64,
//	maxTimestamp int64, producerId int64, producerEpoch int16,
//	baseSequence int32, records count int32
type RecordBatchHeader struct {
	BaseOffset           int64
	Length               int32 // bytes after this field
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	NumRecords           int32
}

// RecordBatchHeaderSize is the size of a v2 batch header, records count
// included.
const RecordBatchHeaderSize = 61

// Batch attribute bits.
const (
	recAttrCompression   = 0x07
	recAttrLogAppendTime = 0x08
	recAttrTransactional = 0x10
	recAttrControl       = 0x20
)

// Compression is the codec of the batch's records.
func (h *RecordBatchHeader) Compression() compress.Compression {
	return compress.Compression(h.Attributes & recAttrCompression)
}

// LogAppendTime reports whether timestamps were set by the broker, in
// which case every record's timestamp is MaxTimestamp.
func (h *RecordBatchHeader) LogAppendTime() bool { return h.Attributes&recAttrLogAppendTime != 0 }

// Transactional reports whether the batch belongs to a transaction.
func (h *RecordBatchHeader) Transactional() bool { return h.Attributes&recAttrTransactional != 0 }

// Control reports whether the batch holds control records (transaction
// markers), which are never returned to applications.
func (h *RecordBatchHeader) Control() bool { return h.Attributes&recAttrControl != 0 }

// LastOffset is the offset of the batch's last record (before compaction).
func (h *RecordBatchHeader) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// ParseRecordBatchHeader reads the header of the v2 batch that b starts
// with, without checking its CRC or that the whole batch is present.
func ParseRecordBatchHeader(b []byte) (RecordBatchHeader, error) {
	var h RecordBatchHeader
	if len(b) < RecordBatchHeaderSize {
		return h, fmt.Errorf("%w: %d bytes hold no batch header", ErrCorruptRecords, len(b))
	}
	h.BaseOffset = int64(binary.BigEndian.Uint64(b[0:]))
	h.Length = int32(binary.BigEndian.Uint32(b[8:]))
	h.PartitionLeaderEpoch = int32(binary.BigEndian.Uint32(b[12:]))
	h.Magic = int8(b[16])
	h.CRC = binary.BigEndian.Uint32(b[17:])
	h.Attributes = int16(binary.BigEndian.Uint16(b[21:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(b[23:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(b[27:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(b[35:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(b[43:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(b[51:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(b[53:]))
	h.NumRecords = int32(binary.BigEndian.Uint32(b[57:]))
	if h.Magic != 2 {
		return h, fmt.Errorf("%w: magic %d is not a record batch", ErrCorruptRecords, h.Magic)
	}
	if int(h.Length) < RecordBatchHeaderSize-12 {
		return h, fmt.Errorf("%w: batch length %d", ErrCorruptRecords, h.Length)
	}
	return h, nil
}

// recMinRecordSize is the smallest encoded record: length, attributes,
// timestamp delta, offset delta, key length, value length, header count.
const recMinRecordSize = 7

// startBatch opens a v2 batch (entry holds it whole) and returns whether it
// has records to return; batches that have none are read past here.
func (r *RecordReader) startBatch(entry []byte) bool {
	h, err := ParseRecordBatchHeader(entry)
	if err != nil {
		r.fail(int64(binary.BigEndian.Uint64(entry)), err)
		return false
	}
	if sum := crc32.Checksum(entry[21:], recCRC32C); sum != h.CRC {
		r.fail(h.BaseOffset, fmt.Errorf("%w: stored %08x, computed %08x", ErrCRCMismatch, h.CRC, sum))
		return false
	}
	if h.NumRecords < 0 {
		r.failf(h.BaseOffset, "%d records", h.NumRecords)
		return false
	}
	end := h.LastOffset() + 1
	records := entry[RecordBatchHeaderSize:]

	if r.opts.IsolationLevel == 1 && h.ProducerID >= 0 {
		r.consumeAborted(h.LastOffset())
		if h.Control() {
			abort, err := r.isAbortMarker(&h, records)
			if err != nil {
				r.fail(h.BaseOffset, err)
				return false
			}
			if abort {
				r.dropAbortedPID(h.ProducerID)
			}
		} else if h.Transactional() && r.isAbortedPID(h.ProducerID) {
			r.advance(end)
			return false
		}
	}
	if h.Control() || h.NumRecords == 0 || h.LastOffset() < r.opts.MinOffset {
		r.advance(end)
		return false
	}
	if c := h.Compression(); c != compress.None {
		if records, err = r.decompress(c, records); err != nil {
			r.fail(h.BaseOffset, recCodecError(c, "batch", err))
			return false
		}
	}
	if int(h.NumRecords) > len(records)/recMinRecordSize {
		r.failf(h.BaseOffset, "%d records in %d bytes", h.NumRecords, len(records))
		return false
	}
	r.batch, r.batchEnd = h, end
	r.mode, r.recs, r.left = recModeBatch, records, h.NumRecords
	r.base = records
	return true
}

// nextInBatch decodes the next record of the v2 batch. It returns false for
// a record skipped (before MinOffset), at MaxOffset, and on error.
//
//	length varint, attributes int8, timestampDelta varlong,
//	offsetDelta varint, keyLength varint, key, valueLength varint, value,
//	headers count varint, then per header: keyLength varint, key,
//	valueLength varint, value
func (r *RecordReader) nextInBatch(rec *Record) bool {
	b := r.recs
	size, n := recVarint(b)
	if n <= 0 || size < 0 || size > int64(len(b)-n) {
		r.failf(r.batch.BaseOffset, "record length %d with %d bytes left", size, len(b)-n)
		return false
	}
	body := b[n : n+int(size) : n+int(size)]
	r.recs = b[n+int(size):]
	r.left--
	if r.left == 0 && len(r.recs) != 0 {
		r.failf(r.batch.BaseOffset, "%d bytes after the last of %d records", len(r.recs), r.batch.NumRecords)
		return false
	}
	if !r.decodeRecord(body, rec) {
		return false
	}
	return r.deliver(rec)
}

// decodeRecord decodes the body of one v2 record (after its length).
func (r *RecordReader) decodeRecord(body []byte, rec *Record) bool {
	if len(body) < 1 {
		r.failf(r.batch.BaseOffset, "empty record")
		return false
	}
	i := 1 // attributes: unused
	tsDelta, n := recVarint(body[i:])
	if n <= 0 {
		r.failf(r.batch.BaseOffset, "record timestamp")
		return false
	}
	i += n
	offDelta, n := recVarint(body[i:])
	if n <= 0 || offDelta < math32Min || offDelta > math32Max {
		r.failf(r.batch.BaseOffset, "record offset delta")
		return false
	}
	i += n
	rec.Offset = r.batch.BaseOffset + offDelta
	if r.batch.Attributes&recAttrLogAppendTime != 0 {
		rec.Timestamp = r.batch.MaxTimestamp
	} else {
		rec.Timestamp = r.batch.BaseTimestamp + tsDelta
	}

	var ok bool
	if rec.Key, i, ok = recVarBytes(body, i); !ok {
		r.failf(r.batch.BaseOffset, "key of record at offset %d", rec.Offset)
		return false
	}
	if rec.Value, i, ok = recVarBytes(body, i); !ok {
		r.failf(r.batch.BaseOffset, "value of record at offset %d", rec.Offset)
		return false
	}
	count, n := recVarint(body[i:])
	if n <= 0 || count < 0 || count > int64(len(body)-i-n)/2 {
		r.failf(r.batch.BaseOffset, "%d headers in record at offset %d", count, rec.Offset)
		return false
	}
	i += n
	if count > 0 {
		rec.Headers = r.nextHeaders(int(count))
		for k := range rec.Headers {
			var key []byte
			if key, i, ok = recVarBytes(body, i); !ok || key == nil {
				r.failf(r.batch.BaseOffset, "header key of record at offset %d", rec.Offset)
				return false
			}
			h := &rec.Headers[k]
			h.Key = r.headerKey(key)
			if h.Value, i, ok = recVarBytes(body, i); !ok {
				r.failf(r.batch.BaseOffset, "header value of record at offset %d", rec.Offset)
				return false
			}
		}
	}
	if i != len(body) {
		r.failf(r.batch.BaseOffset, "record at offset %d has %d bytes more than its fields", rec.Offset, len(body)-i)
		return false
	}
	return true
}

// recCodecError wraps a decompression error: ErrCorruptRecords unless the
// output passed the size limit (compress.ErrTooLarge), which is no proof of
// corruption.
func recCodecError(c compress.Compression, what string, err error) error {
	if errors.Is(err, compress.ErrTooLarge) {
		return fmt.Errorf("%s %s: %w", c, what, err)
	}
	return fmt.Errorf("%w: %s %s: %w", ErrCorruptRecords, c, what, err)
}

const (
	math32Min = -1 << 31
	math32Max = 1<<31 - 1
)

// recVarBytes reads a varint length (-1 for null) and that many bytes at
// b[i:], returning them (capacity-limited, aliasing b) and the next index.
func recVarBytes(b []byte, i int) ([]byte, int, bool) {
	l, n := recVarint(b[i:])
	if n <= 0 || l < -1 || l > int64(len(b)-i-n) {
		return nil, i, false
	}
	i += n
	if l < 0 {
		return nil, i, true
	}
	j := i + int(l)
	return b[i:j:j], j, true
}

// consumeAborted moves the aborted transactions starting at or before
// offset into the set of aborted producers.
func (r *RecordReader) consumeAborted(offset int64) {
	for r.abortedNext < len(r.aborted) && r.aborted[r.abortedNext].FirstOffset <= offset {
		pid := r.aborted[r.abortedNext].ProducerID
		r.abortedNext++
		if !r.isAbortedPID(pid) {
			r.abortedPIDs = append(r.abortedPIDs, pid)
		}
	}
}

func (r *RecordReader) isAbortedPID(pid int64) bool {
	for _, p := range r.abortedPIDs {
		if p == pid {
			return true
		}
	}
	return false
}

func (r *RecordReader) dropAbortedPID(pid int64) {
	for i, p := range r.abortedPIDs {
		if p == pid {
			r.abortedPIDs = append(r.abortedPIDs[:i], r.abortedPIDs[i+1:]...)
			return
		}
	}
}

// isAbortMarker reports whether the control batch h (records as stored)
// is a transaction abort marker: its first record's key is
// version int16, type int16 with type 0 for abort, 1 for commit.
func (r *RecordReader) isAbortMarker(h *RecordBatchHeader, records []byte) (bool, error) {
	if h.NumRecords == 0 {
		return false, nil
	}
	if c := h.Compression(); c != compress.None {
		var err error
		if records, err = r.decompress(c, records); err != nil {
			return false, recCodecError(c, "control batch", err)
		}
	}
	size, n := recVarint(records)
	if n <= 0 || size < 0 || size > int64(len(records)-n) {
		return false, fmt.Errorf("%w: control record length %d", ErrCorruptRecords, size)
	}
	saved := r.batch
	r.batch = *h
	var rec Record
	ok := r.decodeRecord(records[n:n+int(size)], &rec)
	r.batch = saved
	if !ok {
		err := r.err.(*RecordBatchError).Err
		r.err = nil
		return false, err
	}
	if len(rec.Key) < 4 || int16(binary.BigEndian.Uint16(rec.Key)) < 0 {
		return false, fmt.Errorf("%w: control record key %x", ErrCorruptRecords, rec.Key)
	}
	return binary.BigEndian.Uint16(rec.Key[2:]) == 0, nil
}
