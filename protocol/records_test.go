package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/rackfetch/kafka-go/compress"
)

var recCodecs = []compress.Compression{compress.None, compress.Gzip, compress.Snappy, compress.Lz4, compress.Zstd}

// recBatch builds one batch of recs at base with the settings set by opt.
func recBatch(t testing.TB, base int64, c compress.Compression, recs []Record, opt func(*RecordBatchBuilder)) []byte {
	t.Helper()
	b := NewRecordBatchBuilder()
	b.BaseOffset, b.Compression = base, c
	if opt != nil {
		opt(b)
	}
	for _, r := range recs {
		if err := b.AddWithOffset(r); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recSeq returns n records at offsets from..from+n-1.
func recSeq(from int64, n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		off := from + int64(i)
		recs[i] = Record{Offset: off, Timestamp: 1700000000000 + off, Key: []byte(fmt.Sprint("k", off)), Value: []byte(fmt.Sprint("value ", off))}
	}
	return recs
}

func recReadAll(data []byte, opts RecordReadOptions) ([]Record, *RecordReader, error) {
	r := NewRecordReader(data, opts)
	recs, err := r.ReadAll(nil)
	return recs, r, err
}

func recOffsets(recs []Record) []int64 {
	var o []int64
	for _, r := range recs {
		o = append(o, r.Offset)
	}
	return o
}

func TestRecordsRoundTrip(t *testing.T) {
	want := []Record{
		{Offset: 100, Timestamp: 1700000000000, Key: []byte("key"), Value: []byte("value"),
			Headers: []RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: nil}, {Key: "", Value: []byte{}}}},
		{Offset: 101, Timestamp: 1699999999000, Key: nil, Value: nil},           // earlier timestamp: negative delta
		{Offset: 103, Timestamp: 1700000005000, Key: []byte{}, Value: []byte{}}, // offset gap
		{Offset: 104, Timestamp: 1700000006000, Value: bytes.Repeat([]byte("big "), 50000),
			Headers: []RecordHeader{{Key: "a", Value: []byte("2")}}},
	}
	for _, c := range recCodecs {
		data := recBatch(t, 100, c, want, nil)
		data = append(data, recBatch(t, 105, c, recSeq(105, 3), nil)...)
		got, r, err := recReadAll(data, RecordReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if !reflect.DeepEqual(got[:4], want) {
			t.Fatalf("%s: mismatch\nwant %+v\n got %+v", c, want[:2], got[:2])
		}
		if !reflect.DeepEqual(got[4:], recSeq(105, 3)) {
			t.Fatalf("%s: second batch mismatch", c)
		}
		if r.NextOffset() != 108 || r.Truncated() {
			t.Fatalf("%s: next offset %d, truncated %v", c, r.NextOffset(), r.Truncated())
		}
		if h := r.Batch(); h.Compression() != c || h.BaseOffset != 105 || h.ProducerID != -1 || h.NumRecords != 3 {
			t.Fatalf("%s: batch header %+v", c, h)
		}
	}
}

