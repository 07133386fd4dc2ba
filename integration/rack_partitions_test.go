//go:build !rackmany

package integration

// rkPartitions is how many partitions the rack tests' topics have.
const rkPartitions = 6
