package kafkaprom

import (
	"github.com/prometheus/client_golang/prometheus"
	kafka "github.com/rackfetch/kafka-go"
)

// Option configures NewCollector.
type Option func(*config)

type config struct {
	namespace  string
	registerer prometheus.Registerer
	partitions bool
	readers    []*kafka.Reader
	writers    []*kafka.Writer
}

func newConfig(opts []Option) config {
	c := config{namespace: "kafka", registerer: prometheus.DefaultRegisterer, partitions: true}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithNamespace sets the first part of every metric name ("kafka" unless
// set; "" leaves it out: reader_same_rack_bytes_total).
func WithNamespace(namespace string) Option {
	return func(c *config) { c.namespace = namespace }
}

// WithRegisterer sets where NewCollector registers the collector
// (prometheus.DefaultRegisterer unless set; nil registers it nowhere, for
// a caller registering it itself).
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(c *config) { c.registerer = reg }
}

// WithPartitionLabels turns the per-partition series on (the default) or
// off. Off, a Reader of many partitions reports its lag summed by topic
// (kafka_reader_topic_lag) and no replica or leader series.
func WithPartitionLabels(on bool) Option {
	return func(c *config) { c.partitions = on }
}

// WithReaders adds readers to the collector from the start (as Add does
// later).
func WithReaders(readers ...*kafka.Reader) Option {
	return func(c *config) { c.readers = append(c.readers, readers...) }
}

// WithWriters adds writers to the collector from the start (as AddWriter
// does later).
func WithWriters(writers ...*kafka.Writer) Option {
	return func(c *config) { c.writers = append(c.writers, writers...) }
}