// TestRecordBatchBytes decodes a batch written byte by byte from the
// format description, and checks the builder writes the same bytes.
func TestRecordBatchBytes(t *testing.T) {
	records := []byte{
		// record 0: 13 bytes
		0x1a,      // length 13
		0x00,      // attributes
		0x00,      // timestamp delta 0
		0x00,      // offset delta 0
		0x02, 'k', // key "k"
		0x04, 'v', '0', // value "v0"
		0x02,      // 1 header
		0x02, 'h', // header key "h"
		0x02, 'x', // header value "x"
		// record 1: 6 bytes
		0x0c, // length 6
		0x00, // attributes
		0x14, // timestamp delta 10
		0x02, // offset delta 1
		0x01, // null key
		0x00, // empty value
		0x00, // no headers
	}
	var batch []byte
	batch = append(batch, 0, 0, 0, 0, 0, 0, 0, 5)                         // base offset 5
	batch = append(batch, 0, 0, 0, 70)                                    // batch length: 49 + 21
	batch = append(batch, 0, 0, 0, 3)                                     // partition leader epoch
	batch = append(batch, 2)                                              // magic
	batch = append(batch, 0, 0, 0, 0)                                     // crc, below
	batch = append(batch, 0, 0)                                           // attributes
	batch = append(batch, 0, 0, 0, 1)                                     // last offset delta
	batch = append(batch, 0, 0, 0, 0, 0, 0, 0x03, 0xe8)                   // base timestamp 1000
	batch = append(batch, 0, 0, 0, 0, 0, 0, 0x03, 0xf2)                   // max timestamp 1010
	batch = append(batch, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) // producer id -1
	batch = append(batch, 0xff, 0xff)                                     // producer epoch -1
	batch = append(batch, 0xff, 0xff, 0xff, 0xff)                         // base sequence -1
	batch = append(batch, 0, 0, 0, 2)                                     // 2 records
	batch = append(batch, records...)
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))

	want := []Record{
		{Offset: 5, Timestamp: 1000, Key: []byte("k"), Value: []byte("v0"), Headers: []RecordHeader{{Key: "h", Value: []byte("x")}}},
		{Offset: 6, Timestamp: 1010, Key: nil, Value: []byte{}},
	}
	got, r, err := recReadAll(batch, RecordReadOptions{})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decode: %v\n got %+v", err, got)
	}
	if h := r.Batch(); h.PartitionLeaderEpoch != 3 || h.LastOffsetDelta != 1 || h.MaxTimestamp != 1010 || h.Length != 70 {
		t.Fatalf("header %+v", h)
	}

	b := NewRecordBatchBuilder()
	b.BaseOffset, b.PartitionLeaderEpoch = 5, 3
	for _, rec := range want {
		b.Add(rec)
	}
	enc, err := b.AppendTo(nil)
	if err != nil || !bytes.Equal(enc, batch) {
		t.Fatalf("encode: %v\nwant % x\n got % x", err, batch, enc)
	}
}

// TestMessageSetBytes decodes legacy message sets written byte by byte:
// two plain v1 messages, a v0 message, and a gzip v1 wrapper with
// relative inner offsets.
func TestMessageSetBytes(t *testing.T) {
	msg := func(offset int64, body []byte) []byte {
		var m []byte
		m = binary.BigEndian.AppendUint64(m, uint64(offset))
		m = binary.BigEndian.AppendUint32(m, uint32(4+len(body)))
		m = binary.BigEndian.AppendUint32(m, crc32.ChecksumIEEE(body))
		return append(m, body...)
	}
	v1plain1 := []byte{
		1, 0, // magic 1, attributes
		0, 0, 0, 0, 0, 0, 0x07, 0xd0, // timestamp 2000
		0xff, 0xff, 0xff, 0xff, // null key
		0, 0, 0, 2, 'h', 'i', // value "hi"
	}
	v1plain2 := []byte{
		1, 0,
		0, 0, 0, 0, 0, 0, 0x07, 0xd1, // 2001
		0, 0, 0, 1, 'k', // key "k"
		0xff, 0xff, 0xff, 0xff, // null value
	}
	v0plain := []byte{
		0, 0, // magic 0, attributes
		0, 0, 0, 0, // empty key
		0, 0, 0, 3, 'o', 'l', 'd',
	}
	inner := append(msg(0, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0x0b, 0xb8, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 'a'}), // ts 3000
		msg(1, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0x0b, 0xb9, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 'b'})...) // ts 3001
	gz, err := compress.Gzip.Encode(nil, inner)
	if err != nil {
		t.Fatal(err)
	}
	wrapper := append([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0x0b, 0xb9, 0xff, 0xff, 0xff, 0xff}, // magic 1, gzip, ts 3001, null key
		binary.BigEndian.AppendUint32(nil, uint32(len(gz)))...)
	wrapper = append(wrapper, gz...)

	var data []byte
	data = append(data, msg(10, v1plain1)...)
	data = append(data, msg(11, v1plain2)...)
	data = append(data, msg(12, v0plain)...)
	data = append(data, msg(21, wrapper)...) // wrapper offset: last inner's absolute offset

	want := []Record{
		{Offset: 10, Timestamp: 2000, Value: []byte("hi")},
		{Offset: 11, Timestamp: 2001, Key: []byte("k")},
		{Offset: 12, Timestamp: -1, Key: []byte{}, Value: []byte("old")},
		{Offset: 20, Timestamp: 3000, Value: []byte("a")},
		{Offset: 21, Timestamp: 3001, Value: []byte("b")},
	}
	got, r, err := recReadAll(data, RecordReadOptions{})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%v\nwant %+v\n got %+v", err, want, got)
	}
	if r.NextOffset() != 22 {
		t.Fatalf("next offset %d", r.NextOffset())
	}
	if !got[2].Time().IsZero() || got[0].Time().UnixMilli() != 2000 {
		t.Fatal("Time")
	}

	// The encoder writes the same bytes.
	enc, err := AppendMessageSet(nil, 1, compress.None, want[:2])
	if err != nil || !bytes.Equal(enc, data[:len(msg(10, v1plain1))+len(msg(11, v1plain2))]) {
		t.Fatalf("plain v1 encode: %v", err)
	}
	enc, err = AppendMessageSet(nil, 1, compress.Gzip, want[3:])
	if err != nil || !bytes.Equal(enc, msg(21, wrapper)) {
		t.Fatalf("gzip v1 encode: %v\nwant % x\n got % x", err, msg(21, wrapper), enc)
	}
}

