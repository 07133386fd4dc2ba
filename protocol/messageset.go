package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/rackfetch/kafka-go/compress"
)

// Legacy message sets (magic 0 and 1) are sequences of
//
//	offset int64, messageSize int32, crc uint32 (IEEE, of the rest),
//	magic int8, attributes int8, timestamp int64 (magic 1 only),
//	key bytes (int32 length, -1 for null), value bytes (likewise)
//
// A compressed message ("wrapper") holds in its value a compressed message
// set of inner messages. With magic 1 the inner offsets are relative
// (0, 1, ...) and the wrapper's offset is the absolute offset of the last
// inner message; with magic 0 inner offsets are absolute.

const recLegacyAttrLogAppendTime = 0x08

// recLegacyMessage is one decoded legacy message.
type recLegacyMessage struct {
	offset     int64
	magic      int8
	attributes int8
	timestamp  int64
	key, value []byte
}

// recParseLegacy decodes the message at the start of b (offset and size
// included), checking its CRC, and returns it with the bytes after it.
func recParseLegacy(b []byte) (m recLegacyMessage, rest []byte, err error) {
	if len(b) < 12 {
		return m, nil, fmt.Errorf("%w: message header cut short", ErrCorruptRecords)
	}
	m.offset = int64(binary.BigEndian.Uint64(b))
	size := int32(binary.BigEndian.Uint32(b[8:]))
	if size < recLegacyMinSize || int64(size) > int64(len(b)-12) {
		return m, nil, fmt.Errorf("%w: message size %d with %d bytes left", ErrCorruptRecords, size, len(b)-12)
	}
	msg := b[12 : 12+int(size)]
	rest = b[12+int(size):]
	if sum := crc32.ChecksumIEEE(msg[4:]); sum != binary.BigEndian.Uint32(msg) {
		return m, nil, fmt.Errorf("%w: stored %08x, computed %08x", ErrCRCMismatch, binary.BigEndian.Uint32(msg), sum)
	}
	m.magic, m.attributes = int8(msg[4]), int8(msg[5])
	i := 6
	m.timestamp = -1
	switch m.magic {
	case 0:
	case 1:
		if len(msg) < 22 {
			return m, nil, fmt.Errorf("%w: v1 message of %d bytes", ErrCorruptRecords, len(msg))
		}
		m.timestamp = int64(binary.BigEndian.Uint64(msg[6:]))
		i = 14
	default:
		return m, nil, fmt.Errorf("%w: magic %d in a message set", ErrCorruptRecords, m.magic)
	}
	var ok bool
	if m.key, i, ok = recInt32Bytes(msg, i); !ok {
		return m, nil, fmt.Errorf("%w: message key", ErrCorruptRecords)
	}
	if m.value, i, ok = recInt32Bytes(msg, i); !ok {
		return m, nil, fmt.Errorf("%w: message value", ErrCorruptRecords)
	}
	if i != len(msg) {
		return m, nil, fmt.Errorf("%w: message has %d bytes more than its fields", ErrCorruptRecords, len(msg)-i)
	}
	return m, rest, nil
}

// recInt32Bytes reads an int32 length (-1 for null) and that many bytes at
// b[i:].
func recInt32Bytes(b []byte, i int) ([]byte, int, bool) {
	if len(b)-i < 4 {
		return nil, i, false
	}
	l := int32(binary.BigEndian.Uint32(b[i:]))
	i += 4
	if l < -1 || int64(l) > int64(len(b)-i) {
		return nil, i, false
	}
	if l < 0 {
		return nil, i, true
	}
	j := i + int(l)
	return b[i:j:j], j, true
}

// startLegacy opens a legacy message (entry holds it whole) and returns
// whether it has records to return.
func (r *RecordReader) startLegacy(entry []byte) bool {
	offset := int64(binary.BigEndian.Uint64(entry))
	codec := compress.Compression(entry[17] & recAttrCompression)
	if codec == compress.None {
		// One plain message: nextLegacy decodes (and checks) it. Those at
		// or past MaxOffset never get here (nextEntry).
		r.batch = recLegacyHeader(offset, int8(entry[16]), int8(entry[17]), -1)
		r.mode, r.recs, r.legacyBase, r.legacyTime, r.batchEnd = recModeLegacy, entry, 0, -1, offset+1
		r.base = entry
		return true
	}
	m, _, err := recParseLegacy(entry)
	if err != nil {
		r.fail(offset, err)
		return false
	}
	if codec == compress.Zstd {
		r.failf(offset, "zstd in a v%d message set", m.magic)
		return false
	}
	if m.value == nil {
		r.failf(offset, "compressed message with a null value")
		return false
	}
	r.batch = recLegacyHeader(offset, m.magic, m.attributes, m.timestamp)
	// The wrapper's offset is its last record's: a wrapper wholly before
	// MinOffset holds nothing wanted.
	if offset < r.opts.MinOffset {
		r.advance(offset + 1)
		return false
	}
	inner, err := r.decompress(codec, m.value)
	if err != nil {
		r.fail(offset, recCodecError(codec, "message set", err))
		return false
	}
	// Walk the inner set once: it must be well framed, and magic 1 needs
	// the last inner offset to make the others absolute.
	var last int64
	count := 0
	for rest := inner; len(rest) > 0; count++ {
		if len(rest) < 12 {
			r.failf(offset, "inner message header cut short")
			return false
		}
		last = int64(binary.BigEndian.Uint64(rest))
		size := int32(binary.BigEndian.Uint32(rest[8:]))
		if size < recLegacyMinSize || int64(size) > int64(len(rest)-12) {
			r.failf(offset, "inner message size %d with %d bytes left", size, len(rest)-12)
			return false
		}
		rest = rest[12+int(size):]
	}
	if count == 0 {
		r.failf(offset, "compressed message set with no messages")
		return false
	}
	base := int64(0)
	if m.magic == 1 && offset != 0 {
		// A wrapper offset of 0 comes from some librdkafka producers: the
		// inner offsets are then taken as they are.
		if offset < last {
			r.failf(offset, "wrapper offset below its last inner offset %d", last)
			return false
		}
		base = offset - last
	}
	wrapperTime := int64(-1)
	if m.magic == 1 && m.attributes&recLegacyAttrLogAppendTime != 0 {
		wrapperTime = m.timestamp
	}
	r.mode, r.recs, r.legacyBase, r.legacyTime, r.batchEnd = recModeLegacy, inner, base, wrapperTime, offset+1
	r.base = inner
	return true
}

