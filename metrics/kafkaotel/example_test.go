package kafkaotel_test

import (
	"context"
	"log"

	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/metrics/kafkaotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// A rack-aware group Reader's routing through an SDK meter provider, with
// the lag summed by topic (a Reader of many partitions).
func Example() {
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{"localhost:9092"}, Topic: "events", GroupID: "billing", Rack: "eu-west-1a",
	})
	defer reader.Close()

	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer provider.Shutdown(context.Background())
	bridge, err := kafkaotel.NewBridge(
		kafkaotel.WithMeterProvider(provider), // otel.GetMeterProvider() unless set
		kafkaotel.WithPartitionAttributes(false),
		kafkaotel.WithReaders(reader),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer bridge.Close()
}
