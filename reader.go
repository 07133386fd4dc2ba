package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/internal/recordqueue"
	"github.com/rackfetch/kafka-go/internal/retry"
)

var (
	errOnlyAvailableWithGroup = errors.New("unavailable when GroupID is not set")
	errNotAvailableWithGroup  = errors.New("unavailable when GroupID is set")
)

// Reader provides a high-level API for consuming messages from kafka.
//
// A Reader reads one partition (ReaderConfig.Partition) or, with a GroupID,
// the partitions a consumer group assigns it. Each partition has its own
// fetcher goroutine that fetches batches, from the leader or, with
// ReaderConfig.Rack, from the in-sync replica in the reader's rack, and
// queues their messages in order; ReadMessage, FetchMessage and FetchBatch
// take them from the queue. Fetches go out per broker, one request for
// all the partitions read there: a group Reader's, and those of all the
// partition-mode Readers of the process with the same Dialer, Brokers and
// fetch settings (MinBytes, MaxWait, IsolationLevel, Rack, MaxFollowerLag,
// MaxBufferedBytes), which share their connections. Each Reader keeps its
// own MaxBufferedBytes. A Reader automatically manages reconnections,
// leader changes and broker restarts, and blocking methods have context
// support for asynchronous cancellations.
//
// Within one Reader's run no message is lost or delivered twice and the
// order of each partition is kept, except where the program moves the
// position (SetOffset) or the partition's log itself changes (retention,
// truncation after an unclean leader election: both are logged through
// ErrorLogger). In group mode this holds for each partition while the
// reader has it, across rebalances that leave it the partition; a
// partition that moves to another member continues there at the committed
// offset, so messages returned but not committed are returned again by
// that member (at least once across members).
//
// Note that it is important to call Close on a Reader when a process exits,
// so the group coordinator hands its partitions to others at once.
type Reader struct {
	config  ReaderConfig
	cluster *cluster
	// cooldown and rack are the share's (reader_runtime.go): its
	// background work watches them for all its Readers.
	cooldown *cooldownCache
	stats    *readerStats
	queue    readerQueue
	engine   *fetchengine.Engine // reader_engine.go
	addrs    *brokerAddrs
	// share is the Reader's engine and cluster view, shared by the
	// partition-mode Readers of the same settings (reader_engine.go);
	// owner is the Reader's number there.
	share *engineShare
	owner uint64
	rack  *rackCheck // reader_runtime.go

	failure lastFailure // the latest failure retried, for a caller whose context ends (error.go)

	// stctx lives as long as the Reader; Close cancels it.
	stctx context.Context
	stop  context.CancelFunc

	mu     sync.Mutex
	closed bool
	// closing mirrors closed for the group-mode read path, which needs
	// nothing else of r.mu (one lock fewer per message).
	closing atomic.Bool
	started bool  // partition mode: the fetcher runs
	gen     int64 // generation of fetchers (and of queued messages)
	cancel  context.CancelFunc
	offset  int64 // partition mode: offset of the next message to return
	lag     int64
	join    sync.WaitGroup // fetchers and background goroutines
	// running: the partition-mode fetchers of the current generation,
	// joined before the next generation's start (startFetchers).
	running sync.WaitGroup

	lagOnce sync.Once
	lagStop func()      // ends the periodic lag reading (set once, under r.mu)
	lagBusy atomic.Bool // a lag lookup at the leader is under way

	group *readerGroup // group mode
}

// NewReader creates and returns a new Reader configured with config. The
// offset is initialized to FirstOffset. It panics when config is invalid
// (see Validate), as kafka-go does.
func NewReader(config ReaderConfig) *Reader {
	if err := config.Validate(); err != nil {
		panic(err)
	}
	config = config.withDefaults()
	if config.ReadBackoffMax < config.ReadBackoffMin {
		panic(fmt.Errorf("ReadBackoffMax %d smaller than ReadBackoffMin %d", config.ReadBackoffMax, config.ReadBackoffMin))
	}
	statsPartition := config.Partition
	if config.GroupID != "" {
		statsPartition = -1 // a group reader has no one partition
	}
	stctx, stop := context.WithCancel(context.Background())
	r := &Reader{
		config: config,
		stats:  newReaderStats(strconv.Itoa(statsPartition)),
		stctx:  stctx,
		stop:   stop,
		offset: FirstOffset,
		lag:    -1,
		cancel: func() {},
	}
	r.queue.init(config.QueueCapacity)
	r.joinEngine() // and its cluster
	r.queue.OnFree = r.engine.RoomFreed
	if config.Rack != "" || config.ReplicaSelector != nil {
		r.share.rt.Start() // the share's background work, for Readers that leave leaders
	}
	if r.useConsumerGroup() {
		r.startGroup()
	}
	return r
}

