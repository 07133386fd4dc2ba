// Package recordqueue is the Reader's record path: the fetched partitions
// decoded into runs of compact records (Decoder), and the queue the runs
// wait in until the application takes their records (Queue). The client
// makes its messages from the records a run gives (Run.At, Key, Value,
// Headers); nothing here knows its Message type.
package recordqueue

import (
	"context"
	"errors"
	"io"
	"sort"
	"sync"
)

// Queue hands fetched records to the application. Fetchers push the
// records of one fetch of one partition as one run, without waiting; the
// application pops one record or a whole run (in pieces of at most the
// queue's capacity). A fetcher then waits, before its partition's next
// fetch, until the application has taken all but its last fetch
// (WaitTaken), and the engine asks for no more bytes than the Reader's
// budget leaves (BufferedBytes), so what waits here is bounded by both.
// Every run carries the generation of the fetcher that pushed it: a new
// generation (SetOffset, rebalance) drops what is queued and refuses runs
// of older ones, so no stale record is ever returned.
type Queue struct {
	mu       sync.Mutex
	gen      int64
	runs     []*Run // FIFO from head
	head     int
	count    int   // records queued
	bytes    int64 // their keys and values
	capacity int
	closed   bool
	dataWait chan struct{} // closed when something is pushed
	parts    map[TopicPartition]*queuedPartition
	// OnFree is called when a run has been taken (the engine may have
	// room for another fetch).
	OnFree func()
	// budget is the process-wide budget the queued runs' bytes count in,
	// given back as each run is taken whole; shared is what they hold.
	budget Budget
	shared int64
	// sameError reports whether an error repeats a queued one.
	sameError func(a, b error) bool
	// errs is the error runs queued (at most maxQueuedErrors).
	errs int
}

// Budget is a byte budget shared by the queues of a process.
type Budget interface {
	Add(n int64)
	Release(n int64)
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int
}

// queuedPartition counts the queued records of one partition; wait is
// closed once they are no more than limit (WaitTaken).
type queuedPartition struct {
	count int
	limit int
	wait  chan struct{}
	// err is the partition's last queued entry when it is an error: the
	// same error again coalesces into it (PushPartitionErr).
	err *Run
}

var errStaleGeneration = errors.New("kafka reader: stale fetcher generation")

// Init sets up an empty queue handing out at most capacity records per
// batch, counting its runs in budget; sameError tells an error that
// repeats a queued one.
func (q *Queue) Init(capacity int, budget Budget, sameError func(a, b error) bool) {
	q.capacity = capacity
	q.budget = budget
	q.sameError = sameError
	q.parts = map[TopicPartition]*queuedPartition{}
}

// Capacity returns the most records PopBatch hands out at once.
func (q *Queue) Capacity() int { return q.capacity }

// Len returns the records waiting.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.count
}

// BufferedBytes returns the bytes of keys and values waiting.
func (q *Queue) BufferedBytes() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.bytes
}

// Reset starts generation gen, dropping everything queued.
func (q *Queue) Reset(gen int64) {
	q.mu.Lock()
	q.gen = gen
	clear(q.runs)
	q.runs, q.head, q.count, q.bytes, q.errs = q.runs[:0], 0, 0, 0, 0
	q.wakeAllTaken()
	q.parts = map[TopicPartition]*queuedPartition{}
	shared := q.shared
	q.shared = 0
	q.mu.Unlock()
	q.budget.Release(shared)
	q.freed()
}

// Close ends the queue: pops return io.EOF, pushes and waits fail.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.wakeData()
	q.wakeAllTaken()
	shared := q.shared
	q.shared = 0
	q.mu.Unlock()
	q.budget.Release(shared)
}

func (q *Queue) wakeData() {
	if q.dataWait != nil {
		close(q.dataWait)
		q.dataWait = nil
	}
}

func (q *Queue) wakeAllTaken() {
	for _, p := range q.parts {
		if p.wait != nil {
			close(p.wait)
			p.wait = nil
		}
	}
}

func (q *Queue) freed() {
	if q.OnFree != nil {
		q.OnFree()
	}
}

// part returns the counter of tp; q.mu held.
func (q *Queue) part(tp TopicPartition) *queuedPartition {
	p := q.parts[tp]
	if p == nil {
		p = &queuedPartition{}
		q.parts[tp] = p
	}
	return p
}

// Push queues run (one partition's records, in order) for generation gen.
// It fails when the generation is over or the queue closed; then the
// caller stops.
func (q *Queue) Push(gen int64, tp TopicPartition, run *Run) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return io.ErrClosedPipe
	case gen != q.gen:
		return errStaleGeneration
	}
	run.Gen, run.part = gen, q.part(tp)
	run.part.err = nil // an error after these records is queued after them
	n := run.Len()
	q.runs = append(q.runs, run)
	q.count += n
	q.bytes += run.size(0, n)
	run.part.count += n
	run.counted = run.bytes
	q.shared += run.counted
	q.budget.Add(run.counted)
	q.wakeData()
	return nil
}

