//go:build !rackmany

package kafka_test

// rkPartitions is how many partitions the rack tests' topics have.
const rkPartitions = 6
