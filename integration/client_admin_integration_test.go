package integration

// Integration tests of the Client's topic and config administration on the
// real 3-rack cluster: creating topics (with configs and replica
// assignments), deleting them, adding partitions, describing and changing
// configs of topics and brokers, preferred leader elections and replica
// reassignments. Nothing here stops or pauses brokers.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
)

func cadminClient(t *testing.T, c *ktesting.Cluster) *kafka.Client {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 20 * time.Second, Transport: tr}
}

// cadminDeleteLater deletes topics at the end of the test.
func cadminDeleteLater(t *testing.T, client *kafka.Client, topics ...string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), itTimeout)
		defer cancel()
		client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: topics})
	})
}

// cadminReplicas is the replica ids of every partition of topic, in
// partition order and each in the metadata's (preference) order, as broker
// addr sees them; nil with the error when the broker does not know it.
func cadminReplicas(addr, topic string) ([][]int, error) {
	ps, err := partitionsOn(addr, topic)
	if err != nil {
		return nil, err
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	out := make([][]int, len(ps))
	for i, p := range ps {
		if p.Error != nil {
			return nil, p.Error
		}
		for _, r := range p.Replicas {
			out[i] = append(out[i], r.ID)
		}
	}
	return out, nil
}

// cadminWaitReplicas waits until every broker's metadata gives topic the
// replica sets want, fully in sync.
func cadminWaitReplicas(t *testing.T, c *ktesting.Cluster, topic string, want [][]int) {
	t.Helper()
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, fmt.Sprintf("%s has replicas %v on %s", topic, want, addr), func() bool {
			got, err := cadminReplicas(addr, topic)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				return false
			}
			ps, err := partitionsOn(addr, topic)
			return err == nil && settled(ps, len(want))
		})
	}
}

// cadminConfig describes one key of a topic or broker; ok is false until
// the resource has it without error.
func cadminConfig(ctx context.Context, client *kafka.Client, typ kafka.ResourceType, name, key string) (kafka.DescribeConfigResponseConfigEntry, bool) {
	resp, err := client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{
		{ResourceType: typ, ResourceName: name, ConfigNames: []string{key}},
	}})
	if err != nil || len(resp.Resources) != 1 || resp.Resources[0].Error != nil {
		return kafka.DescribeConfigResponseConfigEntry{}, false
	}
	for _, e := range resp.Resources[0].ConfigEntries {
		if e.ConfigName == key {
			return e, true
		}
	}
	return kafka.DescribeConfigResponseConfigEntry{}, false
}

// cadminWaitConfig waits until the topic's key has value, from source:
// config changes reach the brokers through the controller's log, so a
// broker may answer with the old value for a moment.
func cadminWaitConfig(t *testing.T, ctx context.Context, client *kafka.Client, topic, key, value string, source int8) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("%s %s=%s (source %d)", topic, key, value, source), func() bool {
		e, ok := cadminConfig(ctx, client, kafka.ResourceTypeTopic, topic, key)
		return ok && e.ConfigValue == value && e.ConfigSource == source
	})
}

func TestClientAdminIntegrationCreateDeleteTopics(t *testing.T) {
	c := requireRackCluster(t)
	client := cadminClient(t, c)
	ctx := testContext(t, time.Minute)
	configured, placed := ktesting.UniqueTopic(t)+"-cfg", ktesting.UniqueTopic(t)+"-placed"
	cadminDeleteLater(t, client, configured, placed)

	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{
			Topic: configured, NumPartitions: 3, ReplicationFactor: 3,
			ConfigEntries: []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "3600000"}, {ConfigName: "cleanup.policy", ConfigValue: "compact"}},
		},
		{
			Topic: placed, NumPartitions: -1, ReplicationFactor: -1,
			ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{3, 1}}, {Partition: 1, Replicas: []int{2, 3}}},
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Errors) != 2 || resp.Errors[configured] != nil || resp.Errors[placed] != nil {
		t.Fatalf("Errors = %v, want both created", resp.Errors)
	}
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, configured+" settled on "+addr, func() bool {
			ps, err := partitionsOn(addr, configured)
			return err == nil && settled(ps, 3)
		})
	}
	cadminWaitReplicas(t, c, placed, [][]int{{3, 1}, {2, 3}})
	cadminWaitConfig(t, ctx, client, configured, "retention.ms", "3600000", 1)
	cadminWaitConfig(t, ctx, client, configured, "cleanup.policy", "compact", 1)

	// Again: the topic's error, not the call's.
	resp, err = client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: configured, NumPartitions: 1, ReplicationFactor: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.Errors[configured]; !errors.Is(e, kafka.TopicAlreadyExists) {
		t.Errorf("creating %s again: Errors = %v, want TopicAlreadyExists", configured, resp.Errors)
	}
	// Validating a bad topic creates nothing and says why.
	bad := ktesting.UniqueTopic(t) + "-bad"
	resp, err = client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: bad, NumPartitions: 1, ReplicationFactor: 4}}, ValidateOnly: true})
	if err != nil || !errors.Is(resp.Errors[bad], kafka.InvalidReplicationFactor) {
		t.Errorf("RF 4 on 3 brokers: %v, %v; want InvalidReplicationFactor", resp, err)
	}

	dresp, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{configured, placed, bad}})
	if err != nil {
		t.Fatal(err)
	}
	if len(dresp.Errors) != 3 || dresp.Errors[configured] != nil || dresp.Errors[placed] != nil || dresp.Errors[bad] != kafka.UnknownTopicOrPartition {
		t.Errorf("DeleteTopics Errors = %v, want the two deleted and %s unknown", dresp.Errors, bad)
	}
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, configured+" gone from "+addr, func() bool {
			_, err := cadminReplicas(addr, configured)
			return errors.Is(err, kafka.UnknownTopicOrPartition)
		})
	}
}

