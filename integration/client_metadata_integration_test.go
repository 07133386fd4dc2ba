package integration

// Integration tests of Client.Metadata, ApiVersions and FindCoordinator against the real 3-rack cluster:
// the brokers with their racks, a topic's partitions with leaders and ISR, an unknown topic (not
// auto-created), the API names a broker advertises, and coordinators of groups and transactional ids.

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

func cmetaClient(t *testing.T, c *ktesting.Cluster) *kafka.Client {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 20 * time.Second, Transport: tr}
}

func TestClientMetadataIntegrationBrokersAndTopic(t *testing.T) {
	c := requireRackCluster(t)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 3})
	client := cmetaClient(t, c)
	ctx := testContext(t, time.Minute)

	res, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ClusterID == "" {
		t.Error("no ClusterID")
	}
	if len(res.Brokers) != 3 {
		t.Fatalf("Brokers = %+v; want 3", res.Brokers)
	}
	byID := map[int]kafka.Broker{}
	for _, b := range res.Brokers {
		byID[b.ID] = b
		if want := c.Addr(b.ID); net.JoinHostPort(b.Host, strconv.Itoa(b.Port)) != want {
			t.Errorf("broker %d at %s:%d; the cluster lists it at %s", b.ID, b.Host, b.Port, want)
		}
		if b.Rack != c.Rack(b.ID) {
			t.Errorf("broker %d in rack %q; want %q", b.ID, b.Rack, c.Rack(b.ID))
		}
	}
	racks := map[string]bool{}
	for _, b := range res.Brokers {
		racks[b.Rack] = true
	}
	if !racks["a"] || !racks["b"] || !racks["c"] {
		t.Errorf("racks %v; want a, b and c", racks)
	}
	if res.Controller != (kafka.Broker{}) && byID[res.Controller.ID] != res.Controller {
		t.Errorf("Controller %+v is not one of the brokers", res.Controller)
	}

	if len(res.Topics) != 1 || res.Topics[0].Name != topic || res.Topics[0].Error != nil || res.Topics[0].Internal {
		t.Fatalf("Topics = %+v", res.Topics)
	}
	ps := res.Topics[0].Partitions
	if len(ps) != 3 {
		t.Fatalf("partitions %+v; want 3", ps)
	}
	for i, p := range ps {
		if p.Topic != topic || p.ID != i || p.Error != nil {
			t.Errorf("partition %d = %+v", i, p)
		}
		if byID[p.Leader.ID] != p.Leader {
			t.Errorf("partition %d: leader %+v is not a broker of the cluster", i, p.Leader)
		}
		if len(p.Replicas) != 3 || len(p.Isr) != 3 {
			t.Errorf("partition %d: replicas %v, isr %v; want 3 of each", i, brokerIDs(p.Replicas), brokerIDs(p.Isr))
		}
		if !hasBroker(p.Replicas, p.Leader.ID) || !hasBroker(p.Isr, p.Leader.ID) {
			t.Errorf("partition %d: leader %d not among replicas %v / isr %v", i, p.Leader.ID, brokerIDs(p.Replicas), brokerIDs(p.Isr))
		}
		rr := map[string]bool{}
		for _, r := range p.Replicas {
			rr[r.Rack] = true
			if byID[r.ID] != r {
				t.Errorf("partition %d: replica %+v is not filled in", i, r)
			}
		}
		if len(rr) != 3 {
			t.Errorf("partition %d: replicas in racks %v; want all three", i, rr)
		}
	}

	// Every topic (nil) includes ours; no topic (empty) gives the brokers only.
	all, err := client.Metadata(ctx, &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tp := range all.Topics {
		found = found || tp.Name == topic
	}
	if !found {
		t.Errorf("Metadata of every topic lacks %s", topic)
	}
	none, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}})
	if err != nil || len(none.Topics) != 0 || len(none.Brokers) != 3 {
		t.Errorf("Metadata of no topic = %+v, %v", none, err)
	}
}

func TestClientMetadataIntegrationUnknownTopic(t *testing.T) {
	c := requireRackCluster(t)
	client := cmetaClient(t, c)
	ctx := testContext(t, time.Minute)
	topic := ktesting.UniqueTopic(t)
	for i := 0; i < 2; i++ { // the first request must not have created it
		res, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Topics) != 1 || !errors.Is(res.Topics[0].Error, kafka.UnknownTopicOrPartition) {
			t.Fatalf("request %d: Topics = %+v; want UnknownTopicOrPartition", i, res.Topics)
		}
	}
}

func TestClientMetadataIntegrationApiVersions(t *testing.T) {
	c := requireRackCluster(t)
	client := cmetaClient(t, c)
	res, err := client.ApiVersions(testContext(t, time.Minute), &kafka.ApiVersionsRequest{Addr: kafka.TCP(c.Brokers[1])})
	if err != nil || res.Error != nil {
		t.Fatalf("ApiVersions = %+v, %v", res, err)
	}
	keys := map[string]kafka.ApiVersionsResponseApiKey{}
	for _, k := range res.ApiKeys {
		keys[k.ApiName] = k
		if k.MinVersion > k.MaxVersion || k.ApiName == "" {
			t.Errorf("key %+v", k)
		}
	}
	for name, key := range map[string]int{"Produce": 0, "Fetch": 1, "ListOffsets": 2, "Metadata": 3, "OffsetCommit": 8, "OffsetFetch": 9, "FindCoordinator": 10, "ApiVersions": 18, "OffsetDelete": 47} {
		if k, ok := keys[name]; !ok || k.ApiKey != key {
			t.Errorf("%s: %+v, %v; want key %d", name, k, ok, key)
		}
	}
	if m := keys["Metadata"]; m.MaxVersion < 9 {
		t.Errorf("Metadata max version %d; Kafka 2.4+ has 9", m.MaxVersion)
	}
}

// cmetaCoordinator polls FindCoordinator until the cluster names one: a new cluster answers
// COORDINATOR_NOT_AVAILABLE until its internal topic is ready.
func cmetaCoordinator(t *testing.T, ctx context.Context, client *kafka.Client, key string, kt kafka.CoordinatorKeyType) *kafka.FindCoordinatorResponse {
	t.Helper()
	var res *kafka.FindCoordinatorResponse
	eventually(t, 45*time.Second, "a coordinator for "+key, func() bool {
		r, err := client.FindCoordinator(ctx, &kafka.FindCoordinatorRequest{Key: key, KeyType: kt})
		if err != nil {
			t.Fatalf("FindCoordinator(%s): %v", key, err)
		}
		if r.Error != nil && !errors.Is(r.Error, kafka.GroupCoordinatorNotAvailable) {
			t.Fatalf("FindCoordinator(%s): %v", key, r.Error)
		}
		res = r
		return r.Error == nil
	})
	return res
}

func TestClientMetadataIntegrationFindCoordinator(t *testing.T) {
	c := requireRackCluster(t)
	client := cmetaClient(t, c)
	ctx := testContext(t, time.Minute)
	for _, kt := range []kafka.CoordinatorKeyType{kafka.CoordinatorKeyTypeConsumer, kafka.CoordinatorKeyTypeTransaction} {
		key := ktesting.UniqueTopic(t) // a fresh group or transactional id
		res := cmetaCoordinator(t, ctx, client, key, kt)
		co := res.Coordinator
		if co == nil || net.JoinHostPort(co.Host, strconv.Itoa(co.Port)) != c.Addr(co.NodeID) {
			t.Errorf("key type %d: coordinator %+v is not a broker of the cluster", kt, co)
		}
	}
}
