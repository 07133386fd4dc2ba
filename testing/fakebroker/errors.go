package fakebroker

import "github.com/rackfetch/kafka-go/protocol"

// Kafka error codes the fake answers with.
const (
	errNone                     int16 = 0
	errOffsetOutOfRange         int16 = 1
	errCorruptMessage           int16 = 2
	errUnknownTopicOrPartition  int16 = 3
	errLeaderNotAvailable       int16 = 5
	errNotLeaderOrFollower      int16 = 6
	errCoordinatorNotAvailable  int16 = 15
	errNotCoordinator           int16 = 16
	errIllegalGeneration        int16 = 22
	errInconsistentGroupProto   int16 = 23
	errUnknownMemberID          int16 = 25
	errRebalanceInProgress      int16 = 27
	errUnsupportedSASLMech      int16 = 33
	errIllegalSASLState         int16 = 34
	errUnsupportedVersion       int16 = 35
	errTopicAlreadyExists       int16 = 36
	errInvalidPartitions        int16 = 37
	errInvalidReplication       int16 = 38
	errInvalidReplicaAssignment int16 = 39
	errInvalidRequest           int16 = 42
	errSASLAuthFailed           int16 = 58
	errFencedLeaderEpoch        int16 = 74
	errUnknownLeaderEpoch       int16 = 75
	errMemberIDRequired         int16 = 79
	errInvalidRecord            int16 = 87
	errUnknownTopicID           int16 = 100
)

