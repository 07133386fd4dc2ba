// Command kafka-rack checks rack-aware fetching (KIP-392) for topics: per
// partition, the leader, the replica a Reader in the given rack would read
// and why, the brokers' replica.selector.class and broker.rack, and the
// cross-zone cost it saves at a consume rate given (-rate) or measured
// (-observe), for consumers in one rack (-rack) or spread over several
// (-racks). With -min-share it gates a deploy: exit status 3 when less
// than that share is read in the rack(s). It also prints the partitions a
// Writer with Rack in the rack(s) sends its keyless messages to (the
// Writer's rule, skew guard included: -writer-min-share), and with
// -produce-rate the cross-zone cost that saves.
//
//	kafka-rack -brokers kafka-1:9092 -topic payments -rack use1-az1 -observe 1m
//	kafka-rack -brokers kafka-1:9092 -topic payments,orders -racks use1-az1,use1-az2,use1-az4 -min-share 0.99
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err and returns the exit status that tells CI what
// happened: 0 ok, 1 the check failed to run, 2 a bad command line, 3 below
// -min-share.
func exitCode(err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintln(stderr, "kafka-rack:", err)
	switch {
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errBelowMinShare):
		return 3
	}
	return 1
}

// errUsage marks errors of the command line.
var errUsage = errors.New("bad command line")

// run is the command: parse args, build the reports, print them, gate.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err := resolveRack(ctx, cfg, stderr); err != nil {
		return err
	}
	reports, err := checkAll(ctx, cfg)
	if err != nil {
		return err
	}
	sum, err := summarize(ctx, cfg, reports)
	if err != nil {
		return err
	}
	if err := writeSummary(stdout, sum, cfg.JSON); err != nil {
		return err
	}
	if err := checkMinShare(cfg, sum); err != nil || !cfg.Watch {
		return err
	}
	var tps []topicPartition
	for _, rep := range reports {
		for _, p := range rep.Partitions {
			tps = append(tps, topicPartition{rep.Topic, p.Partition})
		}
	}
	if !cfg.JSON {
		fmt.Fprintf(stdout, "\nwatching Readers in rack %q, one per partition, from the end of the log (Ctrl-C ends):\n", cfg.Rack)
	}
	return watch(ctx, cfg, tps, stdout, time.Second, 0)
}
