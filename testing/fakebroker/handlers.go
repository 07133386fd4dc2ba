package fakebroker

import (
	"sort"

	"github.com/rackfetch/kafka-go/protocol"
)

// defaultAnswer answers req from the cluster model.
func (b *Broker) defaultAnswer(c *conn, req protocol.Request, hdr protocol.RequestHeader) (protocol.Response, Action) {
	v := hdr.Version
	switch req.(type) {
	case *protocol.ApiVersionsRequest:
		return b.apiVersions(), Action{}
	}
	// A registered request the fake has no model for: Kafka would not
	// answer an API it does not advertise either.
	_ = v
	return nil, Action{Close: true}
}

// apiVersions advertises protocol.Implemented(), minus the overrides.
func (b *Broker) apiVersions() *protocol.ApiVersionsResponse {
	return &protocol.ApiVersionsResponse{ApiKeys: b.apiKeys()}
}

func (b *Broker) apiKeys() []protocol.ApiVersionsKey {
	vs := b.Versions()
	keys := make([]protocol.ApiVersionsKey, 0, len(vs))
	for k, r := range vs {
		keys = append(keys, protocol.ApiVersionsKey{ApiKey: k, MinVersion: r.Min, MaxVersion: r.Max})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].ApiKey < keys[j].ApiKey })
	return keys
}