func TestMessageSetRoundTrip(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		for _, c := range recCodecs[:4] { // no zstd before magic 2
			recs := recSeq(40, 5)
			if magic == 0 {
				for i := range recs {
					recs[i].Timestamp = -1
				}
			}
			data, err := AppendMessageSet(nil, magic, c, recs)
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, recBatch(t, 45, c, recSeq(45, 2), nil)...) // then a v2 batch
			got, r, err := recReadAll(data, RecordReadOptions{MinOffset: 42})
			if err != nil {
				t.Fatalf("v%d %s: %v", magic, c, err)
			}
			want := append(recs[2:], recSeq(45, 2)...)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("v%d %s: got %v", magic, c, recOffsets(got))
			}
			if r.NextOffset() != 47 {
				t.Fatalf("v%d %s: next offset %d", magic, c, r.NextOffset())
			}
		}
	}
	if _, err := AppendMessageSet(nil, 1, compress.Zstd, recSeq(0, 1)); err == nil {
		t.Fatal("zstd message set accepted")
	}
}

func TestLegacyLogAppendTimeAndZeroWrapperOffset(t *testing.T) {
	recs := recSeq(0, 3)
	data, _ := AppendMessageSet(nil, 1, compress.Snappy, recs)
	// Set log append time on the wrapper (attributes bit 3), timestamp 999.
	body := data[16:]
	body[1] |= recLegacyAttrLogAppendTime
	binary.BigEndian.PutUint64(body[2:], 999)
	binary.BigEndian.PutUint32(data[12:], crc32.ChecksumIEEE(body))
	got, _, err := recReadAll(data, RecordReadOptions{})
	if err != nil || len(got) != 3 {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Timestamp != 999 {
			t.Fatalf("timestamp %d", r.Timestamp)
		}
	}
	// A wrapper offset of 0 (librdkafka) leaves inner offsets as they are.
	if got[2].Offset != 2 {
		t.Fatalf("offsets %v", recOffsets(got))
	}
}

func TestLogAppendTime(t *testing.T) {
	data := recBatch(t, 0, compress.None, recSeq(0, 3), func(b *RecordBatchBuilder) { b.LogAppendTime = true })
	got, _, err := recReadAll(data, RecordReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Timestamp != 1700000000002 { // the max timestamp
			t.Fatalf("timestamp %d", r.Timestamp)
		}
	}
}