func TestClientAdminIntegrationCreatePartitions(t *testing.T) {
	c := requireRackCluster(t)
	client := cadminClient(t, c)
	ctx := testContext(t, time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{1, 2, 3}}}})

	resp, err := client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{
		Name: topic, Count: 3,
		TopicPartitionAssignments: []kafka.TopicPartitionAssignment{{BrokerIDs: []int32{2, 3, 1}}, {BrokerIDs: []int32{3, 1, 2}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Errors) != 1 || resp.Errors[topic] != nil {
		t.Fatalf("Errors = %v, want %s grown", resp.Errors, topic)
	}
	cadminWaitReplicas(t, c, topic, [][]int{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}})

	// Placed by the controller.
	resp, err = client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 4}}})
	if err != nil || resp.Errors[topic] != nil {
		t.Fatalf("growing to 4: %v, %v", resp, err)
	}
	for _, addr := range c.Brokers {
		eventually(t, 30*time.Second, topic+" has 4 partitions on "+addr, func() bool {
			ps, err := partitionsOn(addr, topic)
			return err == nil && settled(ps, 4)
		})
	}

	// Shrinking is refused, for that topic alone.
	resp, err = client.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: topic, Count: 2}}})
	if err != nil || !errors.Is(resp.Errors[topic], kafka.InvalidPartitionNumber) {
		t.Errorf("shrinking to 2: %v, %v; want InvalidPartitionNumber", resp, err)
	}
}

