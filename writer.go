package kafka

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rackfetch/kafka-go/internal/producer"
)

// The Writer type provides the implementation of a producer of kafka messages
// that automatically distributes messages across partitions of a single topic
// (or of the topics the messages name) using a configurable balancing policy.
//
// WriteMessages assigns each message to a partition with the Balancer and
// appends it to that partition's current batch. Batches go to the partition
// leaders; the batches of the partitions a broker leads that are ready
// together travel in one produce request. A Writer keeps up to five
// requests in flight per broker, each on a connection of its own, opened
// only when a request is ready while the others are still unanswered and
// closed after the Transport's IdleTimeout without use (kafka-go opens a
// connection per concurrent request, without a bound). Batches of one
// partition are written in order, one at a time.
//
// # Batching and latency
//
// A synchronous WriteMessages (Async false) flushes the batches holding its
// messages as soon as all of them are assigned: it never waits for
// BatchTimeout, so a lone message is written at once and the call returns
// after one round trip to the leader (kafka-go instead waits up to
// BatchTimeout, one second by default, for the batch to fill). Batching
// still happens: while a partition's batch is in flight, the messages
// that arrive for it, from any number of goroutines, accumulate and leave
// together in its next batch, up to BatchSize
// messages and BatchBytes bytes per partition. The busier the Writer, the
// larger the batches, with no added delay for an idle one.
//
// An asynchronous Writer (Async true) batches as kafka-go does: a batch is
// sent when it holds BatchSize messages or BatchBytes bytes, or BatchTimeout
// after its first message, whichever comes first. Close sends what is left.
//
// # Errors and retries
//
// Writes failing with an error that may go away (a kafka.Error whose
// Temporary method returns true, such as NotLeaderForPartition,
// LeaderNotAvailable, RequestTimedOut or NotEnoughReplicas, or a network
// error) are retried up to MaxAttempts times in all, with a backoff growing
// from WriteBackoffMin to WriteBackoffMax; before each retry the metadata of
// the topic is read again, so a moved leader is found.
//
// A produce request a broker leaves unanswered for a second starts a watch:
// the metadata of its partitions is read from their other replicas every
// 100ms, and once it names another leader the request is abandoned and
// its batches go to the new leader at once. A frozen broker (SIGSTOP, a
// long GC pause) keeps its connections open, so without the watch nothing
// would fail before the request's deadline (WriteTimeout + ReadTimeout).
//
// A retried request may have been written by the broker before it failed
// (the answer was lost). With RequiredAcks RequireAll the Writer produces
// idempotently (KIP-98): batches carry a producer id and sequence numbers,
// and the broker, or the new leader that replicated the batch, answers a
// retry of a batch it has with the original offsets instead of writing it
// again. With RequireOne or RequireNone, or against brokers that refuse to
// hand out producer ids, retries can duplicate messages.
//
// When a synchronous WriteMessages fails, the error is a WriteErrors value
// with one entry per message, in the order of the arguments, nil for the
// messages that were written:
//
//	switch err := w.WriteMessages(ctx, msgs...).(type) {
//	case nil:
//	case kafka.WriteErrors:
//		for i := range msgs {
//			if err[i] != nil {
//				// handle the error writing msgs[i]
//			}
//		}
//	default:
//		// the call failed as a whole (validation, metadata, ctx)
//	}
//
// A message larger than BatchBytes fails the whole call with a
// MessageTooLargeError before anything is written, as in kafka-go. A batch
// the broker refuses as too large (MessageSizeTooLarge, for instance a
// topic with a small max.message.bytes) is split and sent again; a single
// message the broker still refuses gets a MessageTooLargeError in its
// WriteErrors entry.
//
// Methods of Writer are safe to use concurrently from multiple goroutines,
// however the writer configuration should not be modified after first use.
type Writer struct {
	// Address of the kafka cluster that this writer is configured to send
	// messages to: one or more bootstrap brokers, see TCP.
	//
	// This field is required, attempting to write messages to a writer with a
	// nil address will error.
	Addr net.Addr

	// Topic is the name of the topic that the writer will produce messages to.
	//
	// Setting this field or not is a mutually exclusive option. If you set
	// Topic here, you must not set Topic for any produced Message. Otherwise,
	// if you do not set Topic, every Message must have Topic specified.
	Topic string

	// The balancer used to distribute messages across partitions.
	//
	// The default is to use a round-robin distribution.
	Balancer Balancer

	// Rack is the writer's rack (its availability zone), named as the
	// brokers' broker.rack names theirs. With a Rack, a message the
	// Balancer places freely (see KeyedBalancer: every message of
	// RoundRobin and LeastBytes, those without a key under the hashing
	// balancers) goes to a partition whose leader is in that rack, so that
	// its bytes do not cross zones (KIP-1123); the Balancer chooses among
	// those partitions only. While no partition of the topic is led in the
	// rack, every partition is used. Which partitions are led where follows
	// the Writer's metadata: a partition whose leader moves to another
	// rack leaves the set at the next metadata the Writer reads, and joins
	// it again when its leader is back; while a partition whose preferred
	// leader is in the rack is led elsewhere, the Writer reads the metadata
	// every second while it writes (for 6 minutes at most: Kafka moves
	// leaders back within 5), to see the leadership come back. A
	// partition whose leader the Writer could not reach (a dead broker the
	// cluster has not replaced yet) is left out until its waiting batch is
	// written. Messages placed by content keep the partition they get
	// without a Rack.
	//
	// Default: none. NewWriter takes WriterConfig.Rack, else the Dialer's
	// RackID.
	Rack string

	// RackMinShare guards against leadership skew with a Rack: the rack's
	// freely placed messages go to at least this fraction of its fair
	// share of the topic's partitions (the partitions divided by the racks
	// holding replicas). When the rack leads fewer (but one at least), the
	// Writer adds partitions led elsewhere up to that many, first those
	// whose preferred leader is in the rack, so that a rack left with one
	// leader after failures does not pour all its writes into that one
	// partition. With the default no partition takes more than twice the
	// share of the rack's writes it takes with balanced leadership, and a
	// rack leading 1 of its 4 partitions sends half its bytes across
	// zones instead of none (or two thirds, using every partition). A
	// negative value turns the guard off (KIP-1123's rule: any partition
	// led in the rack is enough).
	//
	// Default: 0.5
	RackMinShare float64

	// Limit on how many attempts will be made to deliver a message.
	// An attempt that could not reach the partition's leader (its dial
	// failed, or no leader is known while one is being elected) does not
	// count: it waits for the metadata to name a reachable leader, within
	// DeliveryTimeout.
	//
	// The default is to try at most 10 times.
	MaxAttempts int

	// DeliveryTimeout bounds how long a message waits for its partition's
	// leader to become reachable, from when it was handed to the Writer:
	// past it, the attempt that cannot reach the leader fails the message.
	// A leader killed with kill -9 stays in the metadata until the
	// cluster elects another (broker.session.timeout.ms, ~9 s; a
	// ZooKeeper cluster's session timeout, 18 s), which ten attempts at
	// most a second apart did not outlast.
	//
	// Default: 30s
	DeliveryTimeout time.Duration

	// WriteBackoffMin optionally sets the smallest amount of time the writer
	// waits before it attempts to write a batch of messages again.
	//
	// Default: 100ms
	WriteBackoffMin time.Duration

	// WriteBackoffMax optionally sets the maximum amount of time the writer
	// waits before it attempts to write a batch of messages again.
	//
	// Default: 1s
	WriteBackoffMax time.Duration

	// Limit on how many messages will be buffered before being sent to a
	// partition.
	//
	// The default is to use a target batch size of 100 messages.
	BatchSize int

	// Limit the maximum size of a request in bytes before being sent to
	// a partition.
	//
	// The default is to use a kafka default value of 1048576.
	BatchBytes int64

	// Time limit on how long an incomplete batch of an asynchronous writer
	// waits for more messages before it is sent. Synchronous writes never
	// wait for it (see "Batching and latency" above).
	//
	// The default is to flush at least every second.
	BatchTimeout time.Duration

	// Timeout for read operations performed by the Writer: metadata
	// requests, and how long after WriteTimeout a produce response may
	// still arrive.
	//
	// Defaults to 10 seconds.
	ReadTimeout time.Duration

	// Timeout for write operation performed by the Writer: how long the
	// broker may wait for acknowledgements of a produce request (the
	// request's timeout).
	//
	// Defaults to 10 seconds.
	WriteTimeout time.Duration

	// Number of acknowledges from partition replicas required before receiving
	// a response to a produce request, the following values are supported:
	//
	//  RequireNone (0)  fire-and-forget, do not wait for acknowledgements from the
	//  RequireOne  (1)  wait for the leader to acknowledge the writes
	//  RequireAll  (-1) wait for the full ISR to acknowledge the writes
	//
	// With RequireNone a write is still only reported written once the
	// leader has taken it: the first produce to a partition's leader (and
	// again after the leader or its epoch changes) is sent with acks=1, as
	// a leader named by the metadata may not host the partition yet (a
	// topic just created) and would drop an acks=0 produce silently; and
	// each acks=0 produce is followed, on the same connection, by a
	// version 0 ApiVersions request, which the broker answers only after
	// processing the produce, or not at all when it refused it (Kafka then
	// closes the connection). A closed connection fails the write, which
	// is retried. kafka-go returns once the request is written to the
	// socket. With a custom RoundTripper only the acks=1 confirmation is
	// made.
	//
	// Defaults to RequireNone.
	RequiredAcks RequiredAcks

	// Setting this flag to true causes the WriteMessages method to never block.
	// It also means that errors are ignored since the caller will not receive
	// the returned value. Use this only if you don't care about guarantees of
	// whether the messages were written to kafka, or set Completion.
	//
	// Defaults to false.
	Async bool

	// An optional function called when the writer succeeds or fails the
	// delivery of messages to a kafka partition. When writing the messages
	// fails, the `err` parameter will be non-nil.
	//
	// The messages that the Completion function is called with have their
	// topic, partition, offset, and time set based on the Produce responses
	// received from kafka (offsets are -1 with RequireNone, which gets no
	// response, except for a first write to a leader, sent with acks=1). All messages passed to a call to the function have been
	// written to the same partition. The keys and values of messages are
	// referencing the original byte slices carried by messages in the calls
	// to WriteMessages.
	//
	// The function is called from goroutines started by the writer. Calls to
	// Close will block on the Completion function calls. When the Writer is
	// not writing asynchronously, the WriteMessages call will also block on
	// Completion function, which is a useful guarantee if the byte slices
	// for the message keys and values are intended to be reused after the
	// WriteMessages call returned. The function should return quickly: the
	// next request to the same broker waits for it.
	//
	// If a completion function panics, the program terminates because the
	// panic is not recovered by the writer and bubbles up to the top of the
	// goroutine's call stack.
	Completion func(messages []Message, err error)

	// Compression set the compression codec to be used to compress messages.
	Compression Compression

	// If not nil, specifies a logger used to report internal changes within the
	// writer.
	Logger Logger

	// ErrorLogger is the logger used to report errors. If nil, the writer falls
	// back to using Logger instead.
	ErrorLogger Logger

	// A transport used to send messages to kafka clusters.
	//
	// If nil, DefaultTransport is used. A *Transport gives the Writer its
	// connection settings and the metadata it shares with other Writers of
	// the same Transport; any other RoundTripper receives every metadata
	// and produce request the Writer sends.
	Transport RoundTripper

	// AllowAutoTopicCreation notifies writer to create topic if missing.
	AllowAutoTopicCreation bool

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup          // WriteMessages calls in progress
	core   *producer.Core[Message] // created on first use

	// cluster is the cluster state of core, which tells the partition
	// counts of topics.
	cluster *transportCluster

	// once creates writerStats lazily, so the zero Writer is usable.
	once sync.Once
	*writerStats

	// roundRobin is the balancer when none is configured.
	roundRobin RoundRobin

	// local caches the partitions led in Rack, per topic.
	local producer.RackPartitions

	// transport is non-nil when NewWriter created the Transport, which
	// Close then closes.
	transport *Transport
}

