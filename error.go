package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
)

// The errors the package returns: Kafka's error codes (Error), the
// Writer's (MessageTooLargeError, WriteErrors), a peer that is not a Kafka
// listener (PeerProtocolError); and how failures are classified and
// combined (permanentFailure, brokersError, lastFailure).

// Error is an error code returned by a Kafka broker.
//
// The constants below cover every code in the Kafka protocol up to Kafka 4.1.
// Error is a comparable value, so errors.Is(err, kafka.OffsetOutOfRange)
// matches an Error anywhere in a wrapped error chain.
//
// https://kafka.apache.org/protocol#protocol_error_codes
type Error int

// The names of codes 1-106 are the ones used by segmentio/kafka-go so that
// programs switching to this module keep compiling. Codes from 107 on follow
// the Kafka names.
const (
	Unknown                            Error = -1
	OffsetOutOfRange                   Error = 1
	InvalidMessage                     Error = 2
	UnknownTopicOrPartition            Error = 3
	InvalidMessageSize                 Error = 4
	LeaderNotAvailable                 Error = 5
	NotLeaderForPartition              Error = 6
	RequestTimedOut                    Error = 7
	BrokerNotAvailable                 Error = 8
	ReplicaNotAvailable                Error = 9
	MessageSizeTooLarge                Error = 10
	StaleControllerEpoch               Error = 11
	OffsetMetadataTooLarge             Error = 12
	NetworkException                   Error = 13
	GroupLoadInProgress                Error = 14
	GroupCoordinatorNotAvailable       Error = 15
	NotCoordinatorForGroup             Error = 16
	InvalidTopic                       Error = 17
	RecordListTooLarge                 Error = 18
	NotEnoughReplicas                  Error = 19
	NotEnoughReplicasAfterAppend       Error = 20
	InvalidRequiredAcks                Error = 21
	IllegalGeneration                  Error = 22
	InconsistentGroupProtocol          Error = 23
	InvalidGroupId                     Error = 24
	UnknownMemberId                    Error = 25
	InvalidSessionTimeout              Error = 26
	RebalanceInProgress                Error = 27
	InvalidCommitOffsetSize            Error = 28
	TopicAuthorizationFailed           Error = 29
	GroupAuthorizationFailed           Error = 30
	ClusterAuthorizationFailed         Error = 31
	InvalidTimestamp                   Error = 32
	UnsupportedSASLMechanism           Error = 33
	IllegalSASLState                   Error = 34
	UnsupportedVersion                 Error = 35
	TopicAlreadyExists                 Error = 36
	InvalidPartitionNumber             Error = 37
	InvalidReplicationFactor           Error = 38
	InvalidReplicaAssignment           Error = 39
	InvalidConfiguration               Error = 40
	NotController                      Error = 41
	InvalidRequest                     Error = 42
	UnsupportedForMessageFormat        Error = 43
	PolicyViolation                    Error = 44
	OutOfOrderSequenceNumber           Error = 45
	DuplicateSequenceNumber            Error = 46
	InvalidProducerEpoch               Error = 47
	InvalidTransactionState            Error = 48
	InvalidProducerIDMapping           Error = 49
	InvalidTransactionTimeout          Error = 50
	ConcurrentTransactions             Error = 51
	TransactionCoordinatorFenced       Error = 52
	TransactionalIDAuthorizationFailed Error = 53
	SecurityDisabled                   Error = 54
	BrokerAuthorizationFailed          Error = 55
	KafkaStorageError                  Error = 56
	LogDirNotFound                     Error = 57
	SASLAuthenticationFailed           Error = 58
	UnknownProducerId                  Error = 59
	ReassignmentInProgress             Error = 60
	DelegationTokenAuthDisabled        Error = 61
	DelegationTokenNotFound            Error = 62
	DelegationTokenOwnerMismatch       Error = 63
	DelegationTokenRequestNotAllowed   Error = 64
	DelegationTokenAuthorizationFailed Error = 65
	DelegationTokenExpired             Error = 66
	InvalidPrincipalType               Error = 67
	NonEmptyGroup                      Error = 68
	GroupIdNotFound                    Error = 69
	FetchSessionIDNotFound             Error = 70
	InvalidFetchSessionEpoch           Error = 71
	ListenerNotFound                   Error = 72
	TopicDeletionDisabled              Error = 73
	FencedLeaderEpoch                  Error = 74
	UnknownLeaderEpoch                 Error = 75
	UnsupportedCompressionType         Error = 76
	StaleBrokerEpoch                   Error = 77
	OffsetNotAvailable                 Error = 78
	MemberIDRequired                   Error = 79
	PreferredLeaderNotAvailable        Error = 80
	GroupMaxSizeReached                Error = 81
	FencedInstanceID                   Error = 82
	EligibleLeadersNotAvailable        Error = 83
	ElectionNotNeeded                  Error = 84
	NoReassignmentInProgress           Error = 85
	GroupSubscribedToTopic             Error = 86
	InvalidRecord                      Error = 87
	UnstableOffsetCommit               Error = 88
	ThrottlingQuotaExceeded            Error = 89
	ProducerFenced                     Error = 90
	ResourceNotFound                   Error = 91
	DuplicateResource                  Error = 92
	UnacceptableCredential             Error = 93
	InconsistentVoterSet               Error = 94
	InvalidUpdateVersion               Error = 95
	FeatureUpdateFailed                Error = 96
	PrincipalDeserializationFailure    Error = 97
	SnapshotNotFound                   Error = 98
	PositionOutOfRange                 Error = 99
	UnknownTopicID                     Error = 100
	DuplicateBrokerRegistration        Error = 101
	BrokerIDNotRegistered              Error = 102
	InconsistentTopicID                Error = 103
	InconsistentClusterID              Error = 104
	TransactionalIDNotFound            Error = 105
	FetchSessionTopicIDError           Error = 106
	IneligibleReplica                  Error = 107
	NewLeaderElected                   Error = 108
	OffsetMovedToTieredStorage         Error = 109
	FencedMemberEpoch                  Error = 110
	UnreleasedInstanceID               Error = 111
	UnsupportedAssignor                Error = 112
	StaleMemberEpoch                   Error = 113
	MismatchedEndpointType             Error = 114
	UnsupportedEndpointType            Error = 115
	UnknownControllerID                Error = 116
	UnknownSubscriptionID              Error = 117
	TelemetryTooLarge                  Error = 118
	InvalidRegistration                Error = 119
	TransactionAbortable               Error = 120
	InvalidRecordState                 Error = 121
	ShareSessionNotFound               Error = 122
	InvalidShareSessionEpoch           Error = 123
	FencedStateEpoch                   Error = 124
	InvalidVoterKey                    Error = 125
	DuplicateVoter                     Error = 126
	VoterNotFound                      Error = 127
	InvalidRegularExpression           Error = 128
	RebootstrapRequired                Error = 129
	StreamsInvalidTopology             Error = 130
	StreamsInvalidTopologyEpoch        Error = 131
	StreamsTopologyFenced              Error = 132
	ShareSessionLimitReached           Error = 133
)