func TestClientAdminIntegrationDescribeConfigs(t *testing.T) {
	c := requireRackCluster(t)
	client := cadminClient(t, c)
	ctx := testContext(t, time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1, ConfigEntries: []kafka.ConfigEntry{{ConfigName: "retention.ms", ConfigValue: "5400000"}}})
	cadminWaitConfig(t, ctx, client, topic, "retention.ms", "5400000", 1)

	// A topic, then every broker: broker configs are only served by the
	// broker itself (another answers with an error), so each broker's
	// rack coming back says each reached its own broker.
	req := &kafka.DescribeConfigsRequest{
		Resources:       []kafka.DescribeConfigRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}},
		IncludeSynonyms: true,
	}
	for _, id := range c.BrokerIDs {
		req.Resources = append(req.Resources, kafka.DescribeConfigRequestResource{
			ResourceType: kafka.ResourceTypeBroker, ResourceName: fmt.Sprint(id), ConfigNames: []string{"broker.rack", "broker.id"},
		})
	}
	resp, err := client.DescribeConfigs(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Resources) != 1+len(c.BrokerIDs) {
		t.Fatalf("%d resources, want %d", len(resp.Resources), 1+len(c.BrokerIDs))
	}
	tr := resp.Resources[0]
	if tr.Error != nil || tr.ResourceType != int8(kafka.ResourceTypeTopic) || tr.ResourceName != topic || len(tr.ConfigEntries) < 10 {
		t.Fatalf("topic resource = %+v, want every key of %s", tr, topic)
	}
	entries := map[string]kafka.DescribeConfigResponseConfigEntry{}
	for _, e := range tr.ConfigEntries {
		entries[e.ConfigName] = e
	}
	if e := entries["retention.ms"]; e.ConfigValue != "5400000" || e.ConfigSource != 1 || len(e.ConfigSynonyms) == 0 || e.ConfigSynonyms[0].ConfigValue != "5400000" {
		t.Errorf("retention.ms = %+v, want 5400000 from the topic, with synonyms", e)
	}
	if e := entries["min.insync.replicas"]; e.ConfigValue != "2" {
		t.Errorf("min.insync.replicas = %+v, want the cluster's 2", e)
	}
	for i, id := range c.BrokerIDs {
		br := resp.Resources[1+i]
		if br.Error != nil || br.ResourceType != int8(kafka.ResourceTypeBroker) || br.ResourceName != fmt.Sprint(id) {
			t.Errorf("broker %d resource = %+v", id, br)
			continue
		}
		got := map[string]string{}
		for _, e := range br.ConfigEntries {
			got[e.ConfigName] = e.ConfigValue
		}
		if got["broker.rack"] != c.Rack(id) || got["broker.id"] != fmt.Sprint(id) {
			t.Errorf("broker %d configs = %v, want rack %q", id, got, c.Rack(id))
		}
	}

	// Documentation, and an unknown topic's error.
	missing := ktesting.UniqueTopic(t) + "-missing"
	resp, err = client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{
		Resources: []kafka.DescribeConfigRequestResource{
			{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{"segment.bytes"}},
			{ResourceType: kafka.ResourceTypeTopic, ResourceName: missing},
		},
		IncludeDocumentation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Resources[0]; len(r.ConfigEntries) != 1 || r.ConfigEntries[0].ConfigDocumentation == "" || r.ConfigEntries[0].ConfigType != 3 {
		t.Errorf("segment.bytes = %+v, want documented, of type int (3)", r.ConfigEntries)
	}
	if r := resp.Resources[1]; r.ResourceName != missing || !errors.Is(r.Error, kafka.UnknownTopicOrPartition) {
		t.Errorf("missing topic = %+v, want UnknownTopicOrPartition", r)
	}
}

func TestClientAdminIntegrationAlterConfigs(t *testing.T) {
	c := requireRackCluster(t)
	client := cadminClient(t, c)
	ctx := testContext(t, time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{NumPartitions: 1})

	// Incremental: one key set.
	iresp, err := client.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", Value: "7200000", ConfigOperation: kafka.ConfigOperationSet}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(iresp.Resources) != 1 || iresp.Resources[0] != (kafka.IncrementalAlterConfigsResponseResource{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}) {
		t.Fatalf("IncrementalAlterConfigs = %+v", iresp.Resources)
	}
	cadminWaitConfig(t, ctx, client, topic, "retention.ms", "7200000", 1)

	// Whole replacement.
	aresp, err := client.AlterConfigs(ctx, &kafka.AlterConfigsRequest{Resources: []kafka.AlterConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.AlterConfigRequestConfig{{Name: "retention.ms", Value: "10800000"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	key := kafka.AlterConfigsResponseResource{Type: int8(kafka.ResourceTypeTopic), Name: topic}
	if len(aresp.Errors) != 1 || aresp.Errors[key] != nil {
		t.Fatalf("AlterConfigs Errors = %v", aresp.Errors)
	}
	cadminWaitConfig(t, ctx, client, topic, "retention.ms", "10800000", 1)

	// A bad value is the resource's error; nothing changes. KRaft brokers call it InvalidConfiguration;
	// ZooKeeper-mode brokers (seen on 2.8.2) InvalidRequest.
	badValue := kafka.InvalidConfiguration
	if c.Mode == "zk" {
		badValue = kafka.InvalidRequest
	}
	iresp, err = client.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", Value: "soon"}},
	}}})
	if err != nil || len(iresp.Resources) != 1 || !errors.Is(iresp.Resources[0].Error, badValue) {
		t.Errorf("retention.ms=soon: %+v, %v; want %v", iresp, err, badValue)
	}
	aresp, err = client.AlterConfigs(ctx, &kafka.AlterConfigsRequest{Resources: []kafka.AlterConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.AlterConfigRequestConfig{{Name: "retention.ms", Value: "soon"}},
	}}})
	if err != nil || !errors.Is(aresp.Errors[key], badValue) {
		t.Errorf("AlterConfigs retention.ms=soon: %+v, %v; want %v", aresp, err, badValue)
	}

	// Deleting the key brings the default back.
	iresp, err = client.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "retention.ms", ConfigOperation: kafka.ConfigOperationDelete}},
	}}})
	if err != nil || iresp.Resources[0].Error != nil {
		t.Fatalf("deleting retention.ms: %+v, %v", iresp, err)
	}
	cadminWaitConfig(t, ctx, client, topic, "retention.ms", "604800000", 5)

	// Broker configs, validated only (the cluster is shared by the tests),
	// at the broker they name.
	id := fmt.Sprint(c.BrokerIDs[len(c.BrokerIDs)-1])
	iresp, err = client.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{
		Resources: []kafka.IncrementalAlterConfigsRequestResource{{
			ResourceType: kafka.ResourceTypeBroker, ResourceName: id,
			Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: "log.cleaner.threads", Value: "2"}},
		}},
		ValidateOnly: true,
	})
	if err != nil || len(iresp.Resources) != 1 || iresp.Resources[0].Error != nil || iresp.Resources[0].ResourceName != id {
		t.Errorf("validating broker %s's log.cleaner.threads: %+v, %v", id, iresp, err)
	}
	aresp, err = client.AlterConfigs(ctx, &kafka.AlterConfigsRequest{
		Resources: []kafka.AlterConfigRequestResource{{
			ResourceType: kafka.ResourceTypeBroker, ResourceName: id,
			Configs: []kafka.AlterConfigRequestConfig{{Name: "log.cleaner.threads", Value: "2"}},
		}},
		ValidateOnly: true,
	})
	if err != nil || len(aresp.Errors) != 1 || aresp.Errors[kafka.AlterConfigsResponseResource{Type: int8(kafka.ResourceTypeBroker), Name: id}] != nil {
		t.Errorf("validating broker %s's configs: %+v, %v", id, aresp, err)
	}
}

