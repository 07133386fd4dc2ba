package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/rackfetch/kafka-go/internal/fetchengine"
	"github.com/rackfetch/kafka-go/internal/recordqueue"
	"github.com/rackfetch/kafka-go/internal/retry"
	"github.com/rackfetch/kafka-go/internal/routing"
	"github.com/rackfetch/kafka-go/protocol"
)

// The Reader's fetch path. One fetcher goroutine reads one partition for
// one generation of the Reader. Its loop:
//
//	fetch from the broker the router names → queue EVERY record of the
//	batch → report what happened to the router → act on its decision
//	(redial another broker, refresh metadata, check the position at the
//	leader, back off).
//
// The router is the partition's replicaSelector (internal/routing, adapted
// by replica_selector.go), the one routing state machine of the Reader,
// with or without a rack: without one it never leaves the leader, but it
// still handles leader changes, backoff and metadata refreshes the same
// way. Its decision says how long to wait: the fetcher adds no wait of its
// own.
//
// Replicas therefore only change between batches. Offsets are resolved at
// the leader (reader_offsets.go); a follower is only ever sent Fetch with
// an absolute offset.

// fetcher reads one partition.
type fetcher struct {
	r   *Reader
	tp  topicPartition
	gen int64
	now func() time.Time

	offset int64 // next offset to fetch; FirstOffset/LastOffset until resolved
	epoch  int32 // leader epoch of the last record fetched (-1: none yet)

	// meta is the partition's metadata as the router accepted it (never
	// an answer the router rejected: an older epoch, no leader).
	meta     Partition
	router   *replicaSelector
	routed   int      // broker of the last decision, for log lines
	metaSeen uint64   // the Reader's metadata version last handed to the router
	topicGen int      // the topic's incarnation (cluster.topicID) being read
	topicID  [16]byte // its ID (zero: none known when reading started)

	// served: the broker that served the last fetch (-1: none), for the
	// route in the stats.
	served, servedLeader int
	// drained: the last fetch answered (by served) had no records.
	drained bool
	// omitRack: the router asks for fetches without the client rack (the
	// leader keeps naming a replica it refuses).
	omitRack bool
	// leaderEndSeen: the leader high watermark last handed to the router
	// (reader_runtime.go).
	leaderEndSeen uint64

	// keepFn is keep, made once; keptMeta is the metadata version keep
	// last found to say nothing new of the partition (keep's own).
	keepFn   func() time.Time
	keptMeta uint64

	dec      recordqueue.Decoder
	failures int // consecutive failures to reach the partition, for MaxAttempts
	// unknownSince: when the partition's topic started being unknown to
	// the brokers (zero: it is known), see failed.
	unknownSince time.Time
}

func newFetcher(r *Reader, tp topicPartition, offset int64, gen int64) *fetcher {
	f := &fetcher{r: r, tp: tp, gen: gen, offset: offset, epoch: -1, now: time.Now, routed: -1, served: -1, dec: recordqueue.Decoder{KafkaError: kafkaError}}
	f.keepFn = f.keep
	return f
}

// run fetches until ctx ends or the generation is over.
func (f *fetcher) run(ctx context.Context) {
	defer f.release()
	defer f.setRoute(-1, "")
	if !f.init(ctx) {
		return
	}
	for f.step(ctx) {
	}
}

// init loads the partition's metadata, builds the router and resolves a
// FirstOffset/LastOffset position at the leader, retrying until it works.
func (f *fetcher) init(ctx context.Context) bool {
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !retry.Sleep(ctx, f.r.backoff(attempt)) {
			return false
		}
		err := f.initOnce(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		f.r.stats.errors.observe(1)
		f.r.errorf("error initializing the kafka reader for partition %d of %s: %v", f.tp.partition, f.tp.topic, err)
		if !f.failed(err) {
			return false
		}
	}
}