// recControl builds a transaction marker batch at offset for pid.
func recControl(t *testing.T, offset, pid int64, commit bool) []byte {
	key := []byte{0, 0, 0, 0}
	if commit {
		key[3] = 1
	}
	return recBatch(t, offset, compress.None, []Record{{Offset: offset, Key: key, Value: []byte{0, 0, 0, 0, 0, 0}}},
		func(b *RecordBatchBuilder) {
			b.Control, b.Transactional, b.ProducerID, b.ProducerEpoch = true, true, pid, 0
		})
}

func recTxn(pid int64) func(*RecordBatchBuilder) {
	return func(b *RecordBatchBuilder) {
		b.Transactional, b.ProducerID, b.ProducerEpoch, b.BaseSequence = true, pid, 0, 0
	}
}

func TestAbortedTransactions(t *testing.T) {
	var data []byte
	data = append(data, recBatch(t, 0, compress.Gzip, recSeq(0, 3), recTxn(1))...) // pid 1: aborted
	data = append(data, recBatch(t, 3, compress.None, recSeq(3, 2), recTxn(2))...) // pid 2: committed
	data = append(data, recControl(t, 5, 1, false)...)                             // abort pid 1
	data = append(data, recControl(t, 6, 2, true)...)                              // commit pid 2
	data = append(data, recBatch(t, 7, compress.Lz4, recSeq(7, 2), nil)...)        // no transaction
	data = append(data, recBatch(t, 9, compress.None, recSeq(9, 2), recTxn(1))...) // pid 1 again: committed
	data = append(data, recControl(t, 11, 1, true)...)
	data = append(data, recBatch(t, 12, compress.Zstd, recSeq(12, 2), recTxn(1))...) // pid 1: aborted again
	data = append(data, recControl(t, 14, 1, false)...)
	aborted := []AbortedTransaction{{ProducerID: 1, FirstOffset: 12}, {ProducerID: 1, FirstOffset: 0}} // unsorted

	for _, tc := range []struct {
		level int8
		want  []int64
	}{
		{0, []int64{0, 1, 2, 3, 4, 7, 8, 9, 10, 12, 13}},
		{1, []int64{3, 4, 7, 8, 9, 10}},
	} {
		got, r, err := recReadAll(data, RecordReadOptions{IsolationLevel: tc.level, AbortedTransactions: aborted})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(recOffsets(got), tc.want) {
			t.Fatalf("isolation %d: got %v, want %v", tc.level, recOffsets(got), tc.want)
		}
		if r.NextOffset() != 15 {
			t.Fatalf("isolation %d: next offset %d", tc.level, r.NextOffset())
		}
	}

	// Only markers: nothing to return, but the offset moves past them.
	got, r, err := recReadAll(data[len(data)-len(recControl(t, 14, 1, false)):], RecordReadOptions{MinOffset: 14, IsolationLevel: 1})
	if err != nil || len(got) != 0 || r.NextOffset() != 15 {
		t.Fatalf("%v %d %d", err, len(got), r.NextOffset())
	}
	if _, ok := r.NeedMoreBytes(); ok {
		t.Fatal("a control batch read whole does not need more bytes")
	}
}

func TestHighWatermark(t *testing.T) {
	var data []byte
	for base := int64(0); base < 30; base += 10 {
		data = append(data, recBatch(t, base, compress.Snappy, recSeq(base, 10), nil)...)
	}
	for _, tc := range []struct {
		min, max, n, next int64
	}{
		{0, 15, 15, 15},  // inside a batch
		{0, 20, 20, 20},  // at a batch boundary
		{0, 0, 30, 30},   // no limit
		{13, 25, 12, 25}, // both ends inside batches
		{0, 1, 1, 1},
		{25, 25, 0, 25},
	} {
		got, r, err := recReadAll(data, RecordReadOptions{MinOffset: tc.min, MaxOffset: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got)) != tc.n || (len(got) > 0 && got[0].Offset != tc.min) || r.NextOffset() != tc.next {
			t.Fatalf("%+v: got %v, next %d", tc, recOffsets(got), r.NextOffset())
		}
		if r.Truncated() {
			t.Fatalf("%+v: truncated", tc)
		}
	}
}

