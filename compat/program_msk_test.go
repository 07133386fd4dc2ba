package compat

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	signer "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	kafka "github.com/rackfetch/kafka-go"
	"github.com/rackfetch/kafka-go/sasl"
	"github.com/rackfetch/kafka-go/sasl/aws_msk_iam_v2"
	"github.com/stretchr/testify/require"
)

// The ways a kafka-go program uses aws_msk_iam_v2, with only the import
// paths changed: this file must compile, and the mechanisms sign.
func TestMSKIAMProgramBuilds(t *testing.T) {
	cfg := aws.Config{Region: "us-east-1", Credentials: aws.CredentialsProviderFunc(
		func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"}, nil
		})}
	fromConfig := aws_msk_iam_v2.NewMechanism(cfg)
	literal := &aws_msk_iam_v2.Mechanism{
		Signer:      signer.NewSigner(),
		Credentials: cfg.Credentials,
		Region:      "us-east-1",
		SignTime:    time.Date(2021, 10, 14, 13, 5, 0, 0, time.UTC),
		Expiry:      time.Minute,
	}
	ctx := sasl.WithMetadata(context.Background(), &sasl.Metadata{Host: "localhost", Port: 9098})
	for _, m := range []sasl.Mechanism{fromConfig, literal} {
		_ = kafka.ReaderConfig{Dialer: &kafka.Dialer{SASLMechanism: m}}
		require.Equal(t, "AWS_MSK_IAM", m.Name())
		_, ir, err := m.Start(ctx)
		require.NoError(t, err)
		require.Contains(t, string(ir), `"x-amz-signature":`)
	}
}
