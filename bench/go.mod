module github.com/rackfetch/kafka-go/bench

go 1.26.0

replace github.com/rackfetch/kafka-go => ../

require (
	github.com/rackfetch/kafka-go v0.0.0
	github.com/segmentio/kafka-go v0.4.51
	github.com/twmb/franz-go v1.22.3
	github.com/twmb/franz-go/pkg/kmsg v1.15.1
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
)