// RequiredAcks is the number of acknowledgements a produce request waits
// for.
type RequiredAcks int

const (
	RequireNone RequiredAcks = 0
	RequireOne  RequiredAcks = 1
	RequireAll  RequiredAcks = -1
)

func (acks RequiredAcks) String() string {
	switch acks {
	case RequireNone:
		return "none"
	case RequireOne:
		return "one"
	case RequireAll:
		return "all"
	default:
		return "unknown"
	}
}

// MarshalText satisfies encoding.TextMarshaler: "none", "one" or "all".
func (acks RequiredAcks) MarshalText() ([]byte, error) {
	return []byte(acks.String()), nil
}

// UnmarshalText satisfies encoding.TextUnmarshaler; it accepts the names
// and the numbers 0, 1 and -1.
func (acks *RequiredAcks) UnmarshalText(b []byte) error {
	switch s := string(b); s {
	case "none":
		*acks = RequireNone
	case "one":
		*acks = RequireOne
	case "all":
		*acks = RequireAll
	default:
		n, err := strconv.Atoi(s)
		if err != nil || (RequiredAcks(n) != RequireNone && RequiredAcks(n) != RequireOne && RequiredAcks(n) != RequireAll) {
			return fmt.Errorf("required acks must be one of none, one, or all, not %q", b)
		}
		*acks = RequiredAcks(n)
	}
	return nil
}

