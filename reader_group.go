package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rackfetch/kafka-go/internal/retry"
)

// Group mode of the Reader (ReaderConfig.GroupID): a ConsumerGroup hands
// out generations; for each, one fetcher per assigned partition runs inside
// Generation.Start, and commits go to that generation.
//
// Rules kept here, each one a known kafka-go failure:
//   - Messages queued for a generation are dropped when it ends: no message
//     of a partition this member may no longer own is ever returned after a
//     rebalance.
//   - Only offsets of messages the application passed to CommitMessages are
//     committed, and only for partitions the current generation owns: the
//     committed offset never moves past what the application committed, and
//     a stale message never overwrites another member's progress.
//   - A commit refused because the generation is over drops the queue at
//     once, so ReadMessage then waits for the next generation instead of
//     spinning through stale messages and failing commits.
//   - A commit never moves a partition's offset below what the group had
//     committed when the generation started: a message returned before a
//     rebalance that gave the partition to another member and back cannot
//     undo that member's progress.
//   - A partition the next generation leaves to this reader resumes after
//     the last message the reader returned, when that is past the
//     committed offset (a commit failed with the rebalance, or the
//     application commits in batches): one Reader never returns a message
//     twice. Messages that ReadMessage did not return because their commit
//     failed do not count as returned, so they come again.

// readerGroup runs the consumer group of a Reader.
type readerGroup struct {
	r    *Reader
	cg   *ConsumerGroup
	done chan struct{}

	mu      sync.Mutex
	gen     *Generation
	owned   map[topicPartition]bool
	readyCh chan struct{} // closed when a generation starts
	lastGen int64         // Reader generation of gen's fetchers

	// pos is, for each partition of the last generation, the offset after
	// the last message returned to the application.
	pos map[topicPartition]*groupPos
	// lastTP and lastPos cache the entry of pos delivered touched last:
	// messages come in runs of one partition.
	lastTP  topicPartition
	lastPos *groupPos
	// floor is, for each partition of gen, the offset the group had
	// committed when gen started (absent: none).
	floor map[topicPartition]int64

	// CommitInterval > 0: offsets waiting for the next tick, of stashGen
	// (kept past unsubscribe for the generation's final commit).
	stash    offsetStash
	stashGen *Generation
}

// offsetStash holds offsets to commit by topic and partition.
type offsetStash map[string]map[int]int64

// merge keeps the highest offset per partition.
func (o offsetStash) merge(topic string, partition int, offset int64) {
	ps := o[topic]
	if ps == nil {
		ps = map[int]int64{}
		o[topic] = ps
	}
	if cur, ok := ps[partition]; !ok || offset > cur {
		ps[partition] = offset
	}
}

func (r *Reader) startGroup() {
	cfg := r.config
	topics := cfg.GroupTopics
	if len(topics) == 0 {
		topics = []string{cfg.Topic}
	}
	cg, err := NewConsumerGroup(ConsumerGroupConfig{
		ID:                     cfg.GroupID,
		Brokers:                cfg.Brokers,
		Dialer:                 cfg.Dialer,
		Topics:                 topics,
		GroupBalancers:         cfg.GroupBalancers,
		HeartbeatInterval:      cfg.HeartbeatInterval,
		PartitionWatchInterval: cfg.PartitionWatchInterval,
		WatchPartitionChanges:  cfg.WatchPartitionChanges,
		SessionTimeout:         cfg.SessionTimeout,
		RebalanceTimeout:       cfg.RebalanceTimeout,
		JoinGroupBackoff:       cfg.JoinGroupBackoff,
		RetentionTime:          cfg.RetentionTime,
		StartOffset:            cfg.StartOffset,
		Logger:                 cfg.Logger,
		ErrorLogger:            cfg.ErrorLogger,
		cluster:                r.cluster,
		rack:                   cfg.Rack,
		isolationLevel:         cfg.IsolationLevel,
		failure:                &r.failure,
	})
	if err != nil {
		panic(err) // kafka-go panics on an invalid group configuration too
	}
	g := &readerGroup{r: r, cg: cg, done: make(chan struct{}), readyCh: make(chan struct{}), stash: offsetStash{}}
	r.group = g
	go g.run()
}

