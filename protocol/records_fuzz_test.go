package protocol

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/rackfetch/kafka-go/compress"
)

// FuzzRecordBatch decodes arbitrary bytes as a partition's records: no
// panic, and whatever comes out respects the offset bounds. Each input is
// also decoded with its checksums fixed, so that mutations reach the
// record and codec decoders instead of stopping at the CRC check.
func FuzzRecordBatch(f *testing.F) {
	for _, c := range recCodecs {
		recs := recSeq(10, 5)
		recs[1].Headers = []RecordHeader{{Key: "h", Value: []byte("v")}}
		f.Add(recBatch(f, 10, c, recs, nil))
		f.Add(recBatch(f, 10, c, recSeq(10, 3), recTxn(3)))
		if c != compress.Zstd {
			for _, magic := range []int8{0, 1} {
				set, err := AppendMessageSet(nil, magic, c, recSeq(10, 3))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(set)
			}
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, recFixChecksums(append([]byte(nil), data...))} {
			for _, opts := range []RecordReadOptions{
				{MaxDecodedSize: 1 << 20},
				{MinOffset: 11, MaxOffset: 13, IsolationLevel: 1, MaxDecodedSize: 1 << 20,
					AbortedTransactions: []AbortedTransaction{{ProducerID: 3, FirstOffset: 10}}},
			} {
				r := NewRecordReader(in, opts)
				for {
					rec, err := r.Next()
					if err != nil {
						break
					}
					if rec.Offset < opts.MinOffset || (opts.MaxOffset > 0 && rec.Offset >= opts.MaxOffset) {
						t.Fatalf("offset %d outside [%d, %d)", rec.Offset, opts.MinOffset, opts.MaxOffset)
					}
				}
				if opts.MaxOffset > 0 && r.NextOffset() > opts.MaxOffset {
					t.Fatalf("next offset %d past max %d", r.NextOffset(), opts.MaxOffset)
				}
			}
		}
	})
}

// recFixChecksums rewrites the CRC of every whole entry of b.
func recFixChecksums(b []byte) []byte {
	for rest := b; len(rest) >= recEntryHeader; {
		n := int64(int32(binary.BigEndian.Uint32(rest[8:])))
		if n < recLegacyMinSize || n > int64(len(rest)-12) {
			break
		}
		entry := rest[:12+n]
		if entry[16] == 2 {
			if len(entry) >= 21 {
				binary.BigEndian.PutUint32(entry[17:], crc32.Checksum(entry[21:], recCRC32C))
			}
		} else {
			binary.BigEndian.PutUint32(entry[12:], crc32.ChecksumIEEE(entry[16:]))
		}
		rest = rest[12+n:]
	}
	return b
}
