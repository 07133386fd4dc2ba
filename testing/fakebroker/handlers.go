package fakebroker

import (
	"github.com/rackfetch/kafka-go/protocol"
)

// defaultAnswer answers req from the cluster model.
func (b *Broker) defaultAnswer(c *conn, req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, Action) {
	v := hdr.Version
	switch r := req.(type) {
	case *protocol.ApiVersionsRequest:
		return b.apiVersions(), Action{}
	case *protocol.MetadataRequest:
		return b.metadata(r, v), Action{}
	case *protocol.FetchRequest:
		return b.fetch(r, v), Action{}
	case *protocol.ProduceRequest:
		return b.produce(r, v), Action{}
	case *protocol.ListOffsetsRequest:
		return b.listOffsets(r, v), Action{}
	case *protocol.OffsetForLeaderEpochRequest:
		return b.offsetForLeaderEpoch(r), Action{}
	case *protocol.FindCoordinatorRequest:
		return b.findCoordinator(r, v), Action{}
	case *protocol.JoinGroupRequest:
		return b.joinGroup(c, r, hdr)
	case *protocol.SyncGroupRequest:
		return b.syncGroup(c, r, v)
	case *protocol.HeartbeatRequest:
		return b.heartbeat(r), Action{}
	case *protocol.LeaveGroupRequest:
		return b.leaveGroup(r, v), Action{}
	case *protocol.OffsetCommitRequest:
		return b.offsetCommit(r), Action{}
	case *protocol.OffsetFetchRequest:
		return b.offsetFetch(r, v), Action{}
	case *protocol.CreateTopicsRequest:
		return b.createTopics(r, v), Action{}
	case *protocol.DeleteTopicsRequest:
		return b.deleteTopics(r, v), Action{}
	case *protocol.SaslHandshakeRequest:
		return b.saslHandshake(c, r), Action{}
	case *protocol.SaslAuthenticateRequest:
		return b.saslAuthenticate(c, r), Action{}
	}
	// A registered request the fake has no model for: close, as a broker
	// does with a request it cannot handle.
	return nil, Action{Close: true}
}
