// Package otel reports the routing of github.com/rackfetch/kafka-go Readers
// (Reader.RoutingStats) through OpenTelemetry asynchronous instruments. It is
// a module of its own, so the library itself never depends on OpenTelemetry.
//
//	b, err := kafkaotel.NewBridge(otel.Meter("kafka"), reader)
//	defer b.Close()
//
// Instruments, each with the attributes client_id and group_id (the Readers'
// Dialer.ClientID and GroupID):
//
//	kafka.reader.fetched_bytes{broker,rack}          counter, By: fetch response bytes from each broker
//	kafka.reader.same_rack_bytes                     counter, By: from brokers in the Reader's rack
//	kafka.reader.cross_rack_bytes                    counter, By: from the others (all without a Rack)
//	kafka.reader.reroutes{reason}                    counter: moves of a partition's reads, by kafka.RerouteReason
//	kafka.reader.partition.replica{topic,partition,rack}  gauge: the broker id a partition is read from now
//	kafka.reader.partition.leader{topic,partition}   gauge: the partition's leader as last seen
//	kafka.reader.partition.lag{topic,partition}      gauge: messages behind the leader's high watermark
//
// The partition gauges cover the partitions being read now. Readers with
// the same client and group IDs are summed (kafka.MergeRoutingStats).
package otel

import (
	"context"
	"errors"
	"fmt"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/internal/readerset"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Bridge observes the routing counters of one or more Readers at each
// collection of its meter. Its methods are safe for concurrent use.
type Bridge struct {
	readers *readerset.Set
	reg     metric.Registration

	fetched, sameRack, crossRack, reroutes metric.Int64ObservableCounter
	replica, leader, lag                   metric.Int64ObservableGauge
}

// NewBridge creates the instruments on meter and registers the callback
// that reads the readers' RoutingStats.
func NewBridge(meter metric.Meter, readers ...*kafka.Reader) (*Bridge, error) {
	b := &Bridge{readers: readerset.New(readers...)}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	b.fetched = counter("kafka.reader.fetched_bytes", "By", "Fetch response bytes read from each broker, with the broker's rack.")
	b.sameRack = counter("kafka.reader.same_rack_bytes", "By", "Fetch response bytes read from brokers in the reader's rack.")
	b.crossRack = counter("kafka.reader.cross_rack_bytes", "By", "Fetch response bytes read from brokers outside the reader's rack (all of them when it has no rack).")
	b.reroutes = counter("kafka.reader.reroutes", "{reroute}", "Moves of a partition's reads from one broker to another, by reason.")
	b.replica = gauge("kafka.reader.partition.replica", "1", "Id of the broker the partition is read from now, with its rack.")
	b.leader = gauge("kafka.reader.partition.leader", "1", "Id of the partition's leader as last seen in metadata.")
	b.lag = gauge("kafka.reader.partition.lag", "{message}", "Messages between the next offset to fetch and the leader's high watermark.")
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("creating the kafka reader instruments: %w", err)
	}
	reg, err := meter.RegisterCallback(b.observe, b.fetched, b.sameRack, b.crossRack, b.reroutes, b.replica, b.leader, b.lag)
	if err != nil {
		return nil, fmt.Errorf("registering the kafka reader callback: %w", err)
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
		return fmt.Errorf("unregistering the kafka reader callback: %w", err)
	}
	return nil
}

func (b *Bridge) observe(_ context.Context, o metric.Observer) error {
	for _, g := range b.readers.Groups() {
		b.observeGroup(o, g)
	}
	return nil
}

func (b *Bridge) observeGroup(o metric.Observer, g readerset.Group) {
	base := []attribute.KeyValue{attribute.String("client_id", g.ClientID), attribute.String("group_id", g.GroupID)}
	with := func(kv ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(append(append([]attribute.KeyValue{}, base...), kv...)...)
	}
	s := g.Stats
	o.ObserveInt64(b.sameRack, s.SameRackBytes, with())
	o.ObserveInt64(b.crossRack, s.CrossRackBytes, with())
	for _, br := range s.Brokers {
		o.ObserveInt64(b.fetched, br.Bytes, with(attribute.Int("broker", br.ID), attribute.String("rack", br.Rack)))
	}
	for reason, n := range s.Reroutes { // every known reason, from the start
		o.ObserveInt64(b.reroutes, n, with(attribute.String("reason", string(reason))))
	}
	for _, p := range s.Partitions {
		if p.Broker < 0 {
			continue // not read now (in group mode, maybe by another member)
		}
		tp := []attribute.KeyValue{attribute.String("topic", p.Topic), attribute.Int("partition", p.Partition)}
		o.ObserveInt64(b.replica, int64(p.Broker), with(append(tp, attribute.String("rack", p.BrokerRack))...))
		if p.Leader >= 0 {
			o.ObserveInt64(b.leader, int64(p.Leader), with(tp...))
		}
		if p.Lag >= 0 {
			o.ObserveInt64(b.lag, p.Lag, with(tp...))
		}
	}
}
