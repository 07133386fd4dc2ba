package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/rackfetch/kafka-go/protocol"
)

// MetadataRequest is the input of Client.Metadata.
type MetadataRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// Topics are the topics to describe. nil asks for every topic of the
	// cluster; an empty, non-nil slice for none (only the brokers).
	Topics []string
}

// MetadataResponse is the output of Client.Metadata.
type MetadataResponse struct {
	// Throttle is how long the broker throttled the request (quotas).
	Throttle time.Duration

	// ClusterID identifies the cluster.
	ClusterID string

	// Controller is the cluster's controller, or the zero Broker when the
	// broker named none that it knows.
	Controller Broker

	// Brokers are the brokers of the cluster, as the answering broker sees
	// them.
	Brokers []Broker

	// Topics describe the topics asked for. A topic the broker could not
	// describe (e.g. it does not exist) carries its error in Topic.Error.
	Topics []Topic
}

// Metadata describes the brokers of a cluster and the partitions of topics:
// their leaders, replicas and in-sync replicas. Topics are never created by
// this request, whatever the brokers' auto-creation setting.
func (c *Client) Metadata(ctx context.Context, req *MetadataRequest) (*MetadataResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).Metadata: nil request")
	}
	addr, err := c.address(req.Addr)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).Metadata: %w", err)
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()

	cl, err := c.metadata(ctx, addr, req.Topics)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).Metadata: %w", err)
	}
	m := cl.metadata
	res := &MetadataResponse{
		Throttle:  clientThrottle(m.ThrottleTimeMs),
		ClusterID: deref(m.ClusterID),
		Brokers:   make([]Broker, len(m.Brokers)),
		Topics:    make([]Topic, len(m.Topics)),
	}
	for i, b := range m.Brokers {
		res.Brokers[i] = makeBroker(b)
	}
	if b, ok := cl.brokers[m.ControllerID]; ok {
		res.Controller = b
	}
	for i := range m.Topics {
		t := &m.Topics[i]
		res.Topics[i] = Topic{
			Name:       t.Name,
			Internal:   t.IsInternal,
			Partitions: makePartitions(m, t),
			Error:      errorFromCode(t.ErrorCode),
		}
	}
	return res, nil
}

// ApiVersionsRequest is the input of Client.ApiVersions.
type ApiVersionsRequest struct {
	// Addr is the broker to ask; nil means the Client's Addr.
	Addr net.Addr
}

// ApiVersionsResponse is the output of Client.ApiVersions.
type ApiVersionsResponse struct {
	// Error is the broker's error, if it refused the request.
	Error error

	// ApiKeys lists every API the broker supports, with its versions.
	ApiKeys []ApiVersionsResponseApiKey
}

// ApiVersionsResponseApiKey is the range of versions a broker supports for
// one API.
type ApiVersionsResponseApiKey struct {
	// ApiKey is the API's number in the Kafka protocol.
	ApiKey int

	// ApiName is the API's name in the Kafka protocol (e.g. "Fetch"), or
	// the number in decimal for APIs this package does not know.
	ApiName string

	// MinVersion and MaxVersion bound the versions the broker supports.
	MinVersion int
	MaxVersion int
}

// ApiVersions asks a broker which versions of each API it supports.
func (c *Client) ApiVersions(ctx context.Context, req *ApiVersionsRequest) (*ApiVersionsResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).ApiVersions: nil request")
	}
	r, err := responseAs[*protocol.ApiVersionsResponse](c.sendToAny(ctx, req.Addr, &protocol.ApiVersionsRequest{
		ClientSoftwareName:    clientSoftwareName, // v3+
		ClientSoftwareVersion: libraryVersion,     // v3+
	}))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).ApiVersions: %w", err)
	}
	res := &ApiVersionsResponse{Error: errorFromCode(r.ErrorCode)}
	if len(r.ApiKeys) > 0 {
		res.ApiKeys = make([]ApiVersionsResponseApiKey, len(r.ApiKeys))
		for i, k := range r.ApiKeys {
			res.ApiKeys[i] = ApiVersionsResponseApiKey{
				ApiKey:     int(k.ApiKey),
				ApiName:    clientMetadataApiName(k.ApiKey),
				MinVersion: int(k.MinVersion),
				MaxVersion: int(k.MaxVersion),
			}
		}
	}
	return res, nil
}