var (
	_ encoding.TextMarshaler   = RequiredAcks(0)
	_ encoding.TextUnmarshaler = (*RequiredAcks)(nil)
)

// WriterConfig is a configuration type used to create new instances of Writer.
//
// DEPRECATED: writer values should be configured directly by assigning their
// exported fields. This type is kept for backward compatibility.
type WriterConfig struct {
	// The list of brokers used to discover the partitions available on the
	// kafka cluster.
	//
	// This field is required, attempting to create a writer with an empty list
	// of brokers will panic.
	Brokers []string

	// The topic that the writer will produce messages to.
	//
	// If provided, this will be used to set the topic for all produced messages.
	// If not provided, each Message must specify a topic for itself. This must be
	// mutually exclusive, otherwise the Writer will return an error.
	Topic string

	// The dialer used by the writer to establish connections to the kafka
	// cluster.
	//
	// If nil, the default dialer is used instead.
	Dialer *Dialer

	// The balancer used to distribute messages across partitions.
	//
	// The default is to use a round-robin distribution.
	Balancer Balancer

	// Rack is the Writer's Rack; empty, the Dialer's RackID.
	Rack string

	// RackMinShare is the Writer's RackMinShare.
	RackMinShare float64

	// Limit on how many attempts will be made to deliver a message.
	//
	// The default is to try at most 10 times.
	MaxAttempts int

	// DEPRECATED: unused, kept for compatibility.
	QueueCapacity int

	// Limit on how many messages will be buffered before being sent to a
	// partition.
	//
	// The default is to use a target batch size of 100 messages.
	BatchSize int

	// Limit the maximum size of a request in bytes before being sent to
	// a partition.
	//
	// The default is to use a kafka default value of 1048576.
	BatchBytes int

	// Time limit on how often incomplete message batches will be flushed to
	// kafka (asynchronous writers only, see Writer).
	//
	// The default is to flush at least every second.
	BatchTimeout time.Duration

	// Timeout for read operations performed by the Writer.
	//
	// Defaults to 10 seconds.
	ReadTimeout time.Duration

	// Timeout for write operation performed by the Writer.
	//
	// Defaults to 10 seconds.
	WriteTimeout time.Duration

	// The metadata TTL of the Writer's Transport (default 15s).
	RebalanceInterval time.Duration

	// The idle timeout of the Writer's Transport (default 9 minutes).
	IdleConnTimeout time.Duration

	// Number of acknowledges from partition replicas required before receiving
	// a response to a produce request. The default is -1, which means to wait for
	// all replicas, and a value above 0 is required to indicate how many replicas
	// should acknowledge a message to be considered successful.
	RequiredAcks int

	// Setting this flag to true causes the WriteMessages method to never block.
	// It also means that errors are ignored since the caller will not receive
	// the returned value. Use this only if you don't care about guarantees of
	// whether the messages were written to kafka.
	Async bool

	// CompressionCodec set the codec to be used to compress Kafka messages.
	CompressionCodec

	// If not nil, specifies a logger used to report internal changes within the
	// writer.
	Logger Logger

	// ErrorLogger is the logger used to report errors. If nil, the writer falls
	// back to using Logger instead.
	ErrorLogger Logger
}

