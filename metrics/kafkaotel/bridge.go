// Package kafkaotel reports the routing of github.com/rackfetch/kafka-go
// Readers (Reader.RoutingStats) and the counters of Writers (Writer.Totals)
// through OpenTelemetry asynchronous instruments. It is a module of its own, so the library itself never
// depends on OpenTelemetry; its name leaves "otel" to OpenTelemetry, so
// neither import needs an alias.
//
//	b, err := kafkaotel.NewBridge(kafkaotel.WithReaders(reader), kafkaotel.WithWriters(writer))
//	defer b.Close()
//
// Instruments (namespace "kafka", WithNamespace), each with the attributes
// client_id and group_id (the Readers' Dialer.ClientID and GroupID):
//
//	kafka.reader.fetched_bytes{broker,rack}         counter, By: fetch response bytes from each broker
//	kafka.reader.same_rack_bytes                    counter, By: from brokers in the Reader's rack
//	kafka.reader.cross_rack_bytes                   counter, By: from the others (all without a Rack)
//	kafka.reader.reroutes{reason}                   counter: moves of a partition's reads, by kafka.RerouteReason ID (preferred_replica, …)
//	kafka.reader.rack_inactive{cause}               gauge: 1 for each reason found why rack-aware fetching does nothing, by kafka.RackInactiveCause ID
//	kafka.reader.partition.replica_info{topic,partition,broker,rack}  gauge: 1 for the broker a partition is read from now
//	kafka.reader.partition.leader_info{topic,partition,broker}        gauge: 1 for the partition's leader as last seen
//	kafka.reader.partition.lag{topic,partition}     gauge: messages behind the leader's high watermark
//
// With WithPartitionAttributes(false) the three partition instruments give
// way to kafka.reader.topic.lag{topic}, the lag summed over the topic's
// partitions. The partition instruments cover the partitions being read
// now. Readers with the same client and group IDs are summed
// (kafka.ReaderSet).
//
// Writer instruments, each with the attributes client_id and topic (the
// client ID of the Writers' Transport and their Topic; Writers sharing both
// are summed, kafka.WriterSet). They read Writer.Totals, which resets
// nothing, so the application's own calls to Writer.Stats keep their
// counts:
//
//	kafka.writer.writes           counter: produce requests sent
//	kafka.writer.batches          counter: record batches sent (one per partition and request)
//	kafka.writer.messages         counter: messages sent
//	kafka.writer.bytes            counter, By: bytes of the messages sent
//	kafka.writer.errors           counter: failed attempts
//	kafka.writer.retries          counter: attempts made again after a failure
//	kafka.writer.write_time       counter, s: time spent in produce requests
//	kafka.writer.throttle_time    counter, s: throttle time brokers asked for
//	kafka.writer.produced_bytes{rack}  counter, By: encoded record batch bytes written to leaders, by the leader's rack (its broker.rack)
//	kafka.writer.same_rack_bytes  counter, By: of those, to leaders in the Writer's Rack
//	kafka.writer.other_rack_bytes counter, By: to the others (both 0 without a Rack)
package kafkaotel

