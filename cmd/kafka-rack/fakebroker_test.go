package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// fakeRacks starts 3 fake brokers in racks a, b, c answering DescribeConfigs
// with their rack and selector, and a topic "t" whose partition p is led by
// broker p+1 with replicas on all three.
func fakeRacks(t *testing.T, selector bool) *fakebroker.Cluster {
	racks := []string{"a", "b", "c"}
	fc := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 3, Racks: racks, RackAwareSelector: selector})
	fc.CreateTopic("t", 3, 3)
	for _, b := range fc.Brokers() {
		b.Handle(protocol.DescribeConfigs, func(req protocol.Request, _ protocol.RequestHeader) (protocol.Response, fakebroker.Action) {
			resp := &protocol.DescribeConfigsResponse{}
			for _, res := range req.(*protocol.DescribeConfigsRequest).Resources {
				id, _ := strconv.Atoi(res.ResourceName)
				rack := racks[id-1]
				var class *string
				if selector {
					s := rackAwareSelect
					class = &s
				}
				resp.Results = append(resp.Results, protocol.DescribeConfigsResponseResult{
					ResourceType: res.ResourceType, ResourceName: res.ResourceName,
					Configs: []protocol.DescribeConfigsResponseConfig{{Name: configRack, Value: &rack}, {Name: configSelector, Value: class}},
				})
			}
			return resp, fakebroker.Action{}
		})
	}
	return fc
}

func fakeConfig(fc *fakebroker.Cluster) *config {
	return &config{Brokers: fc.Addrs(), Topic: "t", Rack: "b", Timeout: 5 * time.Second, Price: defaultPrice}
}

// Without a selector the report warns and names client-side selection;
// -client-select plans it, except on a leader too old to send a rack to.
func TestKafkaRackFakeNoSelector(t *testing.T) {
	fc := fakeRacks(t, false)
	fc.Broker(3).SetMaxVersion(protocol.Fetch, 10)
	cfg := fakeConfig(fc)
	cfg.ClientSelect = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := buildReport(ctx, cfg)
	require.NoError(t, err)
	require.True(t, hasWarning(rep.Warnings, "replica.selector.class is unset on broker(s) 1, 2, 3"), "%q", rep.Warnings)
	require.True(t, hasWarning(rep.Warnings, "ReaderConfig.ReplicaSelector = kafka.RackAffinityReplicaSelector{}"), "%q", rep.Warnings)
	require.False(t, hasWarning(rep.Warnings, "being added"), "ReplicaSelector exists: %q", rep.Warnings)
	require.True(t, hasWarning(rep.Warnings, "broker(s) 3 (v10) speak Fetch below v11"), "%q", rep.Warnings)
	require.Equal(t, 10, rep.Brokers[2].FetchMaxVersion)
	require.Len(t, rep.Partitions, 3)
	got := make([][2]any, 3)
	for i, p := range rep.Partitions {
		require.Empty(t, p.Error, "partition %d", i)
		require.Equal(t, -1, p.Preferred)
		got[i] = [2]any{p.Read.ID, p.Reason}
	}
	require.Equal(t, [][2]any{{2, reasonClientSelect}, {2, reasonLeaderInRack}, {3, reasonOldFetch}}, got)
}

// With the selector, the leaders name the rack's replica.
func TestKafkaRackFakeSelector(t *testing.T) {
	fc := fakeRacks(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := buildReport(ctx, fakeConfig(fc))
	require.NoError(t, err)
	require.Empty(t, rep.Warnings)
	got := make([][3]any, 3)
	for i, p := range rep.Partitions {
		require.Empty(t, p.Error, "partition %d", i)
		got[i] = [3]any{p.Preferred, p.Read.ID, p.Reason}
	}
	require.Equal(t, [][3]any{{2, 2, reasonPreferred}, {-1, 2, reasonLeaderInRack}, {2, 2, reasonPreferred}}, got)
}