func (f *fetcher) initOnce(ctx context.Context) error {
	if f.router == nil {
		f.metaSeen = f.r.share.rt.Version()
		if err := f.r.refreshMetadata(ctx, f.tp.topic); err != nil {
			return err
		}
		p, ok := f.r.cluster.partition(f.tp.topic, f.tp.partition)
		if !ok {
			return fmt.Errorf("looking up %s: %w", f.tp, UnknownTopicOrPartition)
		}
		f.newRouter(p)
	}
	if f.offset < 0 {
		f.r.logf("initializing kafka reader for partition %d of %s starting at %s", f.tp.partition, f.tp.topic, humanOffset(f.offset))
		off, err := f.r.listOffset(ctx, f.tp.topic, f.tp.partition, f.offset)
		if err != nil {
			return err
		}
		f.offset = off
	}
	return nil
}

// newRouter starts routing partition p afresh.
func (f *fetcher) newRouter(p Partition) {
	f.meta = p
	cfg := f.r.config.routing()
	cfg.Versions = f.r.share
	f.router = newReplicaSelector(cfg, f.r.cooldown, p, f.now())
	f.routed = f.router.current()
	f.topicID, f.topicGen = f.r.cluster.topicID(f.tp.topic)
}

// recreated handles the topic being deleted and created again (a new topic
// ID): the position, the leader epochs and the routing of the old topic
// mean nothing for the new log, which is read from the Reader's
// StartOffset. It reports false when the fetcher must stop.
func (f *fetcher) recreated(ctx context.Context) bool {
	id, gen := f.r.cluster.topicID(f.tp.topic)
	if f.topicGen < 1 || gen == f.topicGen {
		return true // the same topic (or the first ID seen)
	}
	p, ok := f.r.cluster.partition(f.tp.topic, f.tp.partition)
	if !ok {
		return true // the new topic has fewer partitions: errors will say so
	}
	f.r.stats.errors.observe(1)
	f.r.errorf("kafka reader: partition %s: the topic was deleted and created again (topic ID %x): reading the new topic from %s, not offset %d of the old one",
		f.tp, id, humanOffset(max(f.r.config.StartOffset, FirstOffset)), f.offset)
	f.newRouter(p)
	f.offset, f.epoch = FirstOffset, -1
	if f.r.config.StartOffset == LastOffset {
		f.offset = LastOffset
	}
	return f.init(ctx)
}

// failed counts a failure to reach the partition. Failures a retry fixes
// (a broker down or frozen, a leader election, the network) are only
// logged and counted in the stats: the fetcher keeps retrying while a
// leader or an in-sync replica may come back. Every MaxAttempts
// consecutive failures, one that no retry fixes (authorization, a wrong
// password or TLS setup, a topic that stays unknown) is returned to the
// application once. It reports false when the generation is over.
func (f *fetcher) failed(err error) bool {
	f.failures++
	f.r.failure.set(err)
	if errors.Is(err, UnknownTopicOrPartition) {
		if f.unknownSince.IsZero() {
			f.unknownSince = f.now()
		}
	} else {
		f.unknownSince = time.Time{}
	}
	// A broker setup no retry fixes (credentials, TLS, address) is said at once.
	report := f.failures%f.r.config.MaxAttempts == 0 || (f.failures == 1 && permanentFailure(err))
	if !report || f.retriable(err) {
		return true
	}
	return f.r.queue.pushPartitionErr(f.gen, f.tp, err)
}

// readerUnknownTopicGrace is how long a topic may stay unknown to the
// brokers before the Reader says so: a topic just created takes a moment
// to reach every broker; one deleted stays unknown.
const readerUnknownTopicGrace = 10 * time.Second

// retriable reports whether retrying may fix err (see failed).
func (f *fetcher) retriable(err error) bool {
	if errors.Is(err, UnknownTopicOrPartition) {
		return f.now().Sub(f.unknownSince) < readerUnknownTopicGrace
	}
	return readerRetriable(err)
}

// readerRetriable reports whether err is a failure the Reader retries
// without telling the application: Kafka's retriable errors, and the
// network (refused, reset, timed out, closed) — but not a TLS or
// certificate failure, which no retry fixes.
func readerRetriable(err error) bool {
	if permanentFailure(err) {
		return false
	}
	var kerr Error
	if errors.As(err, &kerr) {
		return kerr.Temporary()
	}
	var rbe *protocol.RecordBatchError
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var recErr tls.RecordHeaderError
	switch {
	case errors.As(err, &rbe), errors.As(err, &certErr), errors.As(err, &hostErr),
		errors.As(err, &authErr), errors.As(err, &recErr):
		return false
	}
	return true
}