// Validate method validates WriterConfig properties.
func (config *WriterConfig) Validate() error {
	if len(config.Brokers) == 0 {
		return errors.New("cannot create a kafka writer with an empty list of brokers")
	}
	return nil
}

// NewWriter creates and returns a new Writer configured with config.
//
// DEPRECATED: Writer value can be instantiated and configured directly,
// this function is retained for backward compatibility.
func NewWriter(config WriterConfig) *Writer {
	if err := config.Validate(); err != nil {
		panic(err)
	}
	stats := new(writerStats)
	d := DefaultDialer
	if config.Dialer != nil {
		d = config.Dialer
	}
	// The Dialer's settings (TLS, SASL, resolver, rack...) are used as
	// they are; only its dial function is wrapped, to count dials.
	dialer := *d
	dial := dialer.DialFunc
	if dial == nil {
		dial = (&net.Dialer{
			LocalAddr:     d.LocalAddr,
			FallbackDelay: d.FallbackDelay,
			KeepAlive:     d.KeepAlive,
		}).DialContext
	}
	dialer.DialFunc = func(ctx context.Context, network, address string) (net.Conn, error) {
		start := time.Now()
		defer func() {
			stats.dials.observe(1)
			stats.dialTime.observe(int64(time.Since(start)))
		}()
		return dial(ctx, network, address)
	}
	idle := config.IdleConnTimeout
	if idle == 0 {
		idle = 9 * time.Minute // kafka-go's historical default
	}
	ttl := config.RebalanceInterval
	if ttl == 0 {
		ttl = 15 * time.Second // kafka-go's historical default
	}
	transport := &Transport{
		ClientID:    d.ClientID,
		TLS:         d.TLS,
		SASL:        d.SASLMechanism,
		IdleTimeout: idle,
		MetadataTTL: ttl,
		dialer:      &dialer,
	}
	w := &Writer{
		Addr:         TCP(config.Brokers...),
		Topic:        config.Topic,
		Balancer:     config.Balancer,
		Rack:         config.Rack,
		RackMinShare: config.RackMinShare,
		MaxAttempts:  config.MaxAttempts,
		BatchSize:    config.BatchSize,
		BatchBytes:   int64(config.BatchBytes),
		BatchTimeout: config.BatchTimeout,
		ReadTimeout:  config.ReadTimeout,
		WriteTimeout: config.WriteTimeout,
		RequiredAcks: RequiredAcks(config.RequiredAcks),
		Async:        config.Async,
		Logger:       config.Logger,
		ErrorLogger:  config.ErrorLogger,
		Transport:    transport,
		transport:    transport,
		writerStats:  stats,
	}
	if w.Rack == "" {
		w.Rack = d.RackID
	}
	if config.RequiredAcks == 0 {
		// NewWriter has always meant "all" by 0.
		w.RequiredAcks = RequireAll
	}
	if config.CompressionCodec != nil {
		w.Compression = Compression(config.CompressionCodec.Code())
	}
	return w
}

