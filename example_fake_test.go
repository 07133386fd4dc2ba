package kafka_test

// The examples run against in-process fake brokers (testing/fakebroker):
// real TCP listeners speaking Kafka on 127.0.0.1, so `go test` checks their
// output without a cluster. Point Brokers at your own cluster instead.

import (
	"fmt"
	"testing"

	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// exampleTB stands in for the *testing.T an Example does not have:
// fakebroker.NewCluster calls only Helper, Cleanup, Errorf and Fatalf, so
// the embedded nil testing.TB is never reached.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (t *exampleTB) Helper()          {}
func (t *exampleTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }

// Errorf prints to stdout, so that the example's Output check fails.
func (t *exampleTB) Errorf(format string, args ...any) {
	fmt.Printf("fake broker error: "+format+"\n", args...)
}

func (t *exampleTB) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf(format, args...))
}

func (t *exampleTB) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// startRackCluster starts brokers 1, 2, 3 in racks a, b, c whose leaders
// name a preferred read replica (replica.selector.class =
// RackAwareReplicaSelector), with topic "payments": one partition on all
// three, led by broker 1 in rack a. values, if any, are appended to it.
// The returned function stops the brokers.
func startRackCluster(values ...string) (*fakebroker.Cluster, func()) {
	tb := &exampleTB{}
	c := fakebroker.NewCluster(tb, fakebroker.Config{
		Brokers:           3,
		Racks:             []string{"a", "b", "c"},
		RackAwareSelector: true,
	})
	c.CreateTopic("payments", 1, 3)
	if len(values) > 0 {
		c.AppendRecords("payments", 0, values...)
	}
	return c, tb.close
}