// broker returns the address of broker id: from the partition's replicas,
// else from the cluster's broker list.
func (f *fetcher) broker(id int) (Broker, bool) {
	if f.meta.Leader.ID == id && f.meta.Leader.Host != "" {
		return f.meta.Leader, true
	}
	for _, b := range f.meta.Replicas {
		if b.ID == id && b.Host != "" {
			return b, true
		}
	}
	return f.r.cluster.broker(id)
}

// release tells the engine the partition will not ask for a fetch soon
// (it backs off, refreshes metadata, waits for the application): the
// broker's loop does not hold its next fetch for it.
func (f *fetcher) release() {
	f.r.engine.Release(f.r.owner, f.tp.topic, int32(f.tp.partition))
}

// hold tells the engine the partition will ask for a fetch as soon as the
// application has taken some of what it fetched, and its broker has more.
func (f *fetcher) hold() {
	f.r.engine.Hold(f.r.owner, f.tp.topic, int32(f.tp.partition))
}

// step runs one fetch and acts on it; it reports false when the fetcher
// must stop.
func (f *fetcher) step(ctx context.Context) bool {
	r := f.r
	// Any metadata read (the fetcher's, another partition's, an offset
	// lookup's) may show the topic recreated.
	if !f.recreated(ctx) {
		return false
	}
	if v := r.share.rt.Version(); v != f.metaSeen {
		// Someone refreshed metadata: the router hears of it between
		// fetches.
		f.metaSeen = v
		if p, ok := r.cluster.partition(f.tp.topic, f.tp.partition); ok {
			if !f.decide(ctx, metadataEvent(f.router.current(), f.now(), p)) {
				return false
			}
		}
	}
	if !f.feedLeaderEnd(ctx) {
		return false
	}
	broker := f.router.current()
	w := f.want(broker)
	r.stats.fetches.observe(1)
	r.stats.offset.observe(f.offset)
	fetchOffset := f.offset
	if fetcherBeforeFetch != nil {
		fetcherBeforeFetch(ctx, f)
	}
	t0 := time.Now()
	r.stats.totals.setPolling(f.tp, true)
	res := r.engine.Fetch(ctx, broker, w)
	r.stats.totals.setPolling(f.tp, false)
	t1 := time.Now()
	if ctx.Err() != nil {
		return false
	}
	if errors.Is(res.Err, fetchengine.ErrSuperseded) {
		// Another fetch of the partition took the engine's place of this
		// one: nothing was fetched, ask again.
		return true
	}
	if res.DialFailed {
		r.stats.errors.observe(1)
		f.logFailure(false, broker, "dialing the broker failed", res.Err, fmt.Sprintf("kafka reader: partition %s: dialing broker %d: %v", f.tp, broker, res.Err))
		if !f.failed(res.Err) {
			return false
		}
		return f.decide(ctx, failureEvent(eventDialFailed, broker, f.now(), res.Err, f.offset))
	}
	r.stats.waitTime.observeDuration(t1.Sub(t0))
	if res.Err != nil {
		return f.fetchFailed(ctx, broker, res.Err)
	}

	p := res.Partition
	fb, err := f.dec.Decode(p, f.tp.topic, f.tp.partition, fetchOffset, int8(r.config.IsolationLevel), broker, recordqueue.Limits{MaxBytes: int(w.MaxBytes), Asked: int(res.MaxBytes), Full: res.Full})
	hw, preferred := p.HighWatermark, int(p.PreferredReadReplica)
	f.drained = len(p.Records) == 0
	b, _ := f.broker(broker)
	if size := int64(len(p.Records)); size > 0 {
		r.stats.fetchedBytes(f.tp, size, r.config.Rack != "" && b.Rack == r.config.Rack)
		r.stats.totals.fetched(f.tp, broker, b.Rack, size, r.config.Rack != "" && b.Rack == r.config.Rack)
		r.share.reads.add(t1, size, f.tp, fetchOffset)
	}
	if broker != f.served || f.meta.Leader.ID != f.servedLeader {
		f.served, f.servedLeader = broker, f.meta.Leader.ID
		f.setRoute(broker, b.Rack)
		r.share.rt.Nudge() // on a follower now, or back at the leader
	}

	// Every record of the batch reaches the queue before anything else
	// happens: a switch of replica or an error never drops fetched data.
	n := fb.Records()
	r.stats.messages.observe(int64(n))
	r.stats.bytes.observe(fb.Bytes)
	r.stats.fetchSize.observe(int64(n))
	r.stats.fetchBytes.observe(fb.Bytes)
	r.stats.readTime.observeDuration(time.Since(t1))
	if n > 0 && broker != f.meta.Leader.ID {
		r.share.rt.Flowing(f.tp) // the lag check matters again
	}
	if n > 0 {
		fb.Run.Incarnation = f.topicGen
		if perr := r.queue.push(f.gen, f.tp, fb.Run); perr != nil {
			return false
		}
		f.epoch = fb.Epoch
	}
	if fb.Next > f.offset {
		f.offset = fb.Next
	}
	if broker != f.meta.Leader.ID {
		r.share.rt.Reached(f.tp, f.offset) // its leader may wait for it to turn quiet
	}
	if err == nil && hw >= 0 {
		lag := hw - f.offset
		if lag < 0 {
			lag = 0
		}
		r.stats.lag.observe(lag)
		r.stats.offset.observe(f.offset)
		r.stats.totals.position(f.tp, f.offset, hw, broker == f.meta.Leader.ID)
	}
	// One fetch ahead: the next fetch of the partition waits until the
	// application has taken what the previous ones brought.
	// Waiting with records left at the broker, it holds rather than
	// releases: the broker's loop then sends no long poll meanwhile.
	before := f.release
	if hw > f.offset {
		before = f.hold
	}
	if n > 0 && r.queue.waitTaken(ctx, f.gen, f.tp, max(n, r.config.QueueCapacity), before) != nil {
		return false
	}

	if err == nil {
		f.failures = 0
		if broker == f.meta.Leader.ID && preferred >= 0 && preferred != broker && hw >= 0 {
			// The leader names a follower whose log reaches the fetch
			// offset: what it answered is the lag check's first sample
			// of the partition (Runtime.Seed).
			r.share.rt.Seed(broker, f.tp, hw, f.offset >= hw)
		}
		r.rackFetched(ctx, f, broker, preferred, w.Rack != "")
		atOnce := !res.Data && t1.Sub(t0) < res.MaxWait/2
		f.r.failure.clear()
		ev := routeEvent{Event: routing.Event{Kind: eventFetched, Broker: broker, Now: f.now(), Preferred: preferred,
			Empty: n == 0, FetchOffset: fetchOffset, HighWatermark: hw, NextOffset: f.offset, LongPolled: !atOnce}}
		return f.decide(ctx, ev)
	}
	return f.fetchFailed(ctx, broker, err)
}

