package aws_msk_iam_v2_test

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/sasl/aws_msk_iam_v2"
)

// A Reader on an MSK cluster's IAM listener (port 9098). cfg would come from
// github.com/aws/aws-sdk-go-v2/config.LoadDefaultConfig. It has no Output
// comment, so it is compiled, never run: it needs an MSK cluster.
func Example() {
	var cfg aws.Config
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{"b-1.demo.kafka.us-east-1.amazonaws.com:9098"},
		GroupID: "billing",
		Topic:   "orders",
		Dialer: &kafka.Dialer{
			Timeout:       10 * time.Second,
			TLS:           &tls.Config{MinVersion: tls.VersionTLS12},
			SASLMechanism: aws_msk_iam_v2.NewMechanism(cfg),
		},
	})
	defer r.Close()
	_, _ = r.FetchMessage(context.Background())
}