func TestTruncatedLastBatch(t *testing.T) {
	first := recBatch(t, 0, compress.None, recSeq(0, 3), nil)
	second := recBatch(t, 3, compress.Gzip, recSeq(3, 3), nil)
	data := append(append([]byte{}, first...), second...)
	for cut := len(first); cut < len(data); cut++ {
		got, r, err := recReadAll(data[:cut], RecordReadOptions{})
		if err != nil || len(got) != 3 || r.NextOffset() != 3 {
			t.Fatalf("cut %d: %v, %d records, next %d", cut, err, len(got), r.NextOffset())
		}
		if r.Truncated() != (cut > len(first)) {
			t.Fatalf("cut %d: truncated %v", cut, r.Truncated())
		}
		if _, ok := r.NeedMoreBytes(); ok {
			t.Fatalf("cut %d: need more bytes", cut)
		}
	}
	// The first batch cut: nothing can be read, the caller must grow max
	// bytes to the batch's size.
	for cut := 1; cut < len(first); cut++ {
		got, r, err := recReadAll(data[:cut], RecordReadOptions{})
		size, ok := r.NeedMoreBytes()
		if err != nil || len(got) != 0 || !r.Truncated() || !ok {
			t.Fatalf("cut %d: %v %d %v %v", cut, err, len(got), r.Truncated(), ok)
		}
		if want := len(first); cut >= 12 && size != want || cut < 12 && size != 0 {
			t.Fatalf("cut %d: size %d", cut, size)
		}
	}
}

func TestCRCMismatch(t *testing.T) {
	data := append(recBatch(t, 0, compress.None, recSeq(0, 2), nil), recBatch(t, 2, compress.None, recSeq(2, 2), nil)...)
	data[len(data)-3] ^= 0x20 // in the second batch's last value
	got, r, err := recReadAll(data, RecordReadOptions{})
	var be *RecordBatchError
	if !errors.As(err, &be) || be.Offset != 2 || !errors.Is(err, ErrCRCMismatch) {
		t.Fatalf("got %v", err)
	}
	if len(got) != 2 || r.NextOffset() != 2 {
		t.Fatalf("records before the bad batch: %v, next %d", recOffsets(got), r.NextOffset())
	}
	if _, err2 := r.Next(); err2 != err {
		t.Fatal("error does not stick")
	}

	legacy, _ := AppendMessageSet(nil, 1, compress.None, recSeq(7, 1))
	legacy[len(legacy)-1] ^= 1
	if _, _, err := recReadAll(legacy, RecordReadOptions{}); !errors.As(err, &be) || be.Offset != 7 || !errors.Is(err, ErrCRCMismatch) {
		t.Fatalf("legacy: got %v", err)
	}
}

// recResign recomputes a v2 batch's CRC after a test edited it.
func recResign(b []byte) []byte {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], recCRC32C))
	return b
}

