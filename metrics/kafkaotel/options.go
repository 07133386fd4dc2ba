package kafkaotel

import (
	kafka "github.com/rackfetch/kafka-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the instrumentation scope of the bridge's meter.
const ScopeName = "github.com/rackfetch/kafka-go/metrics/kafkaotel"

// Option configures NewBridge.
type Option func(*config)

type config struct {
	namespace  string
	provider   metric.MeterProvider
	partitions bool
	readers    []*kafka.Reader
	writers    []*kafka.Writer
}

func newConfig(opts []Option) config {
	c := config{namespace: "kafka", partitions: true}
	for _, o := range opts {
		o(&c)
	}
	if c.provider == nil {
		c.provider = otel.GetMeterProvider()
	}
	return c
}

// WithNamespace sets the first part of every instrument name ("kafka"
// unless set; "" leaves it out: reader.same_rack_bytes).
func WithNamespace(namespace string) Option {
	return func(c *config) { c.namespace = namespace }
}

// WithMeterProvider sets the provider of the bridge's meter (the global
// one, otel.GetMeterProvider, unless set).
func WithMeterProvider(p metric.MeterProvider) Option {
	return func(c *config) { c.provider = p }
}

// WithPartitionAttributes turns the per-partition instruments on (the
// default) or off. Off, a Reader of many partitions reports its lag summed
// by topic (kafka.reader.topic.lag) and no replica or leader instrument.
func WithPartitionAttributes(on bool) Option {
	return func(c *config) { c.partitions = on }
}

// WithReaders adds readers to the bridge from the start (as Add does
// later).
func WithReaders(readers ...*kafka.Reader) Option {
	return func(c *config) { c.readers = append(c.readers, readers...) }
}

// WithWriters adds writers to the bridge from the start (as AddWriter does
// later).
func WithWriters(writers ...*kafka.Writer) Option {
	return func(c *config) { c.writers = append(c.writers, writers...) }
}
