package recordqueue

import "fmt"

// Errors for the application wait in the queue among the runs of records.
// A fetcher retrying a failure no retry fixes pushes it at every retry, so
// what waits is bounded: the same error of a partition coalesces until the
// application takes it, and at most maxQueuedErrors wait.

// maxQueuedErrors bounds the errors queued for the application; past it
// an error is not queued, only counted on the oldest queued one (the
// fetchers log every failure anyway).
const maxQueuedErrors = 16

// QueuedErrors returns the errors waiting.
func (q *Queue) QueuedErrors() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.errs
}

// PushErr queues an error of no one partition for the application in
// generation gen; it reports false when the generation is over.
func (q *Queue) PushErr(gen int64, err error) bool {
	return q.PushPartitionErr(gen, TopicPartition{}, err)
}

// PushPartitionErr queues an error of partition tp for the application in
// generation gen; it reports false when the generation is over. A fetcher
// retrying a failure pushes it at every retry: while the application has
// not taken it, the same error again is only counted, unless records of
// tp were queued after it (the order of tp's records and errors is kept).
func (q *Queue) PushPartitionErr(gen int64, tp TopicPartition, err error) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || gen != q.gen {
		return false
	}
	p := q.part(tp)
	if last := p.err; last != nil && q.sameError(last.err, err) {
		last.repeats++
		return true
	}
	if q.errs >= maxQueuedErrors {
		for _, run := range q.runs[q.head:] {
			if run.err != nil {
				run.dropped++
				break
			}
		}
		return true
	}
	run := &Run{Gen: gen, Topic: tp.Topic, Partition: tp.Partition, err: err, part: p}
	p.err = run
	q.errs++
	q.runs = append(q.runs, run)
	q.wakeData()
	return true
}

// queuedErr is the error an error run hands the application, with what
// was coalesced into it or refused while it waited.
func (run *Run) queuedErr() error {
	switch {
	case run.repeats > 0 && run.dropped > 0:
		return fmt.Errorf("%w (repeated %d more times, and %d other errors not queued, before it was read)", run.err, run.repeats, run.dropped)
	case run.repeats > 0:
		return fmt.Errorf("%w (repeated %d more times before it was read)", run.err, run.repeats)
	case run.dropped > 0:
		return fmt.Errorf("%w (%d other errors not queued before it was read)", run.err, run.dropped)
	}
	return run.err
}