// wait closes the consumer group (leaving it, after the last commits) and
// waits for the group loop; Reader.Close calls it.
func (g *readerGroup) wait() {
	g.cg.Close()
	<-g.done
}

// run takes generation after generation until the reader closes.
func (g *readerGroup) run() {
	defer close(g.done)
	r := g.r
	failures := 0
	for {
		gen, err := g.cg.Next(r.stctx)
		if err != nil {
			if r.stctx.Err() != nil || errors.Is(err, ErrGroupClosed) {
				return
			}
			r.stats.errors.observe(1)
			if groupJoinErrorFatal(err) {
				r.errorf("kafka reader: group %s: %v", r.config.GroupID, err)
			} else {
				r.logf("kafka reader: group %s: %v (retrying)", r.config.GroupID, err)
			}
			r.failure.set(err)
			// A failure no retry fixes reaches the application at once,
			// then every MaxAttempts failures while it lasts.
			if failures++; (failures == 1 || failures%r.config.MaxAttempts == 0) && groupJoinErrorFatal(err) {
				r.mu.Lock()
				r.queue.pushErr(r.gen, err)
				r.mu.Unlock()
			}
			continue
		}
		failures = 0
		r.failure.clear()
		r.stats.rebalances.observe(1)
		g.subscribe(gen)
	}
}

// subscribe starts the fetchers and the commit loop of gen.
func (g *readerGroup) subscribe(gen *Generation) {
	r := g.r
	owned := map[topicPartition]bool{}
	offsets := map[topicPartition]int64{}
	for topic, as := range gen.Assignments {
		for _, a := range as {
			tp := topicPartition{topic, a.ID}
			owned[tp] = true
			offsets[tp] = a.Offset
		}
	}
	r.logf("kafka reader: group %s generation %d: assigned %s", r.config.GroupID, gen.ID, formatTopicPartitions(offsets))

	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.gen++
	r.queue.reset(r.gen) // nothing of an earlier generation is returned
	readerGen := r.gen
	r.mu.Unlock()

	g.mu.Lock()
	floor := map[topicPartition]int64{}
	for tp, off := range offsets {
		if off >= 0 {
			floor[tp] = off
		}
	}
	pos := map[topicPartition]*groupPos{}
	for tp, off := range offsets {
		pp, kept := g.pos[tp]
		if !kept {
			continue
		}
		if _, inc := r.cluster.topicID(tp.topic); pp.incarnation >= 1 && inc != pp.incarnation {
			// The topic was deleted and created again since: the
			// position is an offset of a log that is gone.
			r.logf("kafka reader: group %s generation %d: %s was deleted and created again: not resuming at offset %d of the old topic",
				r.config.GroupID, gen.ID, tp, pp.next)
			continue
		}
		cp := *pp
		pos[tp] = &cp
		p := cp.next
		// off < 0: nothing committed yet (FirstOffset).
		if off < 0 || p > off {
			r.logf("kafka reader: group %s generation %d: %s resumes at offset %d, after the last message returned (committed: %s)",
				r.config.GroupID, gen.ID, tp, p, humanOffset(off))
			offsets[tp] = p
		}
	}
	g.pos, g.floor, g.lastPos = pos, floor, nil
	g.gen, g.owned, g.lastGen = gen, owned, readerGen
	g.stash, g.stashGen = offsetStash{}, gen
	close(g.readyCh)
	g.mu.Unlock()

	for tp, off := range offsets {
		f := newFetcher(r, tp, off, readerGen)
		g.start(gen, func(ctx context.Context) {
			if ctx.Err() != nil {
				// Started after the generation ended: the next generation's
				// fetcher of the partition may already run.
				return
			}
			fctx, cancel := context.WithCancel(r.stctx)
			defer cancel()
			stop := context.AfterFunc(ctx, cancel)
			defer stop()
			f.run(fctx)
			// A partition that stopped (OffsetOutOfRangeError) must not
			// end the generation for the others.
			<-fctx.Done()
		})
	}
	g.start(gen, func(ctx context.Context) { g.commitLoop(ctx, gen) })
	g.start(gen, func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-r.stctx.Done():
		}
		g.unsubscribe(gen)
	})
}