// WriteMessages writes a batch of messages to the kafka topic configured on
// this writer, or to the topics the messages name.
//
// Unless the writer was configured to write messages asynchronously, the
// method blocks until all messages have been written, or until the maximum
// number of attempts was reached; it does not wait for BatchTimeout (see
// Writer). Asynchronous writers return at once, after validation, and
// report results to Completion.
//
// When the method returns an error, it may be of type kafka.WriteErrors to
// allow the caller to determine the status of each message.
//
// The context passed as first argument may also be used to asynchronously
// cancel the operation. Note that in this case there are no guarantees made
// on whether messages were written to kafka, they might also still be
// written after this method has already returned, therefore it is important
// to not modify byte slices of passed messages if WriteMessages returned
// early due to a canceled context. The program should assume that the whole
// batch failed and re-write the messages later (which could then cause
// duplicates).
func (w *Writer) WriteMessages(ctx context.Context, msgs ...Message) error {
	if w.Addr == nil {
		return errors.New("kafka.(*Writer).WriteMessages: cannot create a kafka writer with a nil address")
	}
	core, err := w.enter()
	if err != nil {
		return err
	}
	defer w.calls.Done()
	if len(msgs) == 0 {
		return nil
	}
	maxBytes := w.batchBytes()
	for i := range msgs {
		if messageSize(&msgs[i]) > maxBytes {
			// kafka-go's behavior: nothing is written, the caller drops
			// the message and writes Remaining again.
			return messageTooLarge(msgs, i)
		}
	}
	parts, err := w.assignPartitions(ctx, core, msgs)
	if err != nil {
		return err
	}
	refs := core.Enqueue(msgs, parts, !w.Async)
	if w.Async {
		return nil
	}
	errs, err := producer.Wait(ctx, refs)
	if errs != nil {
		return WriteErrors(errs)
	}
	return err
}

