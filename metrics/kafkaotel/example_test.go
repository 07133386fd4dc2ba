package kafkaotel_test

import (
	"context"
	"log"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// A rack-aware group Reader's routing and a Writer's counters through an
// SDK meter provider, with the lag summed by topic (a Reader of many
// partitions). The application may still call writer.Stats: the bridge
// reads Writer.Totals, which resets nothing.
func Example() {
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{"localhost:9092"}, Topic: "events", GroupID: "billing", Rack: "eu-west-1a",
	})
	defer reader.Close()
	writer := &kafka.Writer{
		Addr: kafka.TCP("localhost:9092"), Topic: "invoices",
		Transport: &kafka.Transport{ClientID: "billing"}, // the client_id attribute
	}
	defer writer.Close()

	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer provider.Shutdown(context.Background())
	bridge, err := kafkaotel.NewBridge(
		kafkaotel.WithMeterProvider(provider), // otel.GetMeterProvider() unless set
		kafkaotel.WithPartitionAttributes(false),
		kafkaotel.WithReaders(reader),
		kafkaotel.WithWriters(writer), // kafka.writer.messages{client_id=billing,topic=invoices}, ...
	)
	if err != nil {
		log.Fatal(err)
	}
	defer bridge.Close()
}