// start runs fn in gen, counted in the Reader's join as well: Close waits
// for it even when gen had already ended (Generation.Start then runs fn
// on a goroutine nobody waits for), and a probe its fetcher starts is
// added to the join while fn still holds it.
func (g *readerGroup) start(gen *Generation, fn func(ctx context.Context)) {
	r := g.r
	r.join.Add(1)
	gen.Start(func(ctx context.Context) {
		defer r.join.Done()
		fn(ctx)
	})
}

// groupPos is where a partition resumes if the reader keeps it across a
// rebalance: the offset after the last message returned, in the topic's
// incarnation (cluster.topicID) that message belonged to.
type groupPos struct {
	incarnation int
	next        int64
}

// delivered records that the message at offset of tp, from run (queued by
// the fetchers of one Reader generation), was returned to the application.
func (g *readerGroup) delivered(tp topicPartition, offset int64, run *queuedRun) {
	g.mu.Lock()
	defer g.mu.Unlock()
	// A message of an earlier generation returned late: the current
	// generation's fetcher already started from the position of then.
	if run.Gen != g.lastGen || g.pos == nil {
		return
	}
	if g.lastPos == nil || g.lastTP != tp {
		p := g.pos[tp]
		if p == nil {
			p = &groupPos{incarnation: run.Incarnation, next: offset + 1}
			g.pos[tp] = p
		}
		g.lastTP, g.lastPos = tp, p
	}
	// Offsets grow within an incarnation (concurrent callers may report
	// them out of order); a new one starts again from its first.
	switch p := g.lastPos; {
	case run.Incarnation > p.incarnation:
		p.incarnation, p.next = run.Incarnation, offset+1
	case run.Incarnation == p.incarnation && offset+1 > p.next:
		p.next = offset + 1
	}
}

// unsubscribe drops what gen's fetchers queued once gen is over.
func (g *readerGroup) unsubscribe(gen *Generation) {
	g.mu.Lock()
	if g.gen != gen {
		g.mu.Unlock()
		return
	}
	g.gen, g.owned = nil, nil
	g.readyCh = make(chan struct{})
	readerGen := g.lastGen
	g.mu.Unlock()

	r := g.r
	r.mu.Lock()
	if r.gen == readerGen {
		r.gen++
		r.queue.reset(r.gen)
	}
	r.mu.Unlock()
}

// commitLoop flushes the stash every CommitInterval and when the
// generation ends (asynchronous commits only).
func (g *readerGroup) commitLoop(ctx context.Context, gen *Generation) {
	interval := g.r.config.CommitInterval
	if interval <= 0 {
		<-ctx.Done()
		return
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			g.flush(gen)
		case <-ctx.Done():
			g.flush(gen) // the generation still accepts commits until we return
			return
		}
	}
}

// flush commits the stash of gen.
func (g *readerGroup) flush(gen *Generation) {
	g.mu.Lock()
	if g.stashGen != gen || len(g.stash) == 0 {
		g.mu.Unlock()
		return
	}
	stash := g.stash
	g.stash = offsetStash{}
	g.mu.Unlock()
	if err := g.commitWithRetry(context.Background(), gen, stash); err != nil {
		g.r.errorf("kafka reader: group %s: committing %v: %v", g.r.config.GroupID, stash, err)
	}
}

