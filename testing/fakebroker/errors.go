package fakebroker

import "github.com/rackfetch/kafka-go/protocol"

// Kafka error codes the fake answers with.
const (
	errNone                    int16 = 0
	errOffsetOutOfRange        int16 = 1
	errCorruptMessage          int16 = 2
	errUnknownTopicOrPartition int16 = 3
	errLeaderNotAvailable      int16 = 5
	errNotLeaderOrFollower     int16 = 6
	errNotCoordinator          int16 = 16
	errIllegalGeneration       int16 = 22
	errInconsistentGroupProto  int16 = 23
	errUnknownMemberID         int16 = 25
	errRebalanceInProgress     int16 = 27
	errUnsupportedSASLMech     int16 = 33
	errIllegalSASLState        int16 = 34
	errUnsupportedVersion      int16 = 35
	errTopicAlreadyExists      int16 = 36
	errInvalidPartitions       int16 = 37
	errInvalidReplication      int16 = 38
	errInvalidRequest          int16 = 42
	errSASLAuthFailed          int16 = 58
	errFencedLeaderEpoch       int16 = 74
	errUnknownLeaderEpoch      int16 = 75
	errMemberIDRequired        int16 = 79
	errUnknownTopicID          int16 = 100
)

// errorResponse builds the answer to req carrying code everywhere the
// response has an error code, or nil for a request the fake cannot answer.
func errorResponse(req protocol.Request, code int16) protocol.Response {
	switch req.(type) {
	case *protocol.ApiVersionsRequest:
		return &protocol.ApiVersionsResponse{ErrorCode: code}
	}
	return nil
}
