package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"

	"github.com/rackfetch/kafka-go/compress"
)

// RecordBatchBuilder builds one record batch (magic 2), as Produce sends
// them. Set the exported fields, Add records, then AppendTo; Reset starts
// the next batch with the same settings and buffers. Make builders with
// NewRecordBatchBuilder: the producer fields default to -1 (no producer),
// which the zero value does not have.
type RecordBatchBuilder struct {
	BaseOffset           int64 // 0 for Produce: brokers assign offsets
	PartitionLeaderEpoch int32 // -1 for Produce

	// Compression of the records. Codec, when set, is used instead (for
	// compression levels or custom codecs) and its Code goes in the
	// attributes.
	Compression compress.Compression
	Codec       compress.Codec

	Transactional bool
	Control       bool
	LogAppendTime bool

	ProducerID    int64 // -1 without idempotence
	ProducerEpoch int16 // -1 without idempotence
	BaseSequence  int32 // -1 without idempotence

	records   []byte // encoded records, uncompressed
	count     int32
	lastDelta int64
	firstTime int64
	maxTime   int64
}

// NewRecordBatchBuilder returns a builder with no producer (-1 producer
// id, epoch and sequence), leader epoch -1 and no compression.
func NewRecordBatchBuilder() *RecordBatchBuilder {
	return &RecordBatchBuilder{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
}

// Reset drops the records added, keeping the settings and the buffer.
func (b *RecordBatchBuilder) Reset() {
	b.records, b.count, b.lastDelta = b.records[:0], 0, 0
}

// Len returns the number of records added.
func (b *RecordBatchBuilder) Len() int { return int(b.count) }

// Size returns the size the batch would have uncompressed.
func (b *RecordBatchBuilder) Size() int { return RecordBatchHeaderSize + len(b.records) }

// Add appends a record with the next offset delta (0, 1, 2, ...). Only its
// Timestamp (milliseconds), Key, Value and Headers are used; nil Key or
// Value are written as null.
func (b *RecordBatchBuilder) Add(r Record) {
	delta := int64(0)
	if b.count > 0 {
		delta = b.lastDelta + 1
	}
	b.add(delta, &r)
}

// AddWithOffset appends r at offset delta r.Offset - BaseOffset, which
// must be above the previous record's (gaps are allowed, as compaction
// leaves them).
func (b *RecordBatchBuilder) AddWithOffset(r Record) error {
	delta := r.Offset - b.BaseOffset
	if delta < 0 || delta > math32Max || (b.count > 0 && delta <= b.lastDelta) {
		return fmt.Errorf("kafka records: offset %d does not follow the batch's records (base %d)", r.Offset, b.BaseOffset)
	}
	b.add(delta, &r)
	return nil
}

func (b *RecordBatchBuilder) add(delta int64, r *Record) {
	if b.count == 0 {
		b.firstTime, b.maxTime = r.Timestamp, r.Timestamp
	} else if r.Timestamp > b.maxTime {
		b.maxTime = r.Timestamp
	}
	tsDelta := r.Timestamp - b.firstTime
	size := 1 + recVarintLen(tsDelta) + recVarintLen(delta) +
		recBytesLen(r.Key) + recBytesLen(r.Value) + recVarintLen(int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		size += recVarintLen(int64(len(h.Key))) + len(h.Key) + recBytesLen(h.Value)
	}
	e := b.records
	e = binary.AppendVarint(e, int64(size))
	e = append(e, 0) // attributes: unused
	e = binary.AppendVarint(e, tsDelta)
	e = binary.AppendVarint(e, delta)
	e = recAppendVarBytes(e, r.Key)
	e = recAppendVarBytes(e, r.Value)
	e = binary.AppendVarint(e, int64(len(r.Headers)))
	for i := range r.Headers {
		h := &r.Headers[i]
		e = binary.AppendVarint(e, int64(len(h.Key)))
		e = append(e, h.Key...)
		e = recAppendVarBytes(e, h.Value)
	}
	b.records = e
	b.count++
	b.lastDelta = delta
}

// recVarintLen is the size of v as a zig-zag varint.
func recVarintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return (bits.Len64(u|1) + 6) / 7
}

func recBytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return recVarintLen(int64(len(b))) + len(b)
}

func recAppendVarBytes(e, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(e, -1)
	}
	e = binary.AppendVarint(e, int64(len(b)))
	return append(e, b...)
}

// ErrEmptyBatch is returned when building a batch without records.
var ErrEmptyBatch = errors.New("kafka records: batch has no records")

// AppendTo appends the finished batch (header, compressed records, CRC) to
// dst. The builder is unchanged: call Reset for the next batch.
func (b *RecordBatchBuilder) AppendTo(dst []byte) ([]byte, error) {
	if b.count == 0 {
		return dst, ErrEmptyBatch
	}
	start := len(dst)
	attrs := int16(0)
	switch {
	case b.Codec != nil:
		attrs = int16(b.Codec.Code()) & recAttrCompression
	default:
		attrs = int16(b.Compression) & recAttrCompression
	}
	if b.LogAppendTime {
		attrs |= recAttrLogAppendTime
	}
	if b.Transactional {
		attrs |= recAttrTransactional
	}
	if b.Control {
		attrs |= recAttrControl
	}
	var h [RecordBatchHeaderSize]byte
	binary.BigEndian.PutUint64(h[0:], uint64(b.BaseOffset))
	// 8: length, 17: crc, filled below
	binary.BigEndian.PutUint32(h[12:], uint32(b.PartitionLeaderEpoch))
	h[16] = 2
	binary.BigEndian.PutUint16(h[21:], uint16(attrs))
	binary.BigEndian.PutUint32(h[23:], uint32(b.lastDelta))
	binary.BigEndian.PutUint64(h[27:], uint64(b.firstTime))
	binary.BigEndian.PutUint64(h[35:], uint64(b.maxTime))
	binary.BigEndian.PutUint64(h[43:], uint64(b.ProducerID))
	binary.BigEndian.PutUint16(h[51:], uint16(b.ProducerEpoch))
	binary.BigEndian.PutUint32(h[53:], uint32(b.BaseSequence))
	binary.BigEndian.PutUint32(h[57:], uint32(b.count))
	dst = append(dst, h[:]...)

	var err error
	switch {
	case b.Codec != nil:
		dst, err = compress.Encode(b.Codec, dst, b.records)
	case b.Compression == compress.None:
		dst = append(dst, b.records...)
	default:
		dst, err = b.Compression.Encode(dst, b.records)
	}
	if err != nil {
		return dst[:start], err
	}
	if len(dst)-start-12 > math32Max {
		return dst[:start], fmt.Errorf("kafka records: batch of %d bytes", len(dst)-start)
	}
	binary.BigEndian.PutUint32(dst[start+8:], uint32(len(dst)-start-12))
	binary.BigEndian.PutUint32(dst[start+17:], crc32.Checksum(dst[start+21:], recCRC32C))
	return dst, nil
}
