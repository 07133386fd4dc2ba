// A module of its own so that only programs using MSK IAM depend on the AWS
// SDK. It requires the root at a commit of main; in this repository a go.work
// that uses the root and this directory builds it against the working tree.
module github.com/rackfetch/kafka-go/sasl/aws_msk_iam_v2

go 1.23

require (
	github.com/aws/aws-sdk-go-v2 v1.41.2
	github.com/rackfetch/kafka-go v0.0.0-20261205184826-0252269061f9
	github.com/stretchr/testify v1.9.0
)

require (
	github.com/aws/smithy-go v1.24.1 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/pierrec/lz4/v4 v4.1.30 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