// clientMetadataApiNames are the names of Kafka's APIs, by key, as the
// Kafka protocol specification spells them.
var clientMetadataApiNames = [...]string{
	"Produce", "Fetch", "ListOffsets", "Metadata", "LeaderAndIsr",
	"StopReplica", "UpdateMetadata", "ControlledShutdown", "OffsetCommit", "OffsetFetch",
	"FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup",
	"DescribeGroups", "ListGroups", "SaslHandshake", "ApiVersions", "CreateTopics",
	"DeleteTopics", "DeleteRecords", "InitProducerId", "OffsetForLeaderEpoch", "AddPartitionsToTxn",
	"AddOffsetsToTxn", "EndTxn", "WriteTxnMarkers", "TxnOffsetCommit", "DescribeAcls",
	"CreateAcls", "DeleteAcls", "DescribeConfigs", "AlterConfigs", "AlterReplicaLogDirs",
	"DescribeLogDirs", "SaslAuthenticate", "CreatePartitions", "CreateDelegationToken", "RenewDelegationToken",
	"ExpireDelegationToken", "DescribeDelegationToken", "DeleteGroups", "ElectLeaders", "IncrementalAlterConfigs",
	"AlterPartitionReassignments", "ListPartitionReassignments", "OffsetDelete", "DescribeClientQuotas", "AlterClientQuotas",
	"DescribeUserScramCredentials", "AlterUserScramCredentials", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch",
	"DescribeQuorum", "AlterPartition", "UpdateFeatures", "Envelope", "FetchSnapshot",
	"DescribeCluster", "DescribeProducers", "BrokerRegistration", "BrokerHeartbeat", "UnregisterBroker",
	"DescribeTransactions", "ListTransactions", "AllocateProducerIds", "ConsumerGroupHeartbeat", "ConsumerGroupDescribe",
	"ControllerRegistration", "GetTelemetrySubscriptions", "PushTelemetry", "AssignReplicasToDirs", "ListClientMetricsResources",
	"DescribeTopicPartitions", "ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge",
	"AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter", "InitializeShareGroupState", "ReadShareGroupState",
	"WriteShareGroupState", "DeleteShareGroupState", "ReadShareGroupStateSummary",
}

func clientMetadataApiName(k protocol.ApiKey) string {
	if k >= 0 && int(k) < len(clientMetadataApiNames) {
		return clientMetadataApiNames[k]
	}
	return strconv.Itoa(int(k))
}

// CoordinatorKeyType says what kind of key a coordinator is looked up for.
type CoordinatorKeyType int8

const (
	// CoordinatorKeyTypeConsumer looks up the coordinator of a consumer
	// group (the key is the group id).
	CoordinatorKeyTypeConsumer CoordinatorKeyType = 0

	// CoordinatorKeyTypeTransaction looks up the coordinator of a
	// transactional producer (the key is the transactional id).
	CoordinatorKeyTypeTransaction CoordinatorKeyType = 1
)

// FindCoordinatorRequest is the input of Client.FindCoordinator.
type FindCoordinatorRequest struct {
	// Addr is the cluster to ask; nil means the Client's Addr.
	Addr net.Addr

	// Key is the group id or transactional id whose coordinator is looked
	// up.
	Key string

	// KeyType says which of the two Key is.
	KeyType CoordinatorKeyType
}

// FindCoordinatorResponseCoordinator is the broker that coordinates a key.
type FindCoordinatorResponseCoordinator struct {
	// NodeID is the broker's id.
	NodeID int

	// Host and Port are the broker's address.
	Host string
	Port int
}

// FindCoordinatorResponse is the output of Client.FindCoordinator.
type FindCoordinatorResponse struct {
	// Coordinator is the broker the broker named; it is not meaningful
	// when Error is set.
	Coordinator *FindCoordinatorResponseCoordinator

	// Throttle is how long the broker throttled the request (quotas).
	Throttle time.Duration

	// Error is the broker's error for the key, if it could not name a
	// coordinator (e.g. COORDINATOR_NOT_AVAILABLE while the internal topic
	// is created).
	Error error
}

// FindCoordinator asks the cluster which broker coordinates a consumer
// group or a transactional id.
func (c *Client) FindCoordinator(ctx context.Context, req *FindCoordinatorRequest) (*FindCoordinatorResponse, error) {
	if req == nil {
		return nil, errors.New("kafka.(*Client).FindCoordinator: nil request")
	}
	r, err := responseAs[*protocol.FindCoordinatorResponse](c.sendToAny(ctx, req.Addr, &protocol.FindCoordinatorRequest{
		CoordinatorKey:  req.Key, // v1-3
		KeyType:         int8(req.KeyType),
		CoordinatorKeys: []string{req.Key}, // v4+
	}))
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).FindCoordinator: %w", err)
	}
	res := &FindCoordinatorResponse{Throttle: clientThrottle(r.ThrottleTimeMs)}
	if r.Coordinators == nil { // v1-3: one answer at the top level
		res.Coordinator = &FindCoordinatorResponseCoordinator{NodeID: int(r.NodeID), Host: r.Host, Port: int(r.Port)}
		res.Error = makeError(r.ErrorCode, deref(r.ErrorMessage))
		return res, nil
	}
	// v4+: one answer per key; we asked for one.
	co := r.Coordinators[0]
	for _, x := range r.Coordinators {
		if x.CoordinatorKey == req.Key {
			co = x
			break
		}
	}
	res.Coordinator = &FindCoordinatorResponseCoordinator{NodeID: int(co.NodeID), Host: co.Host, Port: int(co.Port)}
	res.Error = makeError(co.ErrorCode, deref(co.ErrorMessage))
	return res, nil
}