// fetcherBeforeFetch, set by tests only, runs before each engine fetch:
// it stands for a fetcher descheduled there.
var fetcherBeforeFetch func(ctx context.Context, f *fetcher)

// want is the partition's part of the next fetch from broker.
func (f *fetcher) want(broker int) fetchengine.Want {
	r := f.r
	if b, ok := f.broker(broker); ok {
		r.addrs.put(b)
	}
	rack := r.config.Rack
	if f.omitRack {
		// The router asks the leader to serve the records itself.
		rack = ""
	}
	id, _ := r.cluster.topicID(f.tp.topic)
	if f.topicID != ([16]byte{}) {
		// The ID of the log f.offset belongs to, whatever the metadata
		// says since recreated() looked: a topic created again (or a
		// cluster rebuilt) under the same name answers UNKNOWN_TOPIC_ID
		// instead of records of the new log at the old log's offset.
		id = f.topicID
	}
	w := fetchengine.Want{
		Topic:       f.tp.topic,
		TopicID:     id,
		Partition:   int32(f.tp.partition),
		Offset:      f.offset,
		LeaderEpoch: int32(f.meta.LeaderEpoch),
		MaxBytes:    clampInt32(r.config.MaxBytes),
		Rack:        rack,
		Follower:    broker != f.meta.Leader.ID,
		Drained:     f.drained && broker == f.served,
		Owner:       r.owner,
		Timeout:     r.config.ReadBatchTimeout,
		// A broker that accepts TCP but never answers (a frozen process)
		// must not hold the fetcher: a leader's dial is under the time a
		// fetch of it may take, a follower's under the stall timeout
		// (the leader is there to go back to).
		DialTimeout: r.config.MaxWait + r.config.ReadBatchTimeout,
		Keep:        f.keepFn,
	}
	// A leader with an in-sync follower to stand in for it is bounded as
	// a follower is: a black-holed path to it is left within the stall
	// timeout past its poll (capped while records flow, engineMaxWait),
	// not after ReadBatchTimeout.
	if w.Follower || f.router.standIn(f.now()) {
		w.DialTimeout = r.config.ReplicaStallTimeout
		if r.config.ReplicaStallTimeout < r.config.ReadBatchTimeout {
			// A follower that stays silent is left for the leader early.
			w.StallTimeout = r.config.ReplicaStallTimeout
		}
	}
	if w.Follower && r.config.MaxFollowerLag > 0 {
		// A follower whose answer takes longer than half the lag bound to
		// arrive cannot be keeping the reader within it: its path is too
		// slow (loss, a bandwidth cap), and the lag check, which runs
		// between fetches, would only see it after the answer.
		w.Timeout = min(w.Timeout, max(r.config.ReplicaStallTimeout, r.config.MaxFollowerLag/2))
	}
	return w
}

