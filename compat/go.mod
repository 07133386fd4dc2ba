module github.com/rackfetch/kafka-go/compat

go 1.23.0

// compat is a check run inside this repository, never installed: the MSK
// module it compares is taken from this tree.
replace github.com/rackfetch/kafka-go/sasl/aws_msk_iam_v2 => ../sasl/aws_msk_iam_v2

require (
	github.com/aws/aws-sdk-go-v2 v1.41.2
	github.com/rackfetch/kafka-go v0.0.0-20261205184826-0252269061f9
	github.com/rackfetch/kafka-go/sasl/aws_msk_iam_v2 v0.0.0-00010101000000-000000000000
	github.com/segmentio/kafka-go v0.4.51
	github.com/segmentio/kafka-go/sasl/aws_msk_iam_v2 v0.1.0
	github.com/stretchr/testify v1.9.0
)

require (
	github.com/aws/smithy-go v1.24.1 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/pierrec/lz4/v4 v4.1.30 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/xdg-go/pbkdf2 v1.0.0 // indirect
	github.com/xdg-go/scram v1.3.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	golang.org/x/text v0.23.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
