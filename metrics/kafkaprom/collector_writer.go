package kafkaprom

import (
	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/rackfetch/kafka-go"
)

// writerDescs are the series of the Writers' cumulative counters
// (Writer.Totals), labelled client_id and topic (produced_bytes_total
// also rack, the leader's).
type writerDescs struct {
	writes, batches, messages, bytes, errors, retries, writeSeconds, throttleSeconds *prometheus.Desc
	rackBytes, sameRackBytes, otherRackBytes                                         *prometheus.Desc
}

func newWriterDescs(namespace string) writerDescs {
	labels := []string{"client_id", "topic"}
	desc := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "writer", name), help, append(append([]string{}, labels...), extra...), nil)
	}
	return writerDescs{
		writes:          desc("writes_total", "Produce requests sent."),
		batches:         desc("batches_total", "Record batches sent, one per partition and produce request (a retried batch at each attempt)."),
		messages:        desc("messages_total", "Messages sent (a retried message at each attempt)."),
		bytes:           desc("bytes_total", "Bytes of the messages sent."),
		errors:          desc("errors_total", "Failed attempts to write a batch."),
		retries:         desc("retries_total", "Attempts made again after a failed one."),
		writeSeconds:    desc("write_seconds_total", "Time spent in produce requests (divided by writes_total: their average duration)."),
		throttleSeconds: desc("throttle_seconds_total", "Throttle time brokers asked for in their produce responses."),
		rackBytes: desc("produced_bytes_total",
			"Encoded record batch bytes written to partition leaders, labelled with the leader's rack (each batch once, when acknowledged).", "rack"),
		sameRackBytes: desc("same_rack_bytes_total",
			"Encoded record batch bytes written to partition leaders in the writer's rack (0 when it has no rack)."),
		otherRackBytes: desc("other_rack_bytes_total",
			"Encoded record batch bytes written to partition leaders outside the writer's rack (0 when it has no rack)."),
	}
}

func (d writerDescs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.writes, d.batches, d.messages, d.bytes, d.errors, d.retries, d.writeSeconds, d.throttleSeconds,
		d.rackBytes, d.sameRackBytes, d.otherRackBytes}
}

// AddWriter makes the collector report w too.
func (c *Collector) AddWriter(w *kafka.Writer) { c.writers.Add(w) }

// RemoveWriter stops reporting w; its series leave the next scrape.
func (c *Collector) RemoveWriter(w *kafka.Writer) { c.writers.Remove(w) }

// collectWriters reports the totals of the Writers, summed by client ID and
// topic.
func (c *Collector) collectWriters(ch chan<- prometheus.Metric) {
	d := c.writerDescs
	for _, t := range c.writers.Totals() {
		counter := func(desc *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, t.ClientID, t.Topic)
		}
		counter(d.writes, float64(t.Writes))
		counter(d.batches, float64(t.Batches))
		counter(d.messages, float64(t.Messages))
		counter(d.bytes, float64(t.Bytes))
		counter(d.errors, float64(t.Errors))
		counter(d.retries, float64(t.Retries))
		counter(d.writeSeconds, t.WriteTime.Seconds())
		counter(d.throttleSeconds, t.WaitTime.Seconds())
		counter(d.sameRackBytes, float64(t.SameRackBytes))
		counter(d.otherRackBytes, float64(t.OtherRackBytes))
		for rack, n := range t.RackBytes {
			ch <- prometheus.MustNewConstMetric(d.rackBytes, prometheus.CounterValue, float64(n), t.ClientID, t.Topic, rack)
		}
	}
}