// fetchFailed handles a fetch error: it resets an out-of-range position
// the leader reported, returns errors the application must see, and lets
// the router pick the next broker.
func (f *fetcher) fetchFailed(ctx context.Context, broker int, err error) bool {
	r := f.r
	fromLeader := broker == f.router.partition().Leader.ID
	var kerr Error
	isKafka := errors.As(err, &kerr)
	switch {
	case errors.Is(err, OffsetOutOfRange) && fromLeader:
		// The leader's offsets decide: reset per policy.
		if !f.resetOutOfRange(ctx) {
			return false
		}
	case errors.Is(err, OffsetOutOfRange):
		// A follower's range is not authoritative: the router takes us
		// back to the leader. A follower that lacks the reader's offset
		// is behind it: the lag check needs the leader's end again, even
		// from a leader it found quiet.
		r.share.rt.Flowing(f.tp)
		r.logf("kafka reader: partition %s: offset %d out of range on follower %d", f.tp, f.offset, broker)
	case errors.Is(err, RequestTimedOut):
		r.stats.timeouts.observe(1)
		r.logf("no messages received from kafka within the allocated time for partition %d of %s at offset %d: %v", f.tp.partition, f.tp.topic, f.offset, err)
	case errors.Is(err, NotLeaderForPartition), errors.Is(err, FencedLeaderEpoch), errors.Is(err, UnknownLeaderEpoch):
		r.stats.rebalances.observe(1)
		f.logFailure(false, broker, "fetch failed", err, fmt.Sprintf("failed to read from broker %d for partition %d of %s at offset %d: %v", broker, f.tp.partition, f.tp.topic, f.offset, err))
	case errors.Is(err, recordqueue.ErrTruncatedBatch):
		// Malformed at the broker, or a cut we cannot explain: fetched
		// again after the backoff, and said to the application every
		// MaxAttempts in a row from the leader (a follower's copy: the
		// router reads the leader's instead).
		r.stats.errors.observe(1)
		f.logFailure(false, broker, "fetch failed", err, fmt.Sprintf("the kafka reader got a truncated record batch reading partition %d of %s at offset %d from broker %d: %v", f.tp.partition, f.tp.topic, f.offset, broker, err))
		if fromLeader && !f.failed(err) {
			return false
		}
	default:
		r.stats.errors.observe(1)
		var rbe *protocol.RecordBatchError
		returned := (isKafka && !kerr.Temporary()) || (errors.As(err, &rbe) && fromLeader)
		f.logFailure(returned, broker, "fetch failed", err, fmt.Sprintf("the kafka reader got an error reading partition %d of %s at offset %d from broker %d: %v", f.tp.partition, f.tp.topic, f.offset, broker, err))
		if returned {
			// Not something retrying fixes by itself: the application
			// must know (kafka-go returns Kafka errors too). The reader
			// still retries after the backoff. A follower's corrupt
			// copy is not: the router reads the leader's instead.
			if !r.queue.pushPartitionErr(f.gen, f.tp, fmt.Errorf("fetching %s at offset %d from broker %d: %w", f.tp, f.offset, broker, err)) {
				return false
			}
		}
	}
	return f.decide(ctx, failureEvent(eventFetchError, broker, f.now(), err, f.offset))
}

