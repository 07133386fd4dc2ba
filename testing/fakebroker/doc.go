// Package fakebroker is an in-process fake Kafka cluster for tests of code
// that uses this library: start one in a test, point a kafka.Reader,
// kafka.Writer, Conn or Client at its addresses, and make it misbehave on
// cue. Every broker is a real TCP listener on 127.0.0.1 speaking the Kafka
// protocol, so the client under test runs unchanged; nothing needs Docker
// or a JVM, and a test that scripts its faults runs the same way each time.
//
// # Starting a cluster
//
// NewCluster starts brokers for a test and stops them when it ends:
//
//	c := fakebroker.NewCluster(t, fakebroker.Config{
//		Brokers:           3,
//		Racks:             []string{"a", "b", "c"}, // broker.rack of brokers 1, 2, 3
//		RackAwareSelector: true,                    // replica.selector.class=RackAwareReplicaSelector
//	})
//	c.CreateTopic("orders", 6, 3) // 6 partitions, 3 replicas each
//	r := kafka.NewReader(kafka.ReaderConfig{Brokers: c.Addrs(), Topic: "orders", Rack: "b"})
//
// Outside a test (an Example, a demo program) Start does the same and Close
// stops the brokers.
//
// Brokers answer from one shared model: topics and their partitions
// (CreateTopic, or Config.AutoCreateTopics), leaders and in-sync replicas
// (SetLeader, SetPartition), logs (Append, AppendRecords, or a Writer's
// produce requests), and one group coordinator with committed offsets
// (Config.Coordinator), so consumer groups, the Writer, and creating and
// deleting topics work against it; other requests (ACLs, configs,
// transactions) are not served: Handle can answer them. Partition p of a new topic is led by broker p+1 (modulo
// the number of brokers).
//
// # Racks and follower fetching (KIP-392)
//
// Config.Racks gives each broker a rack. With Config.RackAwareSelector (or
// SetRackAwareSelector, to turn it on or off while clients run), a
// partition's leader answers a consumer fetch that names a rack by naming
// the in-sync replica in that rack as its preferred read replica, with no
// records, as Kafka's RackAwareReplicaSelector does; followers then serve
// the records. Without it, leaders serve every fetch themselves, which is
// how a client's behaviour against a cluster that does not support follower
// fetching is tested. SetReplicaHighWatermark makes a follower lag the
// leader.
//
// # Faults
//
//   - Broker.Stop kills a broker: its listener closes and every connection
//     is reset; metadata from the other brokers stops listing it. Start
//     brings it back on the same port.
//   - Broker.StopUnnoticed kills it but the cluster does not notice:
//     metadata still lists it and leaders keep naming it as preferred read
//     replica, as Kafka does until replica.lag.time.max.ms drops it from the
//     in-sync replicas.
//   - Broker.Script answers the Nth request of a kind (counting from 1, per
//     broker) with a Step: an error code (Step.ErrorCode, e.g. 6 for
//     NOT_LEADER_OR_FOLLOWER), a whole response, an edit of the default
//     answer (PreferReplica forges a redirect), or a closed connection.
//     ScriptNext scripts the next request not yet received.
//   - Action.Delay holds an answer for a duration, as a slow broker would;
//     Action.Wait holds it until a channel the test controls is closed,
//     which tests a request in flight at a chosen moment without sleeping.
//   - Broker.Handle replaces the answer to every request of a kind;
//     Broker.Default gives the answer the model would have sent.
//   - Broker.SetMaxVersion makes a broker behave as an older Kafka version
//     for one API.
//
// SASL/PLAIN (Config.SASL) or other mechanisms (Config.SASLMechanisms) can be
// required of every connection.
//
// # Observing the client
//
// Broker.Requests counts the requests of a kind a broker received,
// Broker.Received returns them decoded, and Broker.Await returns a channel
// closed once the Nth has arrived: wait on it instead of sleeping.
// Broker.FetchBytes counts the fetch response bytes a broker sent, which is
// how a test checks that reads stayed in a rack. Records and Log show what
// a partition holds.
//
// Requests and responses are the types of package
// github.com/rackfetch/kafka-go/protocol.
package fakebroker