// errorResponse builds the answer to req carrying code everywhere the
// response has an error code, or nil for a request the fake cannot answer.
func errorResponse(req protocol.Request, code int16) protocol.Response {
	switch r := req.(type) {
	case *protocol.ApiVersionsRequest:
		return &protocol.ApiVersionsResponse{ErrorCode: code}
	case *protocol.MetadataRequest:
		resp := &protocol.MetadataResponse{ControllerID: -1}
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, protocol.MetadataResponseTopic{ErrorCode: code, Name: t.Name, TopicID: t.TopicID})
		}
		return resp
	case *protocol.FetchRequest:
		resp := &protocol.FetchResponse{}
		for _, t := range r.Topics {
			out := protocol.FetchResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
			for _, p := range t.Partitions {
				out.Partitions = append(out.Partitions, protocol.FetchResponsePartition{
					PartitionIndex: p.Partition, ErrorCode: code,
					HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, PreferredReadReplica: -1,
				})
			}
			resp.Topics = append(resp.Topics, out)
		}
		return resp
	case *protocol.ListOffsetsRequest:
		resp := &protocol.ListOffsetsResponse{}
		for _, t := range r.Topics {
			out := protocol.ListOffsetsResponseTopic{Name: t.Name}
			for _, p := range t.Partitions {
				out.Partitions = append(out.Partitions, protocol.ListOffsetsResponsePartition{
					PartitionIndex: p.PartitionIndex, ErrorCode: code, Timestamp: -1, Offset: -1, LeaderEpoch: -1,
				})
			}
			resp.Topics = append(resp.Topics, out)
		}
		return resp
	case *protocol.OffsetForLeaderEpochRequest:
		resp := &protocol.OffsetForLeaderEpochResponse{}
		for _, t := range r.Topics {
			out := protocol.OffsetForLeaderEpochResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				out.Partitions = append(out.Partitions, protocol.OffsetForLeaderEpochResponsePartition{
					Partition: p.Partition, ErrorCode: code, LeaderEpoch: -1, EndOffset: -1,
				})
			}
			resp.Topics = append(resp.Topics, out)
		}
		return resp
	case *protocol.ProduceRequest:
		resp := &protocol.ProduceResponse{}
		for _, t := range r.Topics {
			out := protocol.ProduceResponseTopic{Name: t.Name}
			for _, p := range t.Partitions {
				out.Partitions = append(out.Partitions, protocol.ProduceResponsePartition{
					Index: p.Index, ErrorCode: code, BaseOffset: -1, LogAppendTimeMs: -1, LogStartOffset: -1,
				})
			}
			resp.Topics = append(resp.Topics, out)
		}
		return resp
	case *protocol.FindCoordinatorRequest:
		resp := &protocol.FindCoordinatorResponse{ErrorCode: code, NodeID: -1, Port: -1}
		for _, k := range r.CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, protocol.FindCoordinatorResponseCoordinator{
				CoordinatorKey: k, NodeID: -1, Port: -1, ErrorCode: code,
			})
		}
		return resp
	case *protocol.JoinGroupRequest:
		return &protocol.JoinGroupResponse{ErrorCode: code, GenerationID: -1, MemberID: r.MemberID}
	case *protocol.SyncGroupRequest:
		return &protocol.SyncGroupResponse{ErrorCode: code, Assignment: []byte{}}
	case *protocol.HeartbeatRequest:
		return &protocol.HeartbeatResponse{ErrorCode: code}
	case *protocol.LeaveGroupRequest:
		resp := &protocol.LeaveGroupResponse{ErrorCode: code}
		for _, m := range r.Members {
			resp.Members = append(resp.Members, protocol.LeaveGroupResponseMember{MemberID: m.MemberID, GroupInstanceID: m.GroupInstanceID, ErrorCode: code})
		}
		return resp
	case *protocol.OffsetCommitRequest:
		resp := &protocol.OffsetCommitResponse{}
		for _, t := range r.Topics {
			out := protocol.OffsetCommitResponseTopic{Name: t.Name}
			for _, p := range t.Partitions {
				out.Partitions = append(out.Partitions, protocol.OffsetCommitResponsePartition{PartitionIndex: p.PartitionIndex, ErrorCode: code})
			}
			resp.Topics = append(resp.Topics, out)
		}
		return resp
	case *protocol.OffsetFetchRequest:
		topics := func(ts []protocol.OffsetFetchRequestTopic) []protocol.OffsetFetchResponseTopic {
			var out []protocol.OffsetFetchResponseTopic
			for _, t := range ts {
				rt := protocol.OffsetFetchResponseTopic{Name: t.Name}
				for _, p := range t.PartitionIndexes {
					rt.Partitions = append(rt.Partitions, protocol.OffsetFetchResponsePartition{
						PartitionIndex: p, CommittedOffset: -1, CommittedLeaderEpoch: -1, ErrorCode: code,
					})
				}
				out = append(out, rt)
			}
			return out
		}
		resp := &protocol.OffsetFetchResponse{ErrorCode: code, Topics: topics(r.Topics)}
		for _, g := range r.Groups {
			resp.Groups = append(resp.Groups, protocol.OffsetFetchResponseGroup{GroupID: g.GroupID, ErrorCode: code, Topics: topics(g.Topics)})
		}
		return resp
	case *protocol.CreateTopicsRequest:
		resp := &protocol.CreateTopicsResponse{}
		for _, t := range r.Topics {
			resp.Topics = append(resp.Topics, protocol.CreateTopicsResponseTopic{Name: t.Name, ErrorCode: code, NumPartitions: -1, ReplicationFactor: -1})
		}
		return resp
	case *protocol.DeleteTopicsRequest:
		resp := &protocol.DeleteTopicsResponse{}
		for _, name := range r.TopicNames {
			resp.Responses = append(resp.Responses, protocol.DeleteTopicsResponseTopic{Name: name, ErrorCode: code})
		}
		for _, t := range r.Topics {
			resp.Responses = append(resp.Responses, protocol.DeleteTopicsResponseTopic{Name: t.Name, TopicID: t.TopicID, ErrorCode: code})
		}
		return resp
	case *protocol.SaslHandshakeRequest:
		return &protocol.SaslHandshakeResponse{ErrorCode: code}
	case *protocol.SaslAuthenticateRequest:
		return &protocol.SaslAuthenticateResponse{ErrorCode: code}
	}
	return nil
}
