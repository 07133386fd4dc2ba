package kafkaotel

import (
	kafka "github.com/rackfetch/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// writerInstruments observe the Writers' cumulative counters
// (Writer.Totals), with the attributes client_id and topic (produced_bytes
// also rack, the leader's).
type writerInstruments struct {
	writes, batches, messages, bytes, errors, retries metric.Int64ObservableCounter
	writeTime, throttleTime                           metric.Float64ObservableCounter
	rackBytes, sameRackBytes, otherRackBytes          metric.Int64ObservableCounter
}

// newWriterInstruments creates the instruments named prefix+name on meter;
// errors collects the errors of their creation.
func newWriterInstruments(meter metric.Meter, prefix string, errs *[]error) writerInstruments {
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(prefix+name, metric.WithUnit(unit), metric.WithDescription(desc))
		*errs = append(*errs, err)
		return c
	}
	seconds := func(name, desc string) metric.Float64ObservableCounter {
		c, err := meter.Float64ObservableCounter(prefix+name, metric.WithUnit("s"), metric.WithDescription(desc))
		*errs = append(*errs, err)
		return c
	}
	return writerInstruments{
		writes:       counter("writes", "{request}", "Produce requests sent."),
		batches:      counter("batches", "{batch}", "Record batches sent, one per partition and produce request (a retried batch at each attempt)."),
		messages:     counter("messages", "{message}", "Messages sent (a retried message at each attempt)."),
		bytes:        counter("bytes", "By", "Bytes of the messages sent."),
		errors:       counter("errors", "{error}", "Failed attempts to write a batch."),
		retries:      counter("retries", "{retry}", "Attempts made again after a failed one."),
		writeTime:    seconds("write_time", "Time spent in produce requests (divided by writes: their average duration)."),
		throttleTime: seconds("throttle_time", "Throttle time brokers asked for in their produce responses."),
		rackBytes: counter("produced_bytes", "By",
			"Encoded record batch bytes written to partition leaders, with the leader's rack (each batch once, when acknowledged)."),
		sameRackBytes: counter("same_rack_bytes", "By",
			"Encoded record batch bytes written to partition leaders in the writer's rack (0 when it has no rack)."),
		otherRackBytes: counter("other_rack_bytes", "By",
			"Encoded record batch bytes written to partition leaders outside the writer's rack (0 when it has no rack)."),
	}
}

func (w writerInstruments) all() []metric.Observable {
	return []metric.Observable{w.writes, w.batches, w.messages, w.bytes, w.errors, w.retries, w.writeTime, w.throttleTime,
		w.rackBytes, w.sameRackBytes, w.otherRackBytes}
}

// AddWriter makes the bridge report w too.
func (b *Bridge) AddWriter(w *kafka.Writer) { b.writers.Add(w) }

// RemoveWriter stops reporting w.
func (b *Bridge) RemoveWriter(w *kafka.Writer) { b.writers.Remove(w) }

// observeWriters observes the totals of the Writers, summed by client ID
// and topic.
func (b *Bridge) observeWriters(o metric.Observer) {
	in := b.writerInstruments
	for _, t := range b.writers.Totals() {
		attrs := metric.WithAttributes(attribute.String("client_id", t.ClientID), attribute.String("topic", t.Topic))
		o.ObserveInt64(in.writes, t.Writes, attrs)
		o.ObserveInt64(in.batches, t.Batches, attrs)
		o.ObserveInt64(in.messages, t.Messages, attrs)
		o.ObserveInt64(in.bytes, t.Bytes, attrs)
		o.ObserveInt64(in.errors, t.Errors, attrs)
		o.ObserveInt64(in.retries, t.Retries, attrs)
		o.ObserveFloat64(in.writeTime, t.WriteTime.Seconds(), attrs)
		o.ObserveFloat64(in.throttleTime, t.WaitTime.Seconds(), attrs)
		o.ObserveInt64(in.sameRackBytes, t.SameRackBytes, attrs)
		o.ObserveInt64(in.otherRackBytes, t.OtherRackBytes, attrs)
		for rack, n := range t.RackBytes {
			o.ObserveInt64(in.rackBytes, n, metric.WithAttributes(
				attribute.String("client_id", t.ClientID), attribute.String("topic", t.Topic), attribute.String("rack", rack)))
		}
	}
}
