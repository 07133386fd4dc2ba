package recordqueue

import (
	"unsafe"

	"github.com/rackfetch/kafka-go/internal/prefetch"
	"github.com/rackfetch/kafka-go/protocol"
)

// Nothing is copied: keys, values and headers of uncompressed batches stay
// in the fetch response's frame, those of compressed batches in the buffer
// the batch was decompressed into, and neither buffer is ever reused (the
// engine reads every response into a fresh one, the record reader
// decompresses every batch into a fresh one). A run keeps each record as a
// compact, pointer-free entry (where its bytes are), and the application's
// message is made when it takes it: the garbage collector never scans
// per-record pointers, and a message the application keeps keeps its
// buffer alive, as a kafka-go Message keeps the bytes it was given.

// span locates a key or value: n bytes at off in the run's buffer buf; n
// is -1 for null.
type span struct{ buf, off, n int32 }

// Record is one record of a run, compact: where its bytes lie in the run.
// Run.Key, Run.Value and Run.Headers return them.
type Record struct {
	Offset     int64
	Timestamp  int64 // ms since the epoch, -1: none
	key, value span
	hdrs       int32 // first header in the run's hdrs
	nhdrs      int32
}

// Run is consecutive records of one partition from one fetch, or an error
// for the application.
type Run struct {
	Topic     string
	Partition int
	HW        int64 // the partition's high watermark when fetched
	// Gen is the generation of the fetcher that pushed the run.
	Gen int64
	// Incarnation is the topic's incarnation the records belong to (set
	// by the fetcher before the push): a topic deleted and created again
	// starts a new log, whose offsets say nothing of the old one's.
	Incarnation int

	part *queuedPartition

	recs  []Record
	bufs  [][]byte
	hdrs  []protocol.RecordHeader
	bytes int64 // keys and values of recs
	// counted is the bytes counted in the process-wide budget while the
	// run waits (a run put back is not counted again).
	counted int64

	next int
	err  error
	// repeats counts the same error coalesced into err, dropped the
	// errors refused while the queue held maxQueuedErrors.
	repeats, dropped int
}

// place returns where s lies in buffer i of the run; bytes that lie
// elsewhere (never, as the record reader works today) are copied into a
// buffer of their own.
func (run *Run) place(i int, s []byte) span {
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
func (run *Run) slice(sp span) []byte {
	if sp.n < 0 {
		return nil
	}
	end := sp.off + sp.n
	return run.bufs[sp.buf][sp.off:end:end]
}

// At returns record i of the run.
func (run *Run) At(i int) *Record { return &run.recs[i] }

// Key returns the key of rec, a record of the run (nil: null).
func (run *Run) Key(rec *Record) []byte { return run.slice(rec.key) }

// Value returns the value of rec, a record of the run (nil: null).
func (run *Run) Value(rec *Record) []byte { return run.slice(rec.value) }

// Headers returns the headers of rec, a record of the run (nil: none).
func (run *Run) Headers(rec *Record) []protocol.RecordHeader {
	if rec.nhdrs <= 0 {
		return nil
	}
	end := rec.hdrs + rec.nhdrs
	return run.hdrs[rec.hdrs:end:end]
}

// Len returns the records of the run.
func (run *Run) Len() int { return len(run.recs) }

// size returns the bytes of keys and values of records [i, j).
func (run *Run) size(i, j int) int64 {
	if i == 0 && j == len(run.recs) {
		return run.bytes
	}
	var n int64
	for k := i; k < j; k++ {
		n += int64(max(run.recs[k].key.n, 0) + max(run.recs[k].value.n, 0))
	}
	return n
}

// Slice returns a run of records [i, j) of run, which shares its bytes.
func (run *Run) Slice(i, j int) *Run {
	return &Run{Topic: run.Topic, Partition: run.Partition, HW: run.HW, Gen: run.Gen, Incarnation: run.Incarnation,
		recs: run.recs[i:j:j], bufs: run.bufs, hdrs: run.hdrs, bytes: run.size(i, j)}
}

// prefetchAhead is how many records ahead of the one it returns
// FetchMessage asks the CPU to load the value of. Records were decoded long
// before the application reads them (the read-ahead budget is large), so a
// value is rarely still in cache: the load overlaps the application's work
// on the records in between instead of stalling its read of the value
// (7-11 % less CPU with 1 KiB values, bench/RESULTS.md). FetchBatch needs no
// such hint: a loop over a batch's messages overlaps the loads by itself.
const prefetchAhead = 4

// prefetch asks the CPU to load the value of the record prefetchAhead
// after record i, if there is one.
func (run *Run) prefetch(i int) {
	if k := i + prefetchAhead; k < len(run.recs) {
		prefetch.Bytes(run.slice(run.recs[k].value))
	}
}
