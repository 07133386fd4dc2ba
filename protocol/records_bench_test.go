package protocol

import (
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"testing"
)

// recBenchData returns 100 batches of 100 records with 100-byte values
// (text-like, so that codecs compress them) and 10-byte keys.
func recBenchData(b testing.TB, c interface{ String() string }, codec int) []byte {
	rnd := rand.New(rand.NewSource(7))
	words := []string{"kafka ", "record ", "batch ", "fetch ", "offset ", "rack ", "replica ", "leader "}
	var data []byte
	off := int64(0)
	for i := 0; i < 100; i++ {
		bb := NewRecordBatchBuilder()
		bb.BaseOffset, bb.Compression = off, recCodecs[codec]
		for j := 0; j < 100; j++ {
			v := make([]byte, 0, 100)
			for len(v) < 100 {
				v = append(v, words[rnd.Intn(len(words))]...)
			}
			bb.Add(Record{Timestamp: 1700000000000 + off, Key: []byte(fmt.Sprintf("key-%06d", off)), Value: v[:100]})
			off++
		}
		var err error
		if data, err = bb.AppendTo(data); err != nil {
			b.Fatal(err)
		}
	}
	return data
}

// BenchmarkDecodeRecords decodes 10,000 records (100 batches of 100, with
// 100-byte values) per iteration, reusing one RecordReader; the /reuse
// variants set ReuseBuffers.
func BenchmarkDecodeRecords(b *testing.B) {
	for i, c := range recCodecs {
		name := c.String()
		if i == 0 {
			name = "none"
		}
		data := recBenchData(b, c, i)
		b.Run(name, func(b *testing.B) { benchDecodeRecords(b, data, RecordReadOptions{}) })
		b.Run(name+"/reuse", func(b *testing.B) { benchDecodeRecords(b, data, RecordReadOptions{ReuseBuffers: true}) })
	}
}

func benchDecodeRecords(b *testing.B, data []byte, opts RecordReadOptions) {
	const perOp = 100 * 100
	var r RecordReader
	var n int
	run := func() {
		r.Reset(data, opts)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(rec.Value)
		}
	}
	run() // warm pools
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		run()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	records := float64(b.N * perOp)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/records, "ns/record")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/records, "allocs/record")
	if n == 0 {
		b.Fatal("no records")
	}
}

func BenchmarkEncodeRecordBatch(b *testing.B) {
	recs := recSeq(0, 100)
	for i, c := range recCodecs {
		b.Run(fmt.Sprint(c), func(b *testing.B) {
			bb := NewRecordBatchBuilder()
			bb.Compression = recCodecs[i]
			var out []byte
			b.ReportAllocs()
			for k := 0; k < b.N; k++ {
				bb.Reset()
				for _, r := range recs {
					bb.Add(r)
				}
				var err error
				if out, err = bb.AppendTo(out[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
