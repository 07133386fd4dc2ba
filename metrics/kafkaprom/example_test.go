package kafkaprom_test

import (
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaprom"
)

// A rack-aware group Reader's routing on its own registry, under the
// application's namespace, with the lag summed by topic (a Reader of many
// partitions).
func Example() {
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{"localhost:9092"}, Topic: "events", GroupID: "billing", Rack: "eu-west-1a",
	})
	defer reader.Close()

	reg := prometheus.NewRegistry()
	collector, err := kafkaprom.NewCollector(
		kafkaprom.WithRegisterer(reg),
		kafkaprom.WithNamespace("billing"), // billing_reader_same_rack_bytes_total, ...
		kafkaprom.WithPartitionLabels(false),
		kafkaprom.WithReaders(reader),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer collector.Remove(reader)
	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}
