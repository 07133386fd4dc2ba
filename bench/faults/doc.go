// Package faults measures consumers through network faults between them and
// one broker: the fault matrix. Each window (client × target × fault) makes
// a topic of its own (6 partitions, RF 3, two led in each of racks a, b and
// c) and a group coordinated by the rack-c broker; a producer writes
// sequence-numbered records throughout through the brokers' own listeners,
// while the consumer, in rack b, reads through the cluster's fault proxy
// (testing/netfault, a cluster started with KAFKA_NETFAULT=1). Once every
// partition is read in rack b, the fault is put on one broker's client path
// for Spec.For, then cleared, and the window goes on until reads are back.
//
// What is measured is what the application and the sockets see, the same
// way for every client: when reads left the faulted broker and came back
// (the brokers the consumer reads each partition from: this library's
// RoutingStats, franz-go's fetch-batch hook), the longest time without a
// delivery, the share of bytes read outside the rack (counted at the
// sockets, bench/wire), records lost, duplicated or out of order, errors
// returned to the application, and the requests, connections and log lines
// per second during the fault. The faulted broker's presence in every ISR
// is sampled, to show the fault was the client path's alone.
package faults