// Current Kafka names for codes that kafka-go spells after their older
// meaning. They are the same values, so either name matches in a switch or
// with errors.Is (but not both in one switch).
const (
	// NotLeaderOrFollower is code 6: Kafka 2.6 renamed it because followers
	// also return it for requests aimed at any replica.
	NotLeaderOrFollower = NotLeaderForPartition
	// OperationNotAttempted is code 55: brokers send it for the parts of a
	// batched request they skipped after an earlier part failed.
	OperationNotAttempted = BrokerAuthorizationFailed
)

// errorInfo describes one code. retriable mirrors whether Kafka's Java client
// maps the code to a subclass of RetriableException.
type errorInfo struct {
	title       string
	description string
	retriable   bool
}

var errorTable = map[Error]errorInfo{
	Unknown:                            {"Unknown Server Error", "the broker hit an unexpected error while handling the request", false},
	OffsetOutOfRange:                   {"Offset Out Of Range", "the offset asked for is outside the range the partition currently holds", false},
	InvalidMessage:                     {"Invalid Message", "a record failed its CRC check, has an invalid size, or is otherwise corrupt", true},
	UnknownTopicOrPartition:            {"Unknown Topic Or Partition", "the broker does not host this topic or partition", true},
	InvalidMessageSize:                 {"Invalid Message Size", "the fetch size in the request is not valid", false},
	LeaderNotAvailable:                 {"Leader Not Available", "the partition has no leader right now, usually because an election is in progress", true},
	NotLeaderForPartition:              {"Not Leader Or Follower", "the broker is not the leader (or not a replica) of the partition; client metadata is probably stale", true},
	RequestTimedOut:                    {"Request Timed Out", "the broker did not complete the request within its timeout", true},
	BrokerNotAvailable:                 {"Broker Not Available", "the broker is not available", false},
	ReplicaNotAvailable:                {"Replica Not Available", "the replica expected on this broker is not available for the partition", true},
	MessageSizeTooLarge:                {"Message Size Too Large", "a message is larger than the broker or topic allows", false},
	StaleControllerEpoch:               {"Stale Controller Epoch", "the controller has moved to another broker", false},
	OffsetMetadataTooLarge:             {"Offset Metadata Too Large", "the metadata string attached to the committed offset is too long", false},
	NetworkException:                   {"Network Exception", "the connection was closed before a response arrived", true},
	GroupLoadInProgress:                {"Group Load In Progress", "the coordinator is still loading its state and cannot serve the request yet", true},
	GroupCoordinatorNotAvailable:       {"Group Coordinator Not Available", "the coordinator is not available or not yet elected", true},
	NotCoordinatorForGroup:             {"Not Coordinator For Group", "the broker is not the coordinator for this group or transactional id", true},
	InvalidTopic:                       {"Invalid Topic", "the topic name is not legal, or the topic is internal and cannot be written to", false},
	RecordListTooLarge:                 {"Record List Too Large", "a record batch is larger than the configured segment size", false},
	NotEnoughReplicas:                  {"Not Enough Replicas", "fewer replicas are in sync than min.insync.replicas requires, so the write was rejected", true},
	NotEnoughReplicasAfterAppend:       {"Not Enough Replicas After Append", "the write reached the log but fewer replicas than required acknowledged it", true},
	InvalidRequiredAcks:                {"Invalid Required Acks", "the produce request asked for an acks value the broker does not accept", false},
	IllegalGeneration:                  {"Illegal Generation", "the group generation id in the request is not the current one", false},
	InconsistentGroupProtocol:          {"Inconsistent Group Protocol", "the member's protocol type or protocols do not match the rest of the group", false},
	InvalidGroupId:                     {"Invalid Group ID", "the group id is empty or otherwise not valid", false},
	UnknownMemberId:                    {"Unknown Member ID", "the coordinator does not know this member id", false},
	InvalidSessionTimeout:              {"Invalid Session Timeout", "the session timeout is outside the range the broker allows", false},
	RebalanceInProgress:                {"Rebalance In Progress", "the group is rebalancing and the member has to rejoin", false},
	InvalidCommitOffsetSize:            {"Invalid Commit Offset Size", "the size of the offset commit data is not valid", false},
	TopicAuthorizationFailed:           {"Topic Authorization Failed", "the client is not authorized to access the topic", false},
	GroupAuthorizationFailed:           {"Group Authorization Failed", "the client is not authorized to access the group", false},
	ClusterAuthorizationFailed:         {"Cluster Authorization Failed", "the client is not authorized for this cluster operation", false},
	InvalidTimestamp:                   {"Invalid Timestamp", "a record timestamp is outside the accepted range", false},
	UnsupportedSASLMechanism:           {"Unsupported SASL Mechanism", "the broker does not offer the requested SASL mechanism", false},
	IllegalSASLState:                   {"Illegal SASL State", "the request is not allowed at this point of the SASL exchange", false},
	UnsupportedVersion:                 {"Unsupported Version", "the broker does not support this API version", false},
	TopicAlreadyExists:                 {"Topic Already Exists", "a topic with this name already exists", false},
	InvalidPartitionNumber:             {"Invalid Partition Number", "the number of partitions is not valid", false},
	InvalidReplicationFactor:           {"Invalid Replication Factor", "the replication factor is below 1 or above the number of brokers", false},
	InvalidReplicaAssignment:           {"Invalid Replica Assignment", "the replica assignment is not valid", false},
	InvalidConfiguration:               {"Invalid Configuration", "a configuration value is not valid", false},
	NotController:                      {"Not Controller", "the broker is not the active controller", true},
	InvalidRequest:                     {"Invalid Request", "the broker could not make sense of the request; it may be malformed or meant for another broker version", false},
	UnsupportedForMessageFormat:        {"Unsupported For Message Format", "the topic's message format version does not support this request", false},
	PolicyViolation:                    {"Policy Violation", "the request breaks a policy configured on the broker", false},
	OutOfOrderSequenceNumber:           {"Out Of Order Sequence Number", "the broker received a producer sequence number out of order", false},
	DuplicateSequenceNumber:            {"Duplicate Sequence Number", "the broker already received this producer sequence number", false},
	InvalidProducerEpoch:               {"Invalid Producer Epoch", "the producer epoch is older than the current one", false},
	InvalidTransactionState:            {"Invalid Transaction State", "the transactional operation is not allowed in the transaction's current state", false},
	InvalidProducerIDMapping:           {"Invalid Producer ID Mapping", "the producer id is not the one assigned to this transactional id", false},
	InvalidTransactionTimeout:          {"Invalid Transaction Timeout", "the transaction timeout exceeds the broker's transaction.max.timeout.ms", false},
	ConcurrentTransactions:             {"Concurrent Transactions", "another operation on the same transaction is still in progress", true},
	TransactionCoordinatorFenced:       {"Transaction Coordinator Fenced", "the transaction coordinator that sent the marker is no longer current", false},
	TransactionalIDAuthorizationFailed: {"Transactional ID Authorization Failed", "the client is not authorized to use this transactional id", false},
	SecurityDisabled:                   {"Security Disabled", "security features are turned off on the broker", false},
	BrokerAuthorizationFailed:          {"Operation Not Attempted", "the broker skipped this operation because another part of the batched request failed", false},
	KafkaStorageError:                  {"Kafka Storage Error", "the broker hit a disk error while accessing the log", true},
	LogDirNotFound:                     {"Log Dir Not Found", "the log directory named in the request is not configured on the broker", false},
	SASLAuthenticationFailed:           {"SASL Authentication Failed", "the broker rejected the SASL credentials", false},
	UnknownProducerId:                  {"Unknown Producer ID", "the broker has no state for this producer id, for example after its records were deleted", false},
	ReassignmentInProgress:             {"Reassignment In Progress", "a partition reassignment is in progress", false},
	DelegationTokenAuthDisabled:        {"Delegation Token Auth Disabled", "delegation tokens are not enabled on the broker", false},
	DelegationTokenNotFound:            {"Delegation Token Not Found", "the broker has no such delegation token", false},
	DelegationTokenOwnerMismatch:       {"Delegation Token Owner Mismatch", "the principal is not the owner or a renewer of the token", false},
	DelegationTokenRequestNotAllowed:   {"Delegation Token Request Not Allowed", "delegation token requests are refused on plaintext or one-way TLS listeners and on token-authenticated connections", false},
	DelegationTokenAuthorizationFailed: {"Delegation Token Authorization Failed", "the client is not authorized for this delegation token operation", false},
	DelegationTokenExpired:             {"Delegation Token Expired", "the delegation token has expired", false},
	InvalidPrincipalType:               {"Invalid Principal Type", "the principal type is not supported", false},
	NonEmptyGroup:                      {"Non Empty Group", "the group still has members", false},
	GroupIdNotFound:                    {"Group ID Not Found", "no group with this id exists", false},
	FetchSessionIDNotFound:             {"Fetch Session ID Not Found", "the broker does not know the fetch session id", true},
	InvalidFetchSessionEpoch:           {"Invalid Fetch Session Epoch", "the fetch session epoch does not match the broker's", true},
	ListenerNotFound:                   {"Listener Not Found", "the partition leader has no listener matching the one the metadata request came in on", true},
	TopicDeletionDisabled:              {"Topic Deletion Disabled", "deleting topics is turned off on the broker", false},
	FencedLeaderEpoch:                  {"Fenced Leader Epoch", "the leader epoch in the request is older than the broker's", true},
	UnknownLeaderEpoch:                 {"Unknown Leader Epoch", "the leader epoch in the request is newer than the broker's", true},
	UnsupportedCompressionType:         {"Unsupported Compression Type", "the client cannot handle the compression codec used by the partition", false},
	StaleBrokerEpoch:                   {"Stale Broker Epoch", "the broker epoch in the request is not the current one", false},
	OffsetNotAvailable:                 {"Offset Not Available", "the new leader's high watermark has not caught up yet, so the offset cannot be served", true},
	MemberIDRequired:                   {"Member ID Required", "the member must rejoin with the member id the coordinator just assigned", false},
	PreferredLeaderNotAvailable:        {"Preferred Leader Not Available", "the preferred leader of the partition is not available", true},
	GroupMaxSizeReached:                {"Group Max Size Reached", "the group already has the maximum number of members", false},
	FencedInstanceID:                   {"Fenced Instance ID", "another member with the same group.instance.id has replaced this static member", false},
	EligibleLeadersNotAvailable:        {"Eligible Leaders Not Available", "no eligible leader is available for the partition", true},
	ElectionNotNeeded:                  {"Election Not Needed", "the partition already has its preferred leader, so no election was run", true},
	NoReassignmentInProgress:           {"No Reassignment In Progress", "there is no partition reassignment to cancel", false},
	GroupSubscribedToTopic:             {"Group Subscribed To Topic", "offsets of a topic cannot be deleted while the group is subscribed to it", false},
	InvalidRecord:                      {"Invalid Record", "the broker rejected a record that failed its validation", false},
	UnstableOffsetCommit:               {"Unstable Offset Commit", "offsets are pending in an open transaction and cannot be read yet", true},
	ThrottlingQuotaExceeded:            {"Throttling Quota Exceeded", "the request went over the client's throttling quota", true},
	ProducerFenced:                     {"Producer Fenced", "a newer producer with the same transactional id has taken over", false},
	ResourceNotFound:                   {"Resource Not Found", "the request refers to a resource that does not exist", false},
	DuplicateResource:                  {"Duplicate Resource", "the request names the same resource more than once", false},
	UnacceptableCredential:             {"Unacceptable Credential", "the requested credential does not meet the broker's requirements", false},
	InconsistentVoterSet:               {"Inconsistent Voter Set", "the sender or receiver of a voter-only request is not an expected voter", false},
	InvalidUpdateVersion:               {"Invalid Update Version", "the update version is not valid", false},
	FeatureUpdateFailed:                {"Feature Update Failed", "the finalized features could not be updated because of a server error", false},
	PrincipalDeserializationFailure:    {"Principal Deserialization Failure", "a forwarded request's principal could not be deserialized; the cluster's security setup is inconsistent", false},
	SnapshotNotFound:                   {"Snapshot Not Found", "the requested snapshot does not exist", false},
	PositionOutOfRange:                 {"Position Out Of Range", "the position is negative or past the end of the snapshot", false},
	UnknownTopicID:                     {"Unknown Topic ID", "the broker does not host a topic with this id", true},
	DuplicateBrokerRegistration:        {"Duplicate Broker Registration", "another broker already registered with this id", false},
	BrokerIDNotRegistered:              {"Broker ID Not Registered", "no broker registered with this id", false},
	InconsistentTopicID:                {"Inconsistent Topic ID", "the topic id in the request does not match the one in the log", true},
	InconsistentClusterID:              {"Inconsistent Cluster ID", "the cluster id in the request does not match the broker's", false},
	TransactionalIDNotFound:            {"Transactional ID Not Found", "no transaction with this transactional id exists", false},
	FetchSessionTopicIDError:           {"Fetch Session Topic ID Error", "the fetch session mixed requests with and without topic ids", true},
	IneligibleReplica:                  {"Ineligible Replica", "the proposed ISR contains a replica that is not eligible", false},
	NewLeaderElected:                   {"New Leader Elected", "the partition state was updated but the leader changed meanwhile", false},
	OffsetMovedToTieredStorage:         {"Offset Moved To Tiered Storage", "the offset is no longer on local disk and lives in tiered storage", false},
	FencedMemberEpoch:                  {"Fenced Member Epoch", "the coordinator fenced the member epoch; the member must give up its partitions and rejoin", false},
	UnreleasedInstanceID:               {"Unreleased Instance ID", "another member of the group still holds this instance id", false},
	UnsupportedAssignor:                {"Unsupported Assignor", "the group does not support the requested assignor or its version", false},
	StaleMemberEpoch:                   {"Stale Member Epoch", "the member epoch is outdated; retry once the heartbeat returns the new epoch", false},
	MismatchedEndpointType:             {"Mismatched Endpoint Type", "the request reached an endpoint of the wrong kind (broker vs controller)", false},
	UnsupportedEndpointType:            {"Unsupported Endpoint Type", "this kind of endpoint is not supported yet", false},
	UnknownControllerID:                {"Unknown Controller ID", "no controller with this id is known", false},
	UnknownSubscriptionID:              {"Unknown Subscription ID", "the telemetry subscription id is unknown or outdated", false},
	TelemetryTooLarge:                  {"Telemetry Too Large", "the pushed telemetry is larger than the broker accepts", false},
	InvalidRegistration:                {"Invalid Registration", "the controller considers the broker registration invalid", false},
	TransactionAbortable:               {"Transaction Abortable", "the transaction hit a server error; abort it to keep using the transactional id", false},
	InvalidRecordState:                 {"Invalid Record State", "the record is not in a state that allows this acknowledgement", false},
	ShareSessionNotFound:               {"Share Session Not Found", "the broker does not know the share session", true},
	InvalidShareSessionEpoch:           {"Invalid Share Session Epoch", "the share session epoch does not match the broker's", true},
	FencedStateEpoch:                   {"Fenced State Epoch", "the share-group state epoch in the request is not the current one", false},
	InvalidVoterKey:                    {"Invalid Voter Key", "the voter key does not match the receiving replica", false},
	DuplicateVoter:                     {"Duplicate Voter", "the voter is already in the voter set", false},
	VoterNotFound:                      {"Voter Not Found", "the voter is not in the voter set", false},
	InvalidRegularExpression:           {"Invalid Regular Expression", "the subscription regular expression is not valid", false},
	RebootstrapRequired:                {"Rebootstrap Required", "the client's metadata is too stale; it has to bootstrap again", false},
	StreamsInvalidTopology:             {"Streams Invalid Topology", "the streams topology is not valid", false},
	StreamsInvalidTopologyEpoch:        {"Streams Invalid Topology Epoch", "the streams topology epoch is not valid", false},
	StreamsTopologyFenced:              {"Streams Topology Fenced", "the streams topology epoch is outdated", false},
	ShareSessionLimitReached:           {"Share Session Limit Reached", "the broker already has as many share sessions as it allows", true},
}