// assignPartitions chooses the topic and partition of every message.
func (w *Writer) assignPartitions(ctx context.Context, core *producer.Core[Message], msgs []Message) ([]producer.TopicPartition, error) {
	balancer := w.balancer()
	parts := make([]producer.TopicPartition, len(msgs))
	lastTopic, lastCount := "", 0
	var all, free []int // the topic's partitions, those for messages placed freely
	for i := range msgs {
		topic, err := w.chooseTopic(msgs[i])
		if err != nil {
			return nil, err
		}
		if topic != lastTopic || lastCount == 0 {
			n, err := w.cluster.partitionCount(ctx, topic, w.AllowAutoTopicCreation, w.maxAttempts(),
				w.writeBackoffMin(), w.writeBackoffMax(), w.readTimeout())
			if err != nil {
				return nil, err
			}
			if n == 0 {
				return nil, fmt.Errorf("kafka.(*Writer): topic %q has no partitions", topic)
			}
			lastTopic, lastCount = topic, n
			all = partitionIDs(n)
			free = all
			if w.Rack != "" {
				free = w.rackPartitions(core, topic, all)
			}
		}
		ids := all
		if !keyed(balancer, &msgs[i]) {
			ids = free
		}
		p := balancer.Balance(msgs[i], ids...)
		if p < 0 || p >= lastCount {
			return nil, fmt.Errorf("kafka.(*Writer): the balancer chose partition %d of %q, which has partitions 0-%d", p, topic, lastCount-1)
		}
		parts[i] = producer.TopicPartition{Topic: topic, Partition: p}
	}
	return parts, nil
}

// rackPartitions returns the partitions of topic a message placed freely
// may go to, for a Writer with a Rack: those led in the rack (if it leads
// enough of them: RackMinShare), else all; either way without the
// partitions whose leader the Writer could not reach, unless none is left.
func (w *Writer) rackPartitions(core *producer.Core[Message], topic string, all []int) []int {
	choice := w.local.Of(w.cluster.cl.meta, topic, w.Rack, len(all), w.rackMinShare())
	if choice.Displaced && time.Since(choice.DisplacedSince) < displacedWatch {
		// Leadership may come back to the rack at any time (a preferred
		// leader election): look sooner than the metadata TTL.
		w.cluster.refreshOlderThan(topic, displacedRefresh, w.readTimeout())
	}
	ids := all
	if len(choice.Local) > 0 {
		ids = choice.Local
	}
	down := core.Unreachable(topic)
	if down == nil {
		return ids
	}
	if up := without(ids, down); len(up) > 0 {
		return up
	}
	if up := without(all, down); len(up) > 0 {
		return up
	}
	return all
}

// displacedRefresh is how old the metadata of a topic may get while a
// partition whose preferred leader is in the Writer's rack is led
// elsewhere: one Metadata request a second, only while writing, for the
// first displacedWatch of the displacement. Kafka's controller checks for
// leaders to move back every 5 minutes (leader.imbalance.check.interval);
// a displacement that outlasts that is left to the TTL.
const (
	displacedRefresh = time.Second
	displacedWatch   = 6 * time.Minute
)

