package bench

import (
	"bytes"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestDecodersAgree checks that every client reads back every record,
// offsets, keys and values, from the bytes the benchmarks decode.
func TestDecodersAgree(t *testing.T) {
	for _, size := range valueSizes {
		recs := records(size)
		for _, c := range codecs {
			data := recordBatches(t, recs, c.c)
			for _, cl := range clients {
				t.Run(fmt.Sprintf("value=%dB/codec=%s/client=%s", size, c.name, cl.name), func(t *testing.T) {
					dec := cl.new(data, size)
					for round := 0; round < 2; round++ { // the second round reuses the decoder's state
						n := 0
						err := dec(func(off int64, k, v []byte) {
							if n < len(recs) {
								want := &recs[n]
								if off != want.Offset || !bytes.Equal(k, want.Key) || !bytes.Equal(v, want.Value) {
									t.Fatalf("record %d: got offset %d key %q value %d bytes, want offset %d key %q", n, off, k, len(v), want.Offset, want.Key)
								}
							}
							n++
						})
						if err != nil {
							t.Fatal(err)
						}
						if n != len(recs) {
							t.Fatalf("%d records, want %d", n, len(recs))
						}
					}
				})
			}
		}
	}
}

// BenchmarkDecode decodes, per op, 100 v2 record batches of 100 records
// (10,000 records with 10-byte keys) through each client, same bytes for
// all. Sub-benchmarks of one setting run one client after the other, so
// that the clients of a setting are measured close in time. Metrics per
// record: wall ns, CPU ns of the whole process (user+sys, GC included),
// allocations and bytes allocated.
func BenchmarkDecode(b *testing.B) {
	for _, size := range valueSizes {
		recs := records(size)
		for _, c := range codecs {
			data := recordBatches(b, recs, c.c)
			for _, cl := range clients {
				name := fmt.Sprintf("value=%dB/records=%dx%d/codec=%s/client=%s", size, numBatches, recordsPerBatch, c.name, cl.name)
				b.Run(name, func(b *testing.B) { benchDecode(b, cl.new(data, size)) })
			}
		}
	}
}

func benchDecode(b *testing.B, dec decoder) {
	var n, sum int
	visit := func(_ int64, k, v []byte) {
		n++
		sum += len(k) + len(v)
	}
	// Warm pools and buffers, as a running client would have them.
	if err := dec(visit); err != nil {
		b.Fatal(err)
	}
	n = 0
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	for b.Loop() {
		if err := dec(visit); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&m1)
	if n != b.N*numRecords {
		b.Fatalf("%d records decoded, want %d", n, b.N*numRecords)
	}
	recs := float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/recs, "ns/record")
	b.ReportMetric(float64(cpu.Nanoseconds())/recs, "cpu-ns/record")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/recs, "allocs/record")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/recs, "B/record")
	if sum == 0 {
		b.Fatal("no bytes seen")
	}
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