func TestHostileLengths(t *testing.T) {
	batch := func(records []byte, count uint32, compression byte) []byte {
		b := make([]byte, 61, 64)
		b = append(b, records...)
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
		b[16] = 2
		b[22] = compression
		binary.BigEndian.PutUint64(b[43:], ^uint64(0))
		binary.BigEndian.PutUint32(b[57:], count)
		return recResign(b)
	}
	twoGiB := binary.AppendVarint(nil, 1<<31)
	cases := map[string][]byte{
		"2 GiB records count": batch([]byte{0, 0, 0}, 0x7fffffff, 0),
		"2 GiB record length": batch(twoGiB, 1, 0),
		"2 GiB key":           batch(append(append([]byte{0x0e, 0, 0, 0}, twoGiB...), 0, 0), 1, 0),
		"2 GiB value":         batch(append(append([]byte{0x0e, 0, 0, 0, 1}, twoGiB...), 0), 1, 0),
		"2 GiB headers count": batch(append([]byte{0x0e, 0, 0, 0, 1, 1}, twoGiB...), 1, 0),
		"negative count":      batch([]byte{0, 0, 0}, 0xffffffff, 0),
		"negative length":     batch([]byte{0x01, 0, 0, 0, 0, 0, 0}, 1, 0),
		"overlong varint":     batch(bytes.Repeat([]byte{0xff}, 11), 1, 0),
		"snappy 2 GiB block":  batch([]byte{0xff, 0xff, 0xff, 0xff, 0x07}, 1, 2),
		"zstd 2 GiB frame":    batch([]byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0x80, 0, 0, 0, 0, 1, 0, 0}, 1, 4),
		"lz4 2 GiB block":     batch([]byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x70, 0, 0xff, 0xff, 0xff, 0x7f}, 1, 3),
		"legacy 2 GiB value": func() []byte {
			m, _ := AppendMessageSet(nil, 1, compress.None, []Record{{Value: []byte("v")}})
			binary.BigEndian.PutUint32(m[len(m)-5:], 0x7fffffff)
			binary.BigEndian.PutUint32(m[12:], crc32.ChecksumIEEE(m[16:]))
			return m
		}(),
	}
	for name, data := range cases {
		if len(data) > 80 {
			t.Fatalf("%s: %d bytes", name, len(data))
		}
		var r RecordReader
		var err error
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		allocs := testing.AllocsPerRun(20, func() {
			r.Reset(data, RecordReadOptions{})
			_, err = r.ReadAll(nil)
		})
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, ErrCorruptRecords) && !errors.Is(err, compress.ErrTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
		if bytesPerRun := (after.TotalAlloc - before.TotalAlloc) / 21; allocs > 16 || bytesPerRun > 4<<10 {
			t.Errorf("%s: %v allocations, %d bytes per decode", name, allocs, bytesPerRun)
		}
	}
	// A batch length of 2 GiB in 64 bytes is a batch cut by max bytes, as
	// brokers cut them: no error, no allocation, and the size it needs.
	cut := make([]byte, 64)
	binary.BigEndian.PutUint32(cut[8:], 0x7fffffff)
	cut[16] = 2
	var r RecordReader
	allocs := testing.AllocsPerRun(20, func() {
		r.Reset(cut, RecordReadOptions{})
		r.Next()
	})
	if _, err := r.Next(); err != io.EOF || allocs != 0 {
		t.Fatalf("cut batch: %v, %v allocations", err, allocs)
	}
	if size, ok := r.NeedMoreBytes(); !ok || (math.MaxInt > 1<<32 && int64(size) != 12+0x7fffffff) {
		t.Fatalf("need more bytes: %d %v", size, ok)
	}
	// A length below any batch is corrupt.
	binary.BigEndian.PutUint32(cut[8:], 5)
	if _, _, err := recReadAll(cut, RecordReadOptions{}); !errors.Is(err, ErrCorruptRecords) {
		t.Fatalf("short length: %v", err)
	}
}

func TestBadBatches(t *testing.T) {
	good := recBatch(t, 0, compress.None, recSeq(0, 2), nil)
	edit := func(f func(b []byte) []byte) []byte {
		return recResign(f(append([]byte{}, good...)))
	}
	cases := map[string][]byte{
		"unknown compression": edit(func(b []byte) []byte { b[22] = 6; return b }),
		"unknown magic":       func() []byte { b := append([]byte{}, good...); b[16] = 3; return b }(),
		"count too high": edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[57:], 3)
			return b
		}),
		"count too low": edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[57:], 1)
			return b
		}),
		"gzip garbage": edit(func(b []byte) []byte { b[22] = 1; return b }),
	}
	for name, data := range cases {
		got, _, err := recReadAll(data, RecordReadOptions{})
		var be *RecordBatchError
		if !errors.As(err, &be) || be.Offset != 0 {
			t.Errorf("%s: got %v (%d records)", name, err, len(got))
		}
	}
}