// commit commits msgs: synchronously (CommitInterval 0) or into the stash.
func (g *readerGroup) commit(ctx context.Context, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	gen, owned, floor, err := g.current(ctx)
	if err != nil {
		return err
	}
	stash := offsetStash{}
	for _, m := range msgs {
		tp := topicPartition{m.Topic, m.Partition}
		if !owned[tp] {
			// A message of a partition this member no longer owns: its
			// new owner's progress is not ours to overwrite.
			g.r.logf("kafka reader: group %s: not committing offset %d of %s: partition not assigned in generation %d", g.r.config.GroupID, m.Offset+1, tp, gen.ID)
			continue
		}
		if f, ok := floor[tp]; ok && m.Offset+1 <= f {
			// Returned before the partition went to another member and
			// came back: the group is already past it.
			if m.Offset+1 < f {
				g.r.logf("kafka reader: group %s: not committing offset %d of %s: the group had committed %d when generation %d started", g.r.config.GroupID, m.Offset+1, tp, f, gen.ID)
			}
			continue
		}
		stash.merge(m.Topic, m.Partition, m.Offset+1)
	}
	if len(stash) == 0 {
		return nil
	}
	if g.r.config.CommitInterval > 0 {
		g.mu.Lock()
		if g.stashGen == gen {
			for topic, ps := range stash {
				for p, off := range ps {
					g.stash.merge(topic, p, off)
				}
			}
		}
		g.mu.Unlock()
		return nil
	}
	err = g.commitWithRetry(ctx, gen, stash)
	if err != nil && generationOver(err) {
		// Stop returning messages of this generation now, so the caller
		// waits for the next one rather than spinning.
		g.unsubscribe(gen)
	}
	return err
}

// current waits for a generation and returns it with its partitions and
// their offsets committed when it started.
func (g *readerGroup) current(ctx context.Context) (*Generation, map[topicPartition]bool, map[topicPartition]int64, error) {
	for {
		g.mu.Lock()
		gen, owned, floor, ready := g.gen, g.owned, g.floor, g.readyCh
		g.mu.Unlock()
		if gen != nil {
			return gen, owned, floor, nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, nil, nil, ctx.Err()
		case <-g.r.stctx.Done():
			return nil, nil, nil, fmt.Errorf("committing: %w", errReaderClosed)
		}
	}
}

var errReaderClosed = errors.New("kafka reader closed")

// generationOver reports commit errors after which the generation is over.
func generationOver(err error) bool {
	return errors.Is(err, ErrGenerationEnded) || errors.Is(err, RebalanceInProgress) ||
		errors.Is(err, IllegalGeneration) || errors.Is(err, UnknownMemberId) ||
		errors.Is(err, FencedInstanceID)
}

// commitWithRetry commits, retrying errors that are neither the end of
// the generation nor permanent, up to 3 attempts as kafka-go does, and
// gives up once ctx (the caller's, for a synchronous commit) ends.
func (g *readerGroup) commitWithRetry(ctx context.Context, gen *Generation, offsets offsetStash) error {
	const attempts = 3
	var err error
	for i := 0; i < attempts; i++ {
		if i > 0 && !retry.Sleep(g.r.stctx, retry.Backoff(i, 100*time.Millisecond, 5*time.Second)) {
			break
		}
		// With CommitInterval 0 a commit per CommitMessages call is no news.
		err = gen.commitOffsets(ctx, offsets, g.r.config.CommitInterval <= 0)
		if err == nil || generationOver(err) || !isTemporary(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

func formatTopicPartitions(offsets map[topicPartition]int64) string {
	tps := make([]topicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})
	s := ""
	for i, tp := range tps {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s@%s", tp, humanOffset(offsets[tp]))
	}
	return s
}

// groupJoinErrorFatal reports whether a failure to join the group is one the
// application must see: an error no retry fixes (authorization, an invalid
// group configuration, a wrong password). A coordinator that is moving or
// still loading (as on a fresh cluster, while __consumer_offsets is being
// created), a rebalance, or the network are retried and only logged, as
// kafka-go and the Java consumer do.
func groupJoinErrorFatal(err error) bool {
	if permanentFailure(err) {
		return true
	}
	var kerr Error
	if !errors.As(err, &kerr) {
		return false
	}
	switch kerr {
	case RebalanceInProgress, UnknownMemberId, IllegalGeneration, MemberIDRequired:
		return false // the member rejoins
	}
	return !kerr.Temporary()
}
