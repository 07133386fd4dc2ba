//go:build rackmany

package integration

// rkPartitions with -tags rackmany: the rack tests on a topic of 60
// partitions, the way a group Reader of a larger topic reads (the
// producers' rate grows with the partitions; the bounds stay). Run so:
//
//	go test -tags rackmany -count=1 -v -run 'TestRackFaultsAcceptance$' ./integration
const rkPartitions = 60