func (r *Reader) useConsumerGroup() bool { return r.config.GroupID != "" }

// Config returns the reader's configuration, defaults applied.
func (r *Reader) Config() ReaderConfig { return r.config }

// Close closes the stream, preventing the program from reading any more
// messages from it. Pending and later reads return io.EOF.
func (r *Reader) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.closing.Store(true)
	r.cancel()
	lagStop := r.lagStop
	r.mu.Unlock()

	if lagStop != nil {
		lagStop()
	}

	r.stop()
	// The group first: its fetchers may start probes (r.join) until they
	// stop, and every Add to r.join must come before the Wait.
	if r.group != nil {
		r.group.wait()
	}
	r.join.Wait()
	r.queue.close()
	r.leaveEngine() // and the cluster, after its last Reader
	return nil
}

// ReadMessage reads and return the next message from the r. The method
// call blocks until a message becomes available, or an error occurs. The
// program may also specify a context to asynchronously cancel the blocking
// operation.
//
// The method returns io.EOF to indicate that the reader has been closed.
//
// If consumer groups are used, ReadMessage will automatically commit the
// offset when called. Note that this could result in an offset being
// committed before the message is fully processed.
//
// If more fine-grained control of when offsets are committed is required,
// it is recommended to use FetchMessage with CommitMessages instead.
func (r *Reader) ReadMessage(ctx context.Context) (Message, error) {
	// In group mode the message only counts as returned once committed.
	// If the commit fails the application never sees it: it goes back to
	// the head of the queue while the generation lasts (the next
	// ReadMessage returns it again), and a partition the reader keeps
	// across a rebalance resumes at it.
	var m Message
	run, err := r.fetchMessage(ctx, !r.useConsumerGroup(), &m)
	if err != nil {
		return Message{}, fmt.Errorf("fetching message: %w", err)
	}
	if r.useConsumerGroup() {
		if err := r.CommitMessages(ctx, m); err != nil {
			r.queue.unpop(run, m)
			return Message{}, fmt.Errorf("committing message: %w", err)
		}
		r.group.delivered(topicPartition{m.Topic, m.Partition}, m.Offset, run)
	}
	return m, nil
}

// FetchMessage reads and return the next message from the r. The method
// call blocks until a message becomes available, or an error occurs. The
// program may also specify a context to asynchronously cancel the blocking
// operation.
//
// The method returns io.EOF to indicate that the reader has been closed.
//
// FetchMessage does not commit offsets automatically when using consumer
// groups. Use CommitMessages to commit the offset.
//
// The message's Key, Value and Headers point into the fetched data, the
// whole fetch response it came in (other partitions' records too): copy
// them from a message kept long after it was processed, or that response
// stays in memory with it.
func (r *Reader) FetchMessage(ctx context.Context) (m Message, err error) {
	_, err = r.fetchMessage(ctx, true, &m)
	return m, err
}

// fetchMessage takes the next message into *m and returns the run it came
// from (its fetch's high watermark, the generation of the fetcher that
// queued it, the topic's incarnation); returned says whether it counts as
// returned to the application (group mode: see readerGroup.delivered). *m
// is left empty on error.
func (r *Reader) fetchMessage(ctx context.Context, returned bool, m *Message) (*queuedRun, error) {
	gen, err := r.beforeRead()
	if err != nil {
		return nil, err
	}
	run, err := r.queue.pop(ctx, m)
	if err != nil {
		return nil, r.failure.withCause(err)
	}
	r.delivered(gen, run.Gen, m.Offset, run.HW)
	if returned && r.group != nil {
		r.group.delivered(topicPartition{m.Topic, m.Partition}, m.Offset, run)
	}
	return run, nil
}

// MessageBatch is the messages of one fetch of one partition, in offset
// order, as FetchBatch returns them.
type MessageBatch struct {
	Topic     string
	Partition int
	// HighWaterMark is the partition's high watermark when the batch was
	// fetched (as seen by the replica that served it).
	HighWaterMark int64
	// Messages holds at least one message. Their keys, values and headers
	// point into the fetch response they came in: keeping any of them keeps
	// that whole response (other partitions' records too) in memory.
	Messages []Message
}