// Error satisfies the error interface: "[code] Title: description".
func (e Error) Error() string {
	return fmt.Sprintf("[%d] %s: %s", int(e), e.Title(), e.Description())
}

// Timeout reports whether the error was caused by a timeout.
func (e Error) Timeout() bool {
	return e == RequestTimedOut
}

// Temporary reports whether retrying the operation later may succeed. It
// follows Kafka's own classification of retriable errors.
func (e Error) Temporary() bool {
	return errorTable[e].retriable
}

// Title returns a short human readable name for the error.
func (e Error) Title() string {
	if info, ok := errorTable[e]; ok {
		return info.title
	}
	if e == 0 {
		return "No Error"
	}
	return "Unknown Error Code"
}

// Description returns a human readable explanation of the error.
func (e Error) Description() string {
	if info, ok := errorTable[e]; ok {
		return info.description
	}
	if e == 0 {
		return "the request succeeded"
	}
	// A newer broker may send codes this table does not know yet.
	return "the broker returned error code " + strconv.Itoa(int(e)) + ", which this client does not know"
}

// errorFromCode turns a protocol error code into an error; 0 means success.
func errorFromCode(code int16) error {
	if code == 0 {
		return nil
	}
	return Error(code)
}

// makeError is errorFromCode plus the optional ErrorMessage a response
// carries next to the code. The Error stays in the chain for errors.Is/As.
func makeError(code int16, message string) error {
	if code == 0 {
		return nil
	}
	if message == "" {
		return Error(code)
	}
	return fmt.Errorf("%w: %s", Error(code), message)
}

