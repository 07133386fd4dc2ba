package protocol

import "fmt"

// ApiKey identifies a Kafka API.
type ApiKey int16

const (
	Produce                     ApiKey = 0
	Fetch                       ApiKey = 1
	ListOffsets                 ApiKey = 2
	Metadata                    ApiKey = 3
	OffsetCommit                ApiKey = 8
	OffsetFetch                 ApiKey = 9
	FindCoordinator             ApiKey = 10
	JoinGroup                   ApiKey = 11
	Heartbeat                   ApiKey = 12
	LeaveGroup                  ApiKey = 13
	SyncGroup                   ApiKey = 14
	DescribeGroups              ApiKey = 15
	ListGroups                  ApiKey = 16
	SaslHandshake               ApiKey = 17
	ApiVersions                 ApiKey = 18
	CreateTopics                ApiKey = 19
	DeleteTopics                ApiKey = 20
	DeleteRecords               ApiKey = 21
	InitProducerId              ApiKey = 22
	OffsetForLeaderEpoch        ApiKey = 23
	DescribeConfigs             ApiKey = 32
	AlterConfigs                ApiKey = 33
	SaslAuthenticate            ApiKey = 36
	CreatePartitions            ApiKey = 37
	ElectLeaders                ApiKey = 43
	AlterPartitionReassignments ApiKey = 45
	ListPartitionReassignments  ApiKey = 46
)

var apiNames = map[ApiKey]string{
	Produce: "Produce", Fetch: "Fetch", ListOffsets: "ListOffsets", Metadata: "Metadata",
	OffsetCommit: "OffsetCommit", OffsetFetch: "OffsetFetch", FindCoordinator: "FindCoordinator",
	JoinGroup: "JoinGroup", Heartbeat: "Heartbeat", LeaveGroup: "LeaveGroup", SyncGroup: "SyncGroup",
	DescribeGroups: "DescribeGroups", ListGroups: "ListGroups", SaslHandshake: "SaslHandshake",
	ApiVersions: "ApiVersions", CreateTopics: "CreateTopics", DeleteTopics: "DeleteTopics",
	DeleteRecords: "DeleteRecords", InitProducerId: "InitProducerId",
	OffsetForLeaderEpoch: "OffsetForLeaderEpoch", DescribeConfigs: "DescribeConfigs",
	AlterConfigs: "AlterConfigs", SaslAuthenticate: "SaslAuthenticate",
	CreatePartitions: "CreatePartitions", ElectLeaders: "ElectLeaders",
	AlterPartitionReassignments: "AlterPartitionReassignments",
	ListPartitionReassignments:  "ListPartitionReassignments",
}

func (k ApiKey) String() string {
	if s, ok := apiNames[k]; ok {
		return s
	}
	return fmt.Sprintf("ApiKey(%d)", int16(k))
}

// Message is the part shared by requests and responses: it encodes and
// decodes itself at a given version.
type Message interface {
	Key() ApiKey
	// Encode appends the body (no header) at version v to e.
	Encode(e *Encoder, v int16)
	// Decode reads the body (no header) at version v from d.
	Decode(d *Decoder, v int16) error
}

// Request is a typed request message.
type Request interface {
	Message
	// MinVersion and MaxVersion bound the versions this library implements.
	MinVersion() int16
	MaxVersion() int16
	// FlexibleFrom is the first flexible version (KIP-482), or -1 if none
	// implemented is flexible.
	FlexibleFrom() int16
	// NewResponse returns an empty response of the matching type.
	NewResponse() Response
}

// Response is a typed response message.
type Response interface {
	Message
}

// IsFlexible reports whether version v of r uses the compact encoding.
func IsFlexible(r Request, v int16) bool {
	f := r.FlexibleFrom()
	return f >= 0 && v >= f
}

// Throttled is implemented by responses that carry a throttle time.
type Throttled interface {
	Throttle() int32
}