// decide reports ev to the router and carries out its decisions, then
// waits what they say: the router owns every wait after an event (the
// error backoff included), the fetcher adds none. It reports false when
// the fetcher must stop.
func (f *fetcher) decide(ctx context.Context, ev routeEvent) bool {
	d := f.router.next(ev)
	if ev.Kind == eventFetchError || ev.Kind == eventDialFailed || d.Changed {
		// A failure may start a cooldown, a move may leave the leader:
		// both change how often the share re-reads metadata.
		f.r.share.rt.Nudge()
	}
	validate := false
	var wait time.Duration
	// A decision may ask for metadata, whose arrival is one more event.
	for i := 0; ; i++ {
		f.accept()
		f.applyRoute(d)
		if d.Probe {
			f.probe(d.ProbeBroker)
		}
		f.omitRack = d.OmitRack
		validate = validate || d.ValidateOffset
		wait = max(wait, d.Backoff)
		if !d.RefreshMetadata || i == 3 {
			break
		}
		f.release()
		p, err := f.refreshMetadata(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			f.r.errorf("kafka reader: partition %s: refreshing metadata: %v", f.tp, err)
			break
		}
		d = f.router.next(metadataEvent(f.router.current(), f.now(), p))
	}
	if validate || wait > 0 {
		f.release()
	}
	if validate && !f.validate(ctx) {
		return false
	}
	return retry.Sleep(ctx, wait)
}

// probe has the share's runtime check whether broker id answers again:
// the router keeps reads away from a broker whose cooldown ran out until
// then (routing.Cooldowns.RequireProbe). A frozen broker accepts the
// connection but never answers: the time a follower may stay silent
// bounds the probe.
func (f *fetcher) probe(id int) {
	r := f.r
	r.share.rt.Probe(id, r.config.ReplicaStallTimeout, f.now, func() {
		b, _ := f.r.share.brokerAddr(id)
		r.logf("kafka reader: broker %d (rack %s) answers again: reads may return to it", id, rackName(b.Rack))
	})
}

// accept takes the metadata the router accepted as the fetcher's own; its
// fetches carry the leader epoch from now on.
func (f *fetcher) accept() {
	f.meta = f.router.partition()
}

// applyRoute logs and counts a change of broker; the next step dials it.
func (f *fetcher) applyRoute(d routeDecision) {
	if !d.Changed || d.Broker == f.routed {
		f.routed = d.Broker
		return
	}
	from, _ := f.broker(f.routed)
	to, _ := f.broker(d.Broker)
	f.logReroute(from, to, f.routed, d.Broker, RerouteReason(d.Reason))
	f.r.stats.reroute(f.tp, RerouteReason(d.Reason))
	f.routed = d.Broker
	f.setRoute(d.Broker, to.Rack)
}

// setRoute records that the partition reads from broker now (-1: from
// none), and tells the share's runtime when that changed.
func (f *fetcher) setRoute(broker int, rack string) {
	if f.r.stats.setRoute(f.tp, broker, rack, f.meta.Leader.ID) {
		f.r.share.rt.RoutesChanged()
	}
}