// A partition whose preferred leader is not its leader gets it back: the
// replica order is changed by a reassignment to the same brokers, then
// ElectLeaders runs the preferred election.
func TestClientAdminIntegrationElectLeaders(t *testing.T) {
	c := requireRackCluster(t)
	client := cadminClient(t, c)
	ctx := testContext(t, time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{{Partition: 0, Replicas: []int{1, 2, 3}}}})

	// Already led by its preferred leader: nothing to do.
	eresp, err := client.ElectLeaders(ctx, &kafka.ElectLeadersRequest{Topic: topic, Partitions: []int{0}, Timeout: 10 * time.Second})
	if err != nil || eresp.Error != nil || len(eresp.PartitionResults) != 1 || !errors.Is(eresp.PartitionResults[0].Error, kafka.ElectionNotNeeded) {
		t.Fatalf("ElectLeaders on a settled topic: %+v, %v; want ElectionNotNeeded", eresp, err)
	}

	aresp, err := client.AlterPartitionReassignments(ctx, &kafka.AlterPartitionReassignmentsRequest{
		Topic: topic, Assignments: []kafka.AlterPartitionReassignmentsRequestAssignment{{PartitionID: 0, BrokerIDs: []int{2, 3, 1}}},
		Timeout: 10 * time.Second,
	})
	if err != nil || aresp.Error != nil || len(aresp.PartitionResults) != 1 || aresp.PartitionResults[0].Error != nil {
		t.Fatalf("reordering the replicas: %+v, %v", aresp, err)
	}
	cadminWaitReplicas(t, c, topic, [][]int{{2, 3, 1}})

	electedNow := false
	eventually(t, 30*time.Second, topic+" led by its preferred leader 2", func() bool {
		eresp, err := client.ElectLeaders(ctx, &kafka.ElectLeadersRequest{Topic: topic, Partitions: []int{0}, Timeout: 10 * time.Second})
		if err != nil || eresp.Error != nil || len(eresp.PartitionResults) != 1 || eresp.PartitionResults[0].Partition != 0 {
			t.Fatalf("ElectLeaders: %+v, %v", eresp, err)
		}
		// nil: elected now; ElectionNotNeeded: elected already.
		switch e := eresp.PartitionResults[0].Error; {
		case e == nil:
			electedNow = true
		case !errors.Is(e, kafka.ElectionNotNeeded):
			t.Fatalf("ElectLeaders: partition 0: %v", e)
		}
		for _, addr := range c.Brokers {
			ps, err := partitionsOn(addr, topic)
			if err != nil || len(ps) != 1 || ps[0].Leader.ID != 2 {
				return false
			}
		}
		return true
	})
	t.Logf("a preferred election ran: %v", electedNow)

	// An unknown partition is that partition's error.
	eresp, err = client.ElectLeaders(ctx, &kafka.ElectLeadersRequest{Topic: topic, Partitions: []int{7}, Timeout: 10 * time.Second})
	if err != nil || len(eresp.PartitionResults) != 1 || !errors.Is(eresp.PartitionResults[0].Error, kafka.UnknownTopicOrPartition) {
		t.Errorf("electing partition 7 of 1: %+v, %v; want UnknownTopicOrPartition", eresp, err)
	}
}