// MessageTooLargeError is returned when a message is too large to fit
// within the allowed size: larger than the Writer's BatchBytes (the whole
// WriteMessages call then fails, and Remaining holds the other messages to
// write again), or refused by the broker as larger than the topic's
// max.message.bytes (then it is the message's entry in WriteErrors, or the
// error given to Completion, and Remaining is empty).
//
// errors.Is(err, MessageSizeTooLarge) holds for it.
type MessageTooLargeError struct {
	Message   Message
	Remaining []Message
}

func messageTooLarge(msgs []Message, i int) MessageTooLargeError {
	remain := make([]Message, 0, len(msgs)-1)
	remain = append(remain, msgs[:i]...)
	remain = append(remain, msgs[i+1:]...)
	return MessageTooLargeError{Message: msgs[i], Remaining: remain}
}

func (e MessageTooLargeError) Error() string { return MessageSizeTooLarge.Error() }

func (e MessageTooLargeError) Unwrap() error { return MessageSizeTooLarge }

// WriteErrors is returned by kafka.(*Writer).WriteMessages when the writer
// is not configured to write messages asynchronously. WriteErrors values
// contain a list of errors where each entry matches the position of a
// message in the WriteMessages call; nil entries are messages that were
// written. The program can determine the status of each message by looping
// over the error:
//
//	switch err := w.WriteMessages(ctx, msgs...).(type) {
//	case nil:
//	case kafka.WriteErrors:
//		for i := range msgs {
//			if err[i] != nil {
//				// handle the error writing msgs[i]
//			}
//		}
//	default:
//		// handle other errors
//	}
type WriteErrors []error