// WaitTaken waits until at most limit records of tp wait in the queue,
// calling before first if it has to wait. It fails when the generation is
// over, the queue closed or ctx done.
func (q *Queue) WaitTaken(ctx context.Context, gen int64, tp TopicPartition, limit int, before func()) error {
	for called := false; ; {
		q.mu.Lock()
		p := q.part(tp)
		switch {
		case q.closed:
			q.mu.Unlock()
			return io.ErrClosedPipe
		case gen != q.gen:
			q.mu.Unlock()
			return errStaleGeneration
		case p.count <= limit:
			q.mu.Unlock()
			return nil
		}
		if p.wait == nil {
			p.wait = make(chan struct{})
		}
		p.limit = limit
		wait := p.wait
		q.mu.Unlock()
		if !called {
			called = true
			before()
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// taken accounts for records [i, j) of run leaving the queue; q.mu held.
func (q *Queue) taken(run *Run, i, j int) {
	q.count -= j - i
	q.bytes -= run.size(i, j)
	p := run.part
	p.count -= j - i
	if p.wait != nil && p.count <= p.limit {
		close(p.wait)
		p.wait = nil
	}
}

// Unpop puts the record at offset, just popped from the run from, back at
// the head of the queue if its generation is still the queue's (a new
// generation has dropped everything of the old one, the record included).
func (q *Queue) Unpop(from *Run, offset int64) {
	i := sort.Search(len(from.recs), func(k int) bool { return from.recs[k].Offset >= offset })
	if i == len(from.recs) || from.recs[i].Offset != offset {
		return // not a record of from
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || from.Gen != q.gen {
		return
	}
	run := from.Slice(i, i+1)
	run.part = q.part(TopicPartition{run.Topic, run.Partition})
	if q.head > 0 {
		q.head--
		q.runs[q.head] = run
	} else {
		q.runs = append(q.runs, nil)
		copy(q.runs[1:], q.runs)
		q.runs[0] = run
	}
	q.count++
	q.bytes += run.bytes
	run.part.count++
	q.wakeData()
}

// front waits for the first run; q.mu is held when it returns nil error.
func (q *Queue) front(ctx context.Context) (*Run, error) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil, io.EOF
		}
		if q.head < len(q.runs) {
			return q.runs[q.head], nil
		}
		if q.dataWait == nil {
			q.dataWait = make(chan struct{})
		}
		wait := q.dataWait
		q.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dropFront removes the first run; q.mu must be held.
func (q *Queue) dropFront() {
	run := q.runs[q.head]
	if n := run.counted; n > 0 {
		q.shared -= n
		q.budget.Release(n)
	}
	if run.err != nil {
		q.errs--
		if run.part != nil && run.part.err == run {
			run.part.err = nil
		}
	}
	q.runs[q.head] = nil
	q.head++
	if q.head == len(q.runs) {
		q.runs, q.head = q.runs[:0], 0
	} else if q.head > 64 && q.head*2 > len(q.runs) {
		n := copy(q.runs, q.runs[q.head:])
		clear(q.runs[n:])
		q.runs, q.head = q.runs[:n], 0
	}
}

// Pop takes the next record: record i of the run it returns.
func (q *Queue) Pop(ctx context.Context) (run *Run, i int, err error) {
	run, err = q.front(ctx)
	if err != nil {
		return nil, 0, err
	}
	if run.err != nil {
		q.dropFront()
		q.mu.Unlock()
		return nil, 0, run.queuedErr()
	}
	i = run.next
	run.next++
	q.taken(run, i, i+1)
	done := run.next == run.Len()
	if done {
		q.dropFront()
	}
	q.mu.Unlock()
	if done {
		q.freed()
	}
	// The run's records no longer change: read outside the lock.
	run.prefetch(i)
	return run, i, nil
}

// PopBatch takes the rest of the first run, at most the queue's capacity
// of records of it: records [i, j) of the run it returns.
func (q *Queue) PopBatch(ctx context.Context) (run *Run, i, j int, err error) {
	run, err = q.front(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	if run.err != nil {
		q.dropFront()
		q.mu.Unlock()
		return nil, 0, 0, run.queuedErr()
	}
	i = run.next
	j = min(run.Len(), i+q.capacity)
	run.next = j
	q.taken(run, i, j)
	done := j == run.Len()
	if done {
		q.dropFront()
	}
	q.mu.Unlock()
	if done {
		q.freed()
	}
	return run, i, j, nil
}