// FetchBatch returns the next batch of messages: every message the
// reader's next fetch of one partition returned that FetchMessage has not
// returned yet, with no per-message hand-off. A fetch that returned more
// than QueueCapacity messages is returned in pieces of at most
// QueueCapacity messages (raise QueueCapacity for larger batches; MaxBytes
// bounds what one fetch returns).
//
// It blocks until messages are available, ctx ends (ctx.Err()) or the
// reader is closed (io.EOF). Like FetchMessage it does not commit: in group
// mode pass the last message to CommitMessages, which commits everything
// before it in that partition. In partition mode it moves Offset and Lag
// past the last message.
func (r *Reader) FetchBatch(ctx context.Context) (*MessageBatch, error) {
	b := new(MessageBatch)
	if err := r.fetchBatch(ctx, b, true); err != nil {
		return nil, err
	}
	return b, nil
}

// FetchBatchInto is FetchBatch into a batch the caller keeps for the next
// call: batch.Messages' array is reused (and grown as needed), so a loop
// calling it allocates nothing per batch once the array holds a whole
// batch. The Message values batch held before are dropped when the call
// starts (on error the batch is left empty); copy those you keep (a
// copy's Key and Value stay valid: they point into the fetched data, not
// into the array).
func (r *Reader) FetchBatchInto(ctx context.Context, batch *MessageBatch) error {
	batch.empty()
	return r.fetchBatch(ctx, batch, false)
}

// empty drops the messages of b, keeping its array. FetchBatchInto does it
// before waiting, not when overwriting: a Message points into its whole
// fetch response, which holds other partitions' records too, and many
// Readers each waiting with their last batch kept every response of the
// run alive (bench/RESULTS.md).
func (b *MessageBatch) empty() {
	clear(b.Messages)
	*b = MessageBatch{Messages: b.Messages[:0]}
}

// fetchBatch fills b with the next batch, into a fresh array when fresh.
func (r *Reader) fetchBatch(ctx context.Context, b *MessageBatch, fresh bool) error {
	gen, err := r.beforeRead()
	if err != nil {
		return err
	}
	run, err := r.queue.popBatch(ctx, b, fresh)
	if err != nil {
		return r.failure.withCause(err)
	}
	last := b.Messages[len(b.Messages)-1].Offset
	r.delivered(gen, run.Gen, last, b.HighWaterMark)
	if r.group != nil {
		r.group.delivered(topicPartition{b.Topic, b.Partition}, last, run)
	}
	return nil
}

// beforeRead starts the partition fetcher on first use and returns the
// current generation.
func (r *Reader) beforeRead() (int64, error) {
	if r.useConsumerGroup() {
		// The queue's runs carry their generation: the group needs none.
		if r.closing.Load() {
			return 0, io.EOF
		}
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, io.EOF
	}
	if !r.started {
		r.startPartition()
	}
	r.activateReadLag()
	return r.gen, nil
}

// delivered moves the partition-mode position past offset, unless the
// position was moved (SetOffset) since the message was queued.
func (r *Reader) delivered(gen, mgen int64, offset, hw int64) {
	if r.useConsumerGroup() {
		return
	}
	r.mu.Lock()
	if mgen == r.gen {
		r.offset = offset + 1
		r.lag = hw - r.offset
		if r.lag < 0 {
			r.lag = 0
		}
	}
	r.mu.Unlock()
}

// startPartition starts the fetcher of the configured partition at
// r.offset in a new generation; r.mu must be held.
func (r *Reader) startPartition() {
	r.started = true
	r.startFetchers(map[topicPartition]int64{{r.config.Topic, r.config.Partition}: r.offset})
}

// startFetchers stops the fetchers of the current generation and waits
// for them, drops what they queued, and starts one fetcher per partition
// at the given offsets (FirstOffset and LastOffset are resolved at the
// leader); r.mu must be held. Two fetchers of one partition never run at
// once: a stopped one still on its way out could take the engine's place
// of the new one, and SetOffset in a loop would pile them up. Fetchers
// never take r.mu, and every wait of theirs ends with their context.
func (r *Reader) startFetchers(offsets map[topicPartition]int64) {
	r.cancel()
	r.running.Wait()
	r.gen++
	r.queue.reset(r.gen)
	ctx, cancel := context.WithCancel(r.stctx)
	r.cancel = cancel
	for tp, off := range offsets {
		f := newFetcher(r, tp, off, r.gen)
		r.join.Add(1)
		r.running.Add(1)
		go func() {
			defer r.join.Done()
			defer r.running.Done()
			f.run(ctx)
		}()
	}
}

