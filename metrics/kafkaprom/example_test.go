package kafkaprom_test

import (
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaprom"
)

// A rack-aware group Reader's routing and a Writer's counters on their own
// registry, under the application's namespace, with the lag summed by topic
// (a Reader of many partitions). The application may still call
// writer.Stats: the collector reads Writer.Totals, which resets nothing.
func Example() {
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{"localhost:9092"}, Topic: "events", GroupID: "billing", Rack: "eu-west-1a",
	})
	defer reader.Close()
	writer := &kafka.Writer{
		Addr: kafka.TCP("localhost:9092"), Topic: "invoices",
		Transport: &kafka.Transport{ClientID: "billing"}, // the client_id label
	}
	defer writer.Close()

	reg := prometheus.NewRegistry()
	collector, err := kafkaprom.NewCollector(
		kafkaprom.WithRegisterer(reg),
		kafkaprom.WithNamespace("billing"), // billing_reader_same_rack_bytes_total, ...
		kafkaprom.WithPartitionLabels(false),
		kafkaprom.WithReaders(reader),
		kafkaprom.WithWriters(writer), // billing_writer_messages_total{client_id="billing",topic="invoices"}, ...
	)
	if err != nil {
		log.Fatal(err)
	}
	defer collector.Remove(reader)
	defer collector.RemoveWriter(writer)
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}