func TestClientAdminIntegrationReassignPartitions(t *testing.T) {
	c := requireRackCluster(t)
	client := cadminClient(t, c)
	ctx := testContext(t, time.Minute)
	topic := createTopic(t, c, kafka.TopicConfig{ReplicaAssignments: []kafka.ReplicaAssignment{
		{Partition: 0, Replicas: []int{1, 2}},
		{Partition: 1, Replicas: []int{2, 3}},
	}})

	// Nothing to cancel: the partition's error (a nil BrokerIDs is a
	// cancellation).
	aresp, err := client.AlterPartitionReassignments(ctx, &kafka.AlterPartitionReassignmentsRequest{
		Topic: topic, Assignments: []kafka.AlterPartitionReassignmentsRequestAssignment{{PartitionID: 1}}, Timeout: 10 * time.Second,
	})
	if err != nil || aresp.Error != nil || len(aresp.PartitionResults) != 1 || !errors.Is(aresp.PartitionResults[0].Error, kafka.NoReassignmentInProgress) {
		t.Fatalf("cancelling no reassignment: %+v, %v; want NoReassignmentInProgress", aresp, err)
	}

	aresp, err = client.AlterPartitionReassignments(ctx, &kafka.AlterPartitionReassignmentsRequest{
		Assignments: []kafka.AlterPartitionReassignmentsRequestAssignment{{Topic: topic, PartitionID: 0, BrokerIDs: []int{2, 3}}},
		Timeout:     10 * time.Second,
	})
	if err != nil || aresp.Error != nil {
		t.Fatalf("moving %s/0 to [2 3]: %+v, %v", topic, aresp, err)
	}
	if want := []kafka.AlterPartitionReassignmentsResponsePartitionResult{{Topic: topic, PartitionID: 0}}; fmt.Sprint(aresp.PartitionResults) != fmt.Sprint(want) {
		t.Fatalf("PartitionResults = %+v, want %+v", aresp.PartitionResults, want)
	}

	// The move of an empty partition may be over before anyone looks: in
	// progress, it is listed adding 3 and removing 1; then nothing is.
	seenMoving := false
	eventually(t, 30*time.Second, "the reassignment of "+topic+"/0 over", func() bool {
		lresp, err := client.ListPartitionReassignments(ctx, &kafka.ListPartitionReassignmentsRequest{
			Topics:  map[string]kafka.ListPartitionReassignmentsRequestTopic{topic: {PartitionIndexes: []int{0, 1}}},
			Timeout: 10 * time.Second,
		})
		if err != nil || lresp.Error != nil || lresp.Topics == nil {
			t.Fatalf("ListPartitionReassignments: %+v, %v", lresp, err)
		}
		moving, ok := lresp.Topics[topic]
		if !ok {
			return len(lresp.Topics) == 0
		}
		seenMoving = true
		if len(moving.Partitions) != 1 {
			t.Fatalf("moving partitions = %+v, want partition 0 alone", moving.Partitions)
		}
		p := moving.Partitions[0]
		got := append([]int(nil), p.Replicas...)
		sort.Ints(got)
		if p.PartitionIndex != 0 || fmt.Sprint(p.AddingReplicas) != "[3]" || fmt.Sprint(p.RemovingReplicas) != "[1]" || fmt.Sprint(got) != "[1 2 3]" {
			t.Fatalf("moving partition = %+v, want 0 on [1 2 3] adding [3] removing [1]", p)
		}
		return false
	})
	t.Logf("reassignment seen in progress: %v", seenMoving)
	cadminWaitReplicas(t, c, topic, [][]int{{2, 3}, {2, 3}})

	// Listing every reassignment of the cluster: none of this topic.
	lresp, err := client.ListPartitionReassignments(ctx, &kafka.ListPartitionReassignmentsRequest{Timeout: 10 * time.Second})
	if err != nil || lresp.Error != nil {
		t.Fatalf("ListPartitionReassignments(all): %+v, %v", lresp, err)
	}
	if _, ok := lresp.Topics[topic]; ok {
		t.Errorf("%s still listed: %+v", topic, lresp.Topics[topic])
	}
}
