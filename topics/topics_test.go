package topics_test

import (
	"context"
	"regexp"
	"sort"
	"testing"
	"time"

	kafka "github.com/rackfetch/kafka-go"
	ktesting "github.com/rackfetch/kafka-go/testing"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/rackfetch/kafka-go/topics"
)

func names(ts []kafka.Topic) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}

func TestListAndListRe(t *testing.T) {
	c := fakebroker.NewCluster(t, fakebroker.Config{Brokers: 2})
	c.CreateTopic("orders", 3, 2)
	c.CreateTopic("orders-dlq", 1, 1)
	c.CreateTopic("payments", 2, 2)
	client := &kafka.Client{Addr: kafka.TCP(c.Broker(1).Addr()), Timeout: 10 * time.Second}
	ctx := context.Background()

	all, err := topics.List(ctx, client)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if got := names(all); len(got) != 3 || got[0] != "orders" || got[1] != "orders-dlq" || got[2] != "payments" {
		t.Fatalf("List = %v, want [orders orders-dlq payments]", got)
	}
	for _, tp := range all {
		if tp.Name == "orders" && len(tp.Partitions) != 3 {
			t.Errorf("orders has %d partitions, want 3", len(tp.Partitions))
		}
	}

	matched, err := topics.ListRe(ctx, client, regexp.MustCompile(`^orders`))
	if err != nil {
		t.Fatalf("ListRe: %v", err)
	}
	if got := names(matched); len(got) != 2 || got[0] != "orders" || got[1] != "orders-dlq" {
		t.Fatalf("ListRe(^orders) = %v, want [orders orders-dlq]", got)
	}
	if none, err := topics.ListRe(ctx, client, regexp.MustCompile(`^nothing$`)); err != nil || len(none) != 0 {
		t.Fatalf("ListRe(^nothing$) = %v, %v; want nothing", names(none), err)
	}
}

func TestListBadInput(t *testing.T) {
	ctx := context.Background()
	if _, err := topics.List(ctx, nil); err == nil {
		t.Error("List with a nil client: no error")
	}
	if _, err := topics.ListRe(ctx, &kafka.Client{Addr: kafka.TCP("127.0.0.1:1")}, nil); err == nil {
		t.Error("ListRe with a nil regexp: no error")
	}
	// A cluster nobody listens on: an error, not a hang.
	client := &kafka.Client{Addr: kafka.TCP("127.0.0.1:1"), Timeout: 5 * time.Second}
	if _, err := topics.List(ctx, client); err == nil {
		t.Error("List of an unreachable cluster: no error")
	}
}

// On the real cluster, a topic created for the test is listed with its partitions.
func TestListIntegration(t *testing.T) {
	c := ktesting.RequireCluster(t)
	topic := ktesting.UniqueTopic(t)
	client := &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 20 * time.Second}
	ctx := context.Background()
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: 2, ReplicationFactor: 3}}})
	if err != nil || resp.Errors[topic] != nil {
		t.Fatalf("CreateTopics: %v, %v", err, resp)
	}
	t.Cleanup(func() { client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}}) })

	re := regexp.MustCompile("^" + regexp.QuoteMeta(topic) + "$")
	var found []kafka.Topic
	deadline := time.Now().Add(20 * time.Second)
	for len(found) == 0 || len(found[0].Partitions) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("topic %s not listed with 2 partitions within 20 s: %v", topic, found)
		}
		if found, err = topics.ListRe(ctx, client, re); err != nil {
			t.Fatalf("ListRe: %v", err)
		}
	}
	all, err := topics.List(ctx, client)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	listed := false
	for _, tp := range all {
		listed = listed || tp.Name == topic
	}
	if !listed {
		t.Errorf("List does not include %s", topic)
	}
}