// without returns the ids not in drop.
func without(ids []int, drop map[int]bool) []int {
	out := make([]int, 0, len(ids))
	for _, id := range ids {
		if !drop[id] {
			out = append(out, id)
		}
	}
	return out
}

func (w *Writer) rackMinShare() float64 {
	switch {
	case w.RackMinShare < 0:
		return 0
	case w.RackMinShare == 0:
		return producer.DefaultRackMinShare
	}
	return w.RackMinShare
}

// enter registers a WriteMessages call, creating the writer's state on
// first use.
func (w *Writer) enter() (*producer.Core[Message], error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, io.ErrClosedPipe
	}
	if w.core == nil {
		core, tc, err := newWriterCore(w)
		if err != nil {
			return nil, err
		}
		w.core, w.cluster = core, tc
	}
	w.calls.Add(1)
	return w.core, nil
}

// Close flushes pending writes, and waits for all writes to complete before
// returning. Calling Close also prevents new writes from being submitted to
// the writer, further calls to WriteMessages and the like will fail with
// io.ErrClosedPipe.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	core := w.core
	w.mu.Unlock()
	w.calls.Wait()
	if core != nil {
		core.Close()
	}
	if w.transport != nil {
		w.transport.CloseIdleConnections()
	}
	return nil
}

func (w *Writer) chooseTopic(msg Message) (string, error) {
	switch {
	case w.Topic != "" && msg.Topic != "":
		return "", errors.New("kafka.(*Writer): Topic must not be specified for both Writer and Message")
	case w.Topic == "" && msg.Topic == "":
		return "", errors.New("kafka.(*Writer): Topic must be specified for Writer or Message")
	case msg.Topic != "":
		return msg.Topic, nil
	}
	return w.Topic, nil
}

func (w *Writer) balancer() Balancer {
	if w.Balancer != nil {
		return w.Balancer
	}
	return &w.roundRobin
}

func (w *Writer) maxAttempts() int { return positiveOr(w.MaxAttempts, 10) }

func (w *Writer) deliveryTimeout() time.Duration {
	return positiveOr(w.DeliveryTimeout, 30*time.Second)
}

func (w *Writer) writeBackoffMin() time.Duration {
	return positiveOr(w.WriteBackoffMin, 100*time.Millisecond)
}

func (w *Writer) writeBackoffMax() time.Duration { return positiveOr(w.WriteBackoffMax, time.Second) }

func (w *Writer) batchSize() int { return positiveOr(w.BatchSize, 100) }

func (w *Writer) batchBytes() int64 { return positiveOr(w.BatchBytes, 1048576) }

func (w *Writer) batchTimeout() time.Duration { return positiveOr(w.BatchTimeout, time.Second) }

func (w *Writer) readTimeout() time.Duration { return positiveOr(w.ReadTimeout, 10*time.Second) }

func (w *Writer) writeTimeout() time.Duration { return positiveOr(w.WriteTimeout, 10*time.Second) }

// messageSize is the size a message takes in a record batch, at most: the
// unit of BatchBytes.
func messageSize(m *Message) int64 {
	// length, attributes, timestamp and offset deltas, key and value
	// lengths and header count: 5+1+10+5+5+5+5 bytes at most.
	n := int64(36 + len(m.Key) + len(m.Value))
	for i := range m.Headers {
		n += int64(10 + len(m.Headers[i].Key) + len(m.Headers[i].Value))
	}
	return n
}

// partitionIDsCache holds 0, 1, 2, ... shared by the calls to balancers,
// which must not modify the slice they are given.
var partitionIDsCache atomic.Value // []int

func partitionIDs(n int) []int {
	ids, _ := partitionIDsCache.Load().([]int)
	if len(ids) >= n {
		return ids[:n:n]
	}
	size := (n + 127) &^ 127
	ids = make([]int, size)
	for i := range ids {
		ids[i] = i
	}
	partitionIDsCache.Store(ids)
	return ids[:n:n]
}