// CommitMessages commits the list of messages passed as argument. The
// program may pass a context to asynchronously cancel the commit operation
// when it was configured to be blocking.
//
// Because kafka consumer groups track a single offset per partition, the
// highest message offset passed to CommitMessages will cause all previous
// messages to be committed. Applications need to account for these Kafka
// limitations when committing messages, and maintain message ordering if
// they need strong delivery guarantees. This property makes it valid to
// pass only the last message seen to CommitMessages in order to move the
// offset of the topic/partition it belonged to forward, effectively
// committing all previous messages in the partition.
func (r *Reader) CommitMessages(ctx context.Context, msgs ...Message) error {
	if !r.useConsumerGroup() {
		return errOnlyAvailableWithGroup
	}
	return r.group.commit(ctx, msgs)
}

// ReadLag returns the current lag of the reader by fetching the last
// offset of the topic and partition and computing the difference between
// that value and the offset of the last message returned by ReadMessage.
//
// This method is intended to be used in cases where a program may be
// unable to call ReadMessage to update the value returned by Lag, but still
// needs to get an up to date estimation of how far behind the reader is.
// For example when the consumer is not ready to process the next message.
//
// The function returns a lag of zero when the reader's current offset is
// negative.
func (r *Reader) ReadLag(ctx context.Context) (lag int64, err error) {
	if r.useConsumerGroup() {
		return 0, errNotAvailableWithGroup
	}
	first, last, err := r.firstLastOffsets(ctx, r.config.Topic, r.config.Partition)
	if err != nil {
		return 0, err
	}
	r.stats.totals.leaderHighWatermark(topicPartition{r.config.Topic, r.config.Partition}, last)
	switch cur := r.Offset(); {
	case cur == FirstOffset:
		lag = last - first
	case cur == LastOffset:
		lag = 0
	default:
		lag = last - cur
	}
	if lag < 0 {
		lag = 0
	}
	return lag, nil
}