func TestDecompressionBombInBatch(t *testing.T) {
	big := []Record{{Offset: 0, Value: make([]byte, 8<<20)}}
	for _, c := range recCodecs[1:] {
		data := recBatch(t, 0, c, big, nil)
		_, _, err := recReadAll(data, RecordReadOptions{MaxDecodedSize: 1 << 20})
		if !errors.Is(err, compress.ErrTooLarge) {
			t.Fatalf("%s: got %v", c, err)
		}
		if _, _, err := recReadAll(data, RecordReadOptions{MaxDecodedSize: 9 << 20}); err != nil {
			t.Fatalf("%s: within the limit: %v", c, err)
		}
	}
}

// TestXerialSnappyBatch reads a batch whose records are compressed with a
// hand-made xerial frame, as the Java client writes snappy.
func TestXerialSnappyBatch(t *testing.T) {
	plain := recBatch(t, 0, compress.None, recSeq(0, 1), nil)
	records := plain[61:]
	if len(records) >= 60 {
		t.Fatal("record too long for one literal")
	}
	block := binary.AppendUvarint(nil, uint64(len(records)))
	block = append(block, byte(len(records)-1)<<2) // literal tag
	block = append(block, records...)
	framed := append([]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}, binary.BigEndian.AppendUint32(nil, uint32(len(block)))...)
	framed = append(framed, block...)
	for _, payload := range [][]byte{framed, block} {
		b := append(append([]byte{}, plain[:61]...), payload...)
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
		b[22] = 2
		got, _, err := recReadAll(recResign(b), RecordReadOptions{})
		if err != nil || !reflect.DeepEqual(got, recSeq(0, 1)) {
			t.Fatalf("%v %+v", err, got)
		}
	}
}

func TestEmptyAndSkippedBatches(t *testing.T) {
	// An empty batch left by compaction moves the offset on.
	b := recBatch(t, 0, compress.None, recSeq(0, 1), nil)
	empty := append([]byte{}, b[:61]...)
	binary.BigEndian.PutUint32(empty[8:], 49)
	binary.BigEndian.PutUint32(empty[23:], 9) // last offset delta 9
	binary.BigEndian.PutUint32(empty[57:], 0)
	data := append(recResign(empty), recBatch(t, 10, compress.None, recSeq(10, 1), nil)...)
	got, r, err := recReadAll(data, RecordReadOptions{})
	if err != nil || !reflect.DeepEqual(recOffsets(got), []int64{10}) || r.NextOffset() != 11 {
		t.Fatalf("%v %v %d", err, recOffsets(got), r.NextOffset())
	}
	// A compacted batch (last offset delta past its last record).
	c := recBatch(t, 20, compress.Lz4, []Record{{Offset: 20}, {Offset: 22}}, nil)
	hdr, _ := ParseRecordBatchHeader(c)
	if hdr.LastOffsetDelta != 2 {
		t.Fatalf("last offset delta %d", hdr.LastOffsetDelta)
	}
	if _, err := NewRecordBatchBuilder().AppendTo(nil); err != ErrEmptyBatch {
		t.Fatal(err)
	}
}