func rackName(rack string) string {
	if rack == "" {
		return "none"
	}
	return rack
}

// refreshMetadata reloads the partition's metadata for the router, which
// decides whether to accept it (an older epoch or no leader is not).
func (f *fetcher) refreshMetadata(ctx context.Context) (Partition, error) {
	if err := f.r.refreshMetadata(ctx, f.tp.topic); err != nil {
		return Partition{}, err
	}
	// metaSeen stays: the next step hands the news to the router again,
	// after checking it is still the same topic (recreated).
	p, ok := f.r.cluster.partition(f.tp.topic, f.tp.partition)
	if !ok {
		return Partition{}, fmt.Errorf("looking up %s: %w", f.tp, UnknownTopicOrPartition)
	}
	return p, nil
}

// feedLeaderEnd hands the router the newest high watermark read at the
// partition's leader, if any arrived since the last one. It reports false
// when the fetcher must stop.
func (f *fetcher) feedLeaderEnd(ctx context.Context) bool {
	e, ok := f.r.share.rt.LeaderEndSince(f.tp, f.leaderEndSeen)
	if !ok {
		return true
	}
	f.leaderEndSeen = e.Seq
	return f.decide(ctx, leaderHWEvent(f.meta.Leader.ID, e.At, e.HW))
}

// An idle partition's fetch waits at its broker across long polls that bring
// it nothing (fetchengine.Want.Keep): in an incremental fetch session the
// broker leaves a partition without news out of its answer, and waking the
// fetcher for each such answer, only for it to ask again, would make hundreds
// of idle partitions cost hundreds of wakeups per long poll. keep says when
// the fetcher would decide nothing on such an answer.

// keep returns until when f's fetch may go on waiting across answers that
// have no news for its partition (the zero time: not now): while its router
// is quiet (routing.Selector.Quiet, whose end it returns), no metadata read
// since changed the partition or its topic, no sample of the leader's end
// shows records the replica read has not brought, and the rack check does
// not wait for the leader's answers. Only the first can end with time
// alone; the others change with the share's metadata, leader ends or
// cooldowns, which the engine watches (consumer.Runtime.KeepEpoch). The
// engine calls it with its lock held while f waits in Fetch, so f's fields
// are f's alone.
func (f *fetcher) keep() (until time.Time) {
	r := f.r
	now := f.now()
	until, ok := f.router.quiet(now)
	if !ok || !now.Before(until) {
		return time.Time{}
	}
	if v := r.share.rt.Version(); v != f.metaSeen && v != f.keptMeta {
		p, ok := r.cluster.partition(f.tp.topic, f.tp.partition)
		if _, gen := r.cluster.topicID(f.tp.topic); !ok || (f.topicGen >= 1 && gen != f.topicGen) || !sameRouting(p, f.meta) {
			return time.Time{}
		}
		f.keptMeta = v
	}
	if e, ok := r.share.rt.LeaderEndSince(f.tp, f.leaderEndSeen); ok && e.HW > f.offset {
		return time.Time{}
	}
	if f.awaitsNaming() {
		return time.Time{}
	}
	return until
}

// awaitsNaming reports whether f reads from a leader outside the client's
// rack while a replica in it is in sync: the leader should name it, and the
// rack check counts the answers in which it does not.
func (f *fetcher) awaitsNaming() bool {
	rack := f.r.config.Rack
	if rack == "" || f.router.current() != f.meta.Leader.ID || f.meta.Leader.Rack == rack {
		return false
	}
	for _, b := range f.meta.Isr {
		if b.Rack == rack {
			return true
		}
	}
	return false
}

// sameRouting reports whether a and b say the same of what routing reads:
// the leader, its epoch and the replicas in each role.
func sameRouting(a, b Partition) bool {
	return a.Leader.ID == b.Leader.ID && a.LeaderEpoch == b.LeaderEpoch && sameIDs(a.Replicas, b.Replicas) &&
		sameIDs(a.Isr, b.Isr) && sameIDs(a.OfflineReplicas, b.OfflineReplicas)
}

func sameIDs(a, b []Broker) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}