// Count counts the number of non-nil errors in err.
func (err WriteErrors) Count() int {
	n := 0
	for _, e := range err {
		if e != nil {
			n++
		}
	}
	return n
}

// Unwrap returns the non-nil errors, so that errors.Is and errors.As look
// into them: errors.Is(err, kafka.NotLeaderForPartition) holds when some
// message failed with it.
func (err WriteErrors) Unwrap() []error {
	var out []error
	for _, e := range err {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

func (err WriteErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kafka write errors (%d/%d)", err.Count(), len(err))
	// Many messages usually fail for the same reason: list each distinct
	// error once.
	seen := map[string]bool{}
	sep := ": "
	for _, e := range err {
		if e == nil {
			continue
		}
		s := e.Error()
		if seen[s] {
			continue
		}
		seen[s] = true
		b.WriteString(sep)
		b.WriteString(s)
		sep = "; "
	}
	return b.String()
}

// brokersError is the failure of a request that every broker tried
// failed: each broker's own error, in the order tried, so that errors.Is
// and errors.As reach every cause and the message names every broker.
type brokersError struct {
	tried int
	errs  []error
}

func (e *brokersError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no broker answered among %d tried", e.tried)
	sep := ": "
	for _, err := range e.errs {
		b.WriteString(sep)
		b.WriteString(err.Error())
		sep = "; "
	}
	return b.String()
}

func (e *brokersError) Unwrap() []error { return e.errs }

// add records one broker's failure; the same failure twice (a broker
// tried again) is kept once.
func (e *brokersError) add(err error) {
	for _, x := range e.errs {
		if x.Error() == err.Error() {
			return
		}
	}
	e.errs = append(e.errs, err)
}

// permanentFailure reports a failure to reach the cluster that no retry
// fixes: the credentials or the SASL mechanism, the TLS setup, an address
// that names no host or no Kafka listener. When every broker tried failed,
// it holds only if each one's failure is permanent: one broker down among
// misconfigured ones may come back.
func permanentFailure(err error) bool {
	var be *brokersError
	if errors.As(err, &be) {
		for _, e := range be.errs {
			if !permanentFailure(e) {
				return false
			}
		}
		return len(be.errs) > 0
	}
	var kerr Error
	if errors.As(err, &kerr) {
		switch kerr {
		case SASLAuthenticationFailed, UnsupportedSASLMechanism, IllegalSASLState:
			return true
		}
		return false
	}
	var (
		peerErr *PeerProtocolError
		dnsErr  *net.DNSError
		certErr *tls.CertificateVerificationError
		hostErr x509.HostnameError
		authErr x509.UnknownAuthorityError
		recErr  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &dnsErr):
		return dnsErr.IsNotFound
	case errors.As(err, &peerErr), errors.As(err, &certErr), errors.As(err, &hostErr),
		errors.As(err, &authErr), errors.As(err, &recErr):
		return true
	}
	return false
}

// lastFailure keeps the latest failure a client retried without
// returning it, so that a caller whose context ends meanwhile learns why
// nothing came (withCause).
type lastFailure struct{ v atomic.Pointer[error] }

func (l *lastFailure) set(err error) { l.v.Store(&err) }

func (l *lastFailure) clear() { l.v.Store(nil) }

// withCause adds the latest failure to err when err is the caller's
// context ending: errors.Is(err, context.DeadlineExceeded) still holds,
// and errors.Is/As reach the failure too.
func (l *lastFailure) withCause(err error) error {
	p := l.v.Load()
	if p == nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		return err
	}
	return fmt.Errorf("%w (while retrying: %w)", err, *p)
}