func TestReaderReuse(t *testing.T) {
	a := recBatch(t, 0, compress.Zstd, recSeq(0, 50), nil)
	b := recBatch(t, 50, compress.Zstd, recSeq(50, 50), nil)
	var r RecordReader
	r.Reset(a, RecordReadOptions{})
	first, err := r.ReadAll(nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Reset(b, RecordReadOptions{MinOffset: 50})
	second, err := r.ReadAll(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Records of the first Reset are untouched by the second.
	if !reflect.DeepEqual(first, recSeq(0, 50)) || !reflect.DeepEqual(second, recSeq(50, 50)) {
		t.Fatal("records changed")
	}
}

func TestHeadersShareBacking(t *testing.T) {
	recs := recSeq(0, 100)
	for i := range recs {
		recs[i].Headers = []RecordHeader{{Key: "trace", Value: []byte("x")}, {Key: "span", Value: []byte("y")}}
	}
	data := recBatch(t, 0, compress.None, recs, nil)
	var r RecordReader
	allocs := testing.AllocsPerRun(10, func() {
		r.Reset(data, RecordReadOptions{})
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	})
	if allocs > 3 {
		t.Fatalf("%v allocations for 100 records with headers", allocs)
	}
	r.Reset(data, RecordReadOptions{})
	got, _ := r.ReadAll(nil)
	if !reflect.DeepEqual(got, recs) {
		t.Fatal("mismatch")
	}
	got[0].Headers = append(got[0].Headers, RecordHeader{Key: "new"})
	if got[1].Headers[0].Key != "trace" {
		t.Fatal("appending to one record's headers changed another's")
	}
}

func TestBuilderCodecOverride(t *testing.T) {
	b := NewRecordBatchBuilder()
	b.Codec = &compress.ZstdCodec
	for _, r := range recSeq(0, 10) {
		b.Add(r)
	}
	data, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ParseRecordBatchHeader(data)
	got, _, err := recReadAll(data, RecordReadOptions{})
	if err != nil || h.Compression() != compress.Zstd || len(got) != 10 {
		t.Fatalf("%v %v %d", err, h.Compression(), len(got))
	}
	b.Reset()
	if b.Len() != 0 || b.Size() != RecordBatchHeaderSize {
		t.Fatal("reset")
	}
	if err := b.AddWithOffset(Record{Offset: -1}); err == nil {
		t.Fatal("offset before base accepted")
	}
}

// With ReuseBuffers, decoding compressed batches allocates nothing per
// batch once the reader's buffers have grown, and records stay correct
// (as long as each is used before the next call to Next).
func TestReuseBuffers(t *testing.T) {
	for _, c := range recCodecs {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			var data []byte
			var want []Record
			for i := 0; i < 100; i++ {
				recs := recSeq(int64(i*10), 10)
				if i%3 == 0 {
					for k := range recs {
						recs[k].Headers = []RecordHeader{{Key: "h", Value: []byte(fmt.Sprint("v", i, k))}}
					}
				}
				want = append(want, recs...)
				data = append(data, recBatch(t, int64(i*10), c, recs, nil)...)
			}
			var r RecordReader
			opts := RecordReadOptions{ReuseBuffers: true}
			var got []Record
			r.Reset(data, opts)
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, recCopy(rec))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatal("records differ")
			}
			if raceEnabled {
				t.Skip("allocations not counted: under the race detector sync.Pool drops decompressors at random")
			}
			allocs := testing.AllocsPerRun(10, func() {
				r.Reset(data, opts)
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			})
			if allocs >= 1 {
				t.Fatalf("%v allocations for 100 batches", allocs)
			}
			// Without it, each compressed batch gets a buffer of its own
			// (and each batch with headers an array), which shows the
			// count above measures something.
			fresh := testing.AllocsPerRun(10, func() {
				r.Reset(data, RecordReadOptions{})
				for {
					if _, err := r.Next(); err != nil {
						break
					}
				}
			})
			if c != compress.None && fresh < 100 {
				t.Fatalf("%v allocations for 100 batches without ReuseBuffers", fresh)
			}
			t.Logf("allocations for 100 batches: %v with ReuseBuffers, %v without", allocs, fresh)
		})
	}
}

// recCopy returns rec with its own copies of the bytes it aliases.
func recCopy(rec Record) Record {
	clone := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		return append([]byte{}, b...)
	}
	rec.Key, rec.Value = clone(rec.Key), clone(rec.Value)
	if rec.Headers != nil {
		hs := make([]RecordHeader, len(rec.Headers))
		for i, h := range rec.Headers {
			hs[i] = RecordHeader{Key: h.Key, Value: clone(h.Value)}
		}
		rec.Headers = hs
	}
	return rec
}
