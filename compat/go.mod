module github.com/rackfetch/kafka-go/compat

go 1.23.0

require (
	github.com/rackfetch/kafka-go v0.0.0-20261203233518-72ac02f1b428
	github.com/segmentio/kafka-go v0.4.51
)

require (
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/pierrec/lz4/v4 v4.1.30 // indirect
	github.com/xdg-go/pbkdf2 v1.0.0 // indirect
	github.com/xdg-go/scram v1.3.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	golang.org/x/text v0.23.0 // indirect
)