// PeerProtocolError reports a peer that does not speak what the client
// speaks: an HTTP or a TLS server where the client expected Kafka in
// plaintext, or a plaintext port where the client speaks TLS. No retry
// fixes it: the address or the Dialer's TLS setting is wrong.
type PeerProtocolError struct {
	// Addr is the address dialed.
	Addr string
	// Peer is what seems to answer there: "HTTP", "TLS" or "plaintext".
	Peer string
	// Err is what the client saw.
	Err error
}

func (e *PeerProtocolError) Error() string {
	switch e.Peer {
	case "HTTP":
		return fmt.Sprintf("%s answered in HTTP, not in the Kafka protocol: not a Kafka listener (%v)", e.Addr, e.Err)
	case "TLS":
		return fmt.Sprintf("%s answered in TLS: a TLS listener, for a client without TLS (set Dialer.TLS or Transport.TLS) (%v)", e.Addr, e.Err)
	case "plaintext":
		return fmt.Sprintf("%s closed the connection during the TLS handshake without a TLS answer: a plaintext listener? (%v)", e.Addr, e.Err)
	}
	return fmt.Sprintf("%s answered in %s, not in the Kafka protocol (%v)", e.Addr, e.Peer, e.Err)
}

func (e *PeerProtocolError) Unwrap() error { return e.Err }
