module github.com/rackfetch/kafka-go

go 1.21