// Offset returns the current absolute offset of the reader, or -1 if r is
// backed by a consumer group.
func (r *Reader) Offset() int64 {
	if r.useConsumerGroup() {
		return -1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offset
}

// Lag returns the lag of the last message returned by ReadMessage, or -1
// if r is backed by a consumer group.
func (r *Reader) Lag() int64 {
	if r.useConsumerGroup() {
		return -1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lag
}

// SetOffset changes the offset from which the next batch of messages will
// be read. The method fails with io.ErrClosedPipe if the reader has already
// been closed. Messages already fetched past the old position are dropped.
//
// FirstOffset and LastOffset can be used to indicate the first or last
// available offset in the partition; they are resolved at the partition
// leader.
func (r *Reader) SetOffset(offset int64) error {
	if r.useConsumerGroup() {
		return errNotAvailableWithGroup
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return io.ErrClosedPipe
	}
	if offset == r.offset {
		return nil
	}
	r.logf("setting the offset of the kafka reader for partition %d of %s from %s to %s",
		r.config.Partition, r.config.Topic, humanOffset(r.offset), humanOffset(offset))
	r.offset = offset
	if r.started {
		r.startPartition()
	}
	return nil
}

// SetOffsetAt changes the offset from which the next batch of messages
// will be read given the timestamp t: the first message at or after t, or
// the end of the partition when there is none. The offset is looked up at
// the partition leader.
//
// The method fails if the unable to connect partition leader, or unable to
// read the offset given the ts, or if the reader has been closed.
func (r *Reader) SetOffsetAt(ctx context.Context, t time.Time) error {
	if r.useConsumerGroup() {
		return errNotAvailableWithGroup
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return io.ErrClosedPipe
	}
	offset, err := r.listOffset(ctx, r.config.Topic, r.config.Partition, t.UnixMilli())
	if err != nil {
		return err
	}
	if offset < 0 {
		// No message at or after t: the next one produced.
		if offset, err = r.listOffset(ctx, r.config.Topic, r.config.Partition, LastOffset); err != nil {
			return err
		}
	}
	return r.SetOffset(offset)
}

// Stats returns a snapshot of the reader stats since the last time the
// method was called, or since the reader was created if it is called for
// the first time.
//
// A typical use of this method is to spawn a goroutine that will
// periodically call Stats on a kafka reader and report the metrics to a
// stats collection system.
func (r *Reader) Stats() ReaderStats {
	s := r.stats
	stats := ReaderStats{
		Dials:         s.dials.snapshot(),
		Fetches:       s.fetches.snapshot(),
		Messages:      s.messages.snapshot(),
		Bytes:         s.bytes.snapshot(),
		Rebalances:    s.rebalances.snapshot(),
		Timeouts:      s.timeouts.snapshot(),
		Errors:        s.errors.snapshot(),
		DialTime:      s.dialTime.snapshotDuration(),
		ReadTime:      s.readTime.snapshotDuration(),
		WaitTime:      s.waitTime.snapshotDuration(),
		FetchSize:     s.fetchSize.snapshot(),
		FetchBytes:    s.fetchBytes.snapshot(),
		Offset:        s.offset.snapshot(),
		Lag:           s.lag.snapshot(),
		MinBytes:      int64(r.config.MinBytes),
		MaxBytes:      int64(r.config.MaxBytes),
		MaxWait:       r.config.MaxWait,
		QueueLength:   int64(r.queue.len()),
		QueueCapacity: int64(r.config.QueueCapacity),
		ClientID:      r.config.Dialer.ClientID,
		Topic:         r.config.Topic,
		Partition:     s.partition,
		Routing:       s.routingSnapshot(),
		RackInactive:  r.rackStatus(),
	}
	stats.DeprecatedFetchesWithTypo = stats.Fetches
	return stats
}

// activateReadLag starts the periodic lag reading once; r.mu must be held.
// The first reading starts at once; the next ones come from the share's
// runtime, which serves every Reader of the same ReadLagInterval in one
// wakeup (consumer.Runtime.Every).
func (r *Reader) activateReadLag() {
	if r.config.ReadLagInterval <= 0 {
		return
	}
	r.lagOnce.Do(func() {
		r.lagBusy.Store(true)
		r.goReadLagLocked()
		r.lagStop = r.share.rt.Every(r.config.ReadLagInterval, r.readLagTick)
	})
}

// readLagTick is one periodic lag reading. It runs on the goroutine of the
// share's periodic work, so it must not wait: a lag the answers already
// tell is taken here, a lookup at the leader gets a goroutine of its own,
// and only one at a time.
func (r *Reader) readLagTick() {
	if lag, ok := r.answeredLag(); ok {
		r.stats.lag.observe(lag)
		return
	}
	if !r.lagBusy.CompareAndSwap(false, true) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.lagBusy.Store(false)
		return
	}
	r.goReadLagLocked()
}

// goReadLagLocked reads the lag in a goroutine Close joins; r.mu must be
// held and r.lagBusy set.
func (r *Reader) goReadLagLocked() {
	r.join.Add(1)
	go func() {
		defer r.join.Done()
		defer r.lagBusy.Store(false)
		r.readLag(r.stctx)
	}()
}

// answeredLag is the lag the fetch answers tell: a partition fetched
// within the interval knows its high watermark from them (a follower's
// trails the leader's by about one replica-fetch round), so no ListOffsets
// per Reader and interval, which 300 partition Readers made a steady load.
// An answer within the interval, or within two long polls (a fetcher
// between polls), is current.
func (r *Reader) answeredLag() (int64, bool) {
	tp := topicPartition{r.config.Topic, r.config.Partition}
	maxAge := max(r.config.ReadLagInterval, 2*r.config.MaxWait)
	hw, fresh := r.stats.totals.fetchedHighWatermark(tp, maxAge)
	if !fresh {
		return 0, false
	}
	off := r.Offset()
	if off < 0 {
		return 0, false
	}
	return max(0, hw-off), true
}

// readLag reads the lag once, at the leader unless the answers tell it.
func (r *Reader) readLag(ctx context.Context) {
	lag, ok := r.answeredLag()
	var err error
	if !ok {
		lctx, cancel := context.WithTimeout(ctx, r.config.ReadLagInterval/2)
		lag, err = r.ReadLag(lctx)
		cancel()
	}
	switch {
	case ctx.Err() != nil:
	case err != nil:
		r.stats.errors.observe(1)
		r.errorf("kafka reader failed to read lag of partition %d of %s: %v", r.config.Partition, r.config.Topic, err)
	default:
		r.stats.lag.observe(lag)
	}
}

// backoff is the wait before retry number attempt (>= 1): growing from
// ReadBackoffMin to ReadBackoffMax.
func (r *Reader) backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	return retry.Backoff(attempt, r.config.ReadBackoffMin, r.config.ReadBackoffMax)
}

func (r *Reader) logf(format string, args ...interface{}) {
	if l := r.config.Logger; l != nil {
		l.Printf(format, args...)
	}
}