func recLegacyHeader(offset int64, magic, attributes int8, timestamp int64) RecordBatchHeader {
	return RecordBatchHeader{
		BaseOffset: offset, Magic: magic, Attributes: int16(attributes),
		BaseTimestamp: timestamp, MaxTimestamp: timestamp,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, PartitionLeaderEpoch: -1,
	}
}

// nextLegacy decodes the next message of the current legacy set. It
// returns false for a message skipped (before MinOffset), at MaxOffset,
// and on error.
func (r *RecordReader) nextLegacy(rec *Record) bool {
	m, rest, err := recParseLegacy(r.recs)
	if err != nil {
		r.fail(r.batch.BaseOffset, err)
		return false
	}
	r.recs = rest
	if m.attributes&recAttrCompression != 0 {
		r.failf(r.batch.BaseOffset, "compressed message inside a compressed message")
		return false
	}
	*rec = Record{Offset: r.legacyBase + m.offset, Timestamp: m.timestamp, Key: m.key, Value: m.value}
	if r.legacyTime >= 0 && m.magic == 1 {
		rec.Timestamp = r.legacyTime
	}
	return r.deliver(rec)
}

// AppendMessageSet appends records as a legacy message set of the given
// magic (0 or 1) to dst, using each record's Offset (and Timestamp for
// magic 1). With a codec, the records go compressed in one wrapper message
// (relative inner offsets for magic 1, as Kafka writes them). Legacy
// formats carry no headers. This is what old brokers store and send; the
// client itself produces record batches.
func AppendMessageSet(dst []byte, magic int8, c compress.Compression, records []Record) ([]byte, error) {
	if magic != 0 && magic != 1 {
		return dst, fmt.Errorf("kafka records: magic %d is not a message set", magic)
	}
	if c == compress.Zstd {
		return dst, errors.New("kafka records: zstd needs record batches (magic 2)")
	}
	for i := range records {
		if len(records[i].Headers) != 0 {
			return dst, errors.New("kafka records: message sets (magic 0 and 1) carry no headers")
		}
	}
	if c == compress.None {
		for i := range records {
			rec := &records[i]
			dst = recAppendLegacy(dst, rec.Offset, magic, 0, rec.Timestamp, rec.Key, rec.Value)
		}
		return dst, nil
	}
	if len(records) == 0 {
		return dst, nil
	}
	var inner []byte
	maxTs := int64(-1)
	first := records[0].Offset
	for i := range records {
		rec := &records[i]
		off := rec.Offset
		if magic == 1 {
			off -= first
		}
		inner = recAppendLegacy(inner, off, magic, 0, rec.Timestamp, rec.Key, rec.Value)
		if rec.Timestamp > maxTs {
			maxTs = rec.Timestamp
		}
	}
	value, err := c.Encode(nil, inner)
	if err != nil {
		return dst, err
	}
	last := records[len(records)-1].Offset
	return recAppendLegacy(dst, last, magic, int8(c), maxTs, nil, value), nil
}

func recAppendLegacy(dst []byte, offset int64, magic, attributes int8, timestamp int64, key, value []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	sizeAt := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // size, crc
	crcFrom := len(dst)
	dst = append(dst, byte(magic), byte(attributes))
	if magic == 1 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	}
	for _, b := range [2][]byte{key, value} {
		if b == nil {
			dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)
		} else {
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
			dst = append(dst, b...)
		}
	}
	binary.BigEndian.PutUint32(dst[sizeAt:], uint32(len(dst)-sizeAt-4))
	binary.BigEndian.PutUint32(dst[sizeAt+4:], crc32.ChecksumIEEE(dst[crcFrom:]))
	return dst
}