import (
	"context"
	"errors"
	"fmt"

	kafka "github.com/rackfetch/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Bridge observes the routing counters of one or more Readers and the
// counters of Writers at each collection of its meter. Its methods are safe
// for concurrent use.
type Bridge struct {
	readers    *kafka.ReaderSet
	writers    *kafka.WriterSet
	partitions bool
	reg        metric.Registration
	writerInstruments

	fetched, sameRack, crossRack, reroutes metric.Int64ObservableCounter
	rackInactive, replica, leader, lag     metric.Int64ObservableGauge
	topicLag                               metric.Int64ObservableGauge
}

// NewBridge creates the instruments on a meter of the provider from
// WithMeterProvider and registers the callback that reads the Readers'
// RoutingStats and the Writers' Totals. Add and Remove change its Readers
// later, AddWriter and RemoveWriter its Writers.
func NewBridge(opts ...Option) (*Bridge, error) {
	cfg := newConfig(opts)
	meter := cfg.provider.Meter(ScopeName)
	b := &Bridge{readers: kafka.NewReaderSet(cfg.readers...), writers: kafka.NewWriterSet(cfg.writers...), partitions: cfg.partitions}
	prefix, writerPrefix := "reader.", "writer."
	if cfg.namespace != "" {
		prefix, writerPrefix = cfg.namespace+".reader.", cfg.namespace+".writer."
	}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(prefix+name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := meter.Int64ObservableGauge(prefix+name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	b.fetched = counter("fetched_bytes", "By", "Fetch response bytes read from each broker, with the broker's rack.")
	b.sameRack = counter("same_rack_bytes", "By", "Fetch response bytes read from brokers in the reader's rack.")
	b.crossRack = counter("cross_rack_bytes", "By", "Fetch response bytes read from brokers outside the reader's rack (all of them when it has no rack).")
	b.reroutes = counter("reroutes", "{reroute}", "Moves of a partition's reads from one broker to another, by reason.")
	b.rackInactive = gauge("rack_inactive", "1", "1 for each reason found why rack-aware fetching does nothing (no_replica_selector, no_broker_in_rack, fetch_too_old).")
	instruments := []metric.Observable{b.fetched, b.sameRack, b.crossRack, b.reroutes, b.rackInactive}
	if cfg.partitions {
		b.replica = gauge("partition.replica_info", "1", "1 for the broker the partition is read from now, with its id and rack.")
		b.leader = gauge("partition.leader_info", "1", "1 for the partition's leader as last seen in metadata, with its id.")
		b.lag = gauge("partition.lag", "{message}", "Messages between the next offset to fetch and the leader's high watermark.")
		instruments = append(instruments, b.replica, b.leader, b.lag)
	} else {
		b.topicLag = gauge("topic.lag", "{message}", "Messages between the next offsets to fetch and the leaders' high watermarks, summed over the topic's partitions read now.")
		instruments = append(instruments, b.topicLag)
	}
	b.writerInstruments = newWriterInstruments(meter, writerPrefix, &errs)
	instruments = append(instruments, b.writerInstruments.all()...)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("creating the kafka reader and writer instruments: %w", err)
	}
	reg, err := meter.RegisterCallback(b.observe, instruments...)
	if err != nil {
		return nil, fmt.Errorf("registering the kafka reader and writer callback: %w", err)
	}
	b.reg = reg
	return b, nil
}

// Add makes the bridge report r too.
func (b *Bridge) Add(r *kafka.Reader) { b.readers.Add(r) }

// Remove stops reporting r.
func (b *Bridge) Remove(r *kafka.Reader) { b.readers.Remove(r) }

// Close unregisters the callback: the instruments report nothing more.
func (b *Bridge) Close() error {
	if err := b.reg.Unregister(); err != nil {
		return fmt.Errorf("unregistering the kafka reader and writer callback: %w", err)
	}
	return nil
}

func (b *Bridge) observe(_ context.Context, o metric.Observer) error {
	for _, g := range b.readers.RoutingStats() {
		b.observeGroup(o, g)
	}
	b.observeWriters(o)
	return nil
}

func (b *Bridge) observeGroup(o metric.Observer, g kafka.GroupRoutingStats) {
	base := []attribute.KeyValue{attribute.String("client_id", g.ClientID), attribute.String("group_id", g.GroupID)}
	with := func(kv ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(append(append([]attribute.KeyValue{}, base...), kv...)...)
	}
	o.ObserveInt64(b.sameRack, g.SameRackBytes, with())
	o.ObserveInt64(b.crossRack, g.CrossRackBytes, with())
	for _, br := range g.Brokers {
		o.ObserveInt64(b.fetched, br.Bytes, with(attribute.Int("broker", br.ID), attribute.String("rack", br.Rack)))
	}
	for reason, n := range g.Reroutes { // every known reason, from the start
		o.ObserveInt64(b.reroutes, n, with(attribute.String("reason", string(reason))))
	}
	for _, ri := range g.RackInactive {
		o.ObserveInt64(b.rackInactive, 1, with(attribute.String("cause", string(ri.Cause))))
	}
	if !b.partitions {
		for topic, lag := range g.LagByTopic() {
			o.ObserveInt64(b.topicLag, lag, with(attribute.String("topic", topic)))
		}
		return
	}
	for _, p := range g.Partitions {
		if p.Broker < 0 {
			continue // not read now (in group mode, maybe by another member)
		}
		tp := []attribute.KeyValue{attribute.String("topic", p.Topic), attribute.Int("partition", p.Partition)}
		o.ObserveInt64(b.replica, 1, with(append(tp, attribute.Int("broker", p.Broker), attribute.String("rack", p.BrokerRack))...))
		if p.Leader >= 0 {
			o.ObserveInt64(b.leader, 1, with(append(tp, attribute.Int("broker", p.Leader))...))
		}
		if p.Lag >= 0 {
			o.ObserveInt64(b.lag, p.Lag, with(tp...))
		}
	}
}