func (r *Reader) errorf(format string, args ...interface{}) {
	if l := r.config.ErrorLogger; l != nil {
		l.Printf(format, args...)
	} else {
		r.logf(format, args...)
	}
}

// The Reader's record path is internal/recordqueue: fetched partitions
// decoded into runs of compact records, queued until the application takes
// them. readerQueue speaks the root's types to it: Messages made from the
// records, partitions named by topicPartition, Kafka errors by Error.

// readerQueue is the Reader's queue of fetched runs.
type readerQueue struct{ recordqueue.Queue }

// queuedRun is records of one partition from one fetch, or an error.
type queuedRun = recordqueue.Run

func (q *readerQueue) init(capacity int) { q.Init(capacity, readersBudget, sameError) }

func (q *readerQueue) len() int { return q.Len() }

func (q *readerQueue) bufferedBytes() int64 { return q.BufferedBytes() }

func (q *readerQueue) reset(gen int64) { q.Reset(gen) }

func (q *readerQueue) close() { q.Close() }

func (q *readerQueue) push(gen int64, tp topicPartition, run *queuedRun) error {
	return q.Push(gen, recordqueue.TopicPartition{Topic: tp.topic, Partition: tp.partition}, run)
}

func (q *readerQueue) waitTaken(ctx context.Context, gen int64, tp topicPartition, limit int, before func()) error {
	return q.WaitTaken(ctx, gen, recordqueue.TopicPartition{Topic: tp.topic, Partition: tp.partition}, limit, before)
}

func (q *readerQueue) pushErr(gen int64, err error) bool { return q.PushErr(gen, err) }

func (q *readerQueue) pushPartitionErr(gen int64, tp topicPartition, err error) bool {
	return q.PushPartitionErr(gen, recordqueue.TopicPartition{Topic: tp.topic, Partition: tp.partition}, err)
}

// unpop puts m, just popped from the run from, back at the head of the
// queue while its generation lasts.
func (q *readerQueue) unpop(from *queuedRun, m Message) { q.Unpop(from, m.Offset) }

// pop takes the next message into *m and returns the run it came from.
func (q *readerQueue) pop(ctx context.Context, m *Message) (*queuedRun, error) {
	run, i, err := q.Pop(ctx)
	if err != nil {
		return nil, err
	}
	fillMessage(run, i, m)
	return run, nil
}

// popBatch fills b with the rest of the first run, at most QueueCapacity
// messages of it, into a fresh array or into b.Messages' own, and returns
// the run.
func (q *readerQueue) popBatch(ctx context.Context, b *MessageBatch, fresh bool) (*queuedRun, error) {
	run, i, end, err := q.PopBatch(ctx)
	if err != nil {
		return nil, err
	}
	n := end - i
	msgs := b.Messages
	switch {
	case fresh:
		msgs = make([]Message, n)
	case cap(msgs) < n:
		// Room for a batch of QueueCapacity, so it does not grow again
		// (up to a thousand messages, 150 KB).
		msgs = make([]Message, n, max(n, min(q.Capacity(), 1000)))
	default:
		msgs = msgs[:n] // emptied by FetchBatchInto
	}
	for k := range msgs {
		fillMessage(run, i+k, &msgs[k])
	}
	*b = MessageBatch{Topic: run.Topic, Partition: run.Partition, HighWaterMark: run.HW, Messages: msgs}
	return run, nil
}

// fillMessage makes *m the Message of record i of run. It stores field by
// field into the caller's Message (no Message-sized temporary to copy:
// those copies were half of FetchMessage's own cost).
func fillMessage(run *queuedRun, i int, m *Message) {
	rec := run.At(i)
	m.Topic = run.Topic
	m.Partition = run.Partition
	m.Offset = rec.Offset
	m.HighWaterMark = run.HW
	m.Key = run.Key(rec)
	m.Value = run.Value(rec)
	m.Headers = run.Headers(rec)
	m.WriterData = nil
	m.Time = time.Time{}
	if rec.Timestamp >= 0 {
		m.Time = time.UnixMilli(rec.Timestamp)
	}
}

// sameError reports whether b repeats a: the same Kafka error code, or
// else the same text (the same failure at the same offset).
func sameError(a, b error) bool {
	var ka, kb Error
	if errors.As(a, &ka) && errors.As(b, &kb) {
		return ka == kb
	}
	return a.Error() == b.Error()
}

// kafkaError is the error of a Kafka error code.
func kafkaError(code int16) error { return Error(code) }
