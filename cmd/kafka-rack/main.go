// Command kafka-rack checks rack-aware fetching (KIP-392) for a topic: per
// partition, the leader, the replica a Reader in the given rack would read
// and why, the brokers' replica.selector.class and broker.rack, and the
// cross-zone cost it saves at a consume rate given (-rate) or measured
// (-observe).
//
//	kafka-rack -brokers kafka-1:9092 -topic payments -rack use1-az1 -observe 1m
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
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "kafka-rack:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "kafka-rack:", err)
		os.Exit(1)
	}
}

// errUsage marks errors of the command line.
var errUsage = errors.New("bad command line")

// run is the command: parse args, build the report, print it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	rep, err := buildReport(ctx, cfg)
	if err != nil {
		return err
	}
	if err := addCost(ctx, cfg, rep); err != nil {
		return err
	}
	if cfg.JSON {
		err = writeJSON(stdout, rep)
	} else {
		err = writeTable(stdout, rep)
	}
	if err != nil || !cfg.Watch {
		return err
	}
	ids := make([]int, len(rep.Partitions))
	for i, p := range rep.Partitions {
		ids[i] = p.Partition
	}
	if !cfg.JSON {
		fmt.Fprintf(stdout, "\nwatching Readers in rack %q, one per partition, from the end of the log (Ctrl-C ends):\n", cfg.Rack)
	}
	return watch(ctx, cfg, ids, stdout, time.Second, 0)
}

// addCost adds the cost estimate when a rate is given or observed.
func addCost(ctx context.Context, cfg *config, rep *Report) error {
	switch {
	case cfg.Rate > 0:
		rep.Cost = estimateCost(rep.Partitions, cfg.Rate*1e6, nil, cfg.Price)
	case cfg.Observe > 0:
		ids := make([]int, len(rep.Partitions))
		for i, p := range rep.Partitions {
			ids[i] = p.Partition
		}
		observed, elapsed, err := observeBytes(ctx, cfg, ids, cfg.Observe)
		if err != nil {
			return err
		}
		secs := elapsed.Seconds()
		var sum int64
		for i := range rep.Partitions {
			rep.Partitions[i].Bytes = observed[rep.Partitions[i].Partition]
			sum += rep.Partitions[i].Bytes
		}
		rep.Cost = estimateCost(rep.Partitions, float64(sum)/secs, observed, cfg.Price)
		rep.Cost.ObservedSeconds = secs
	}
	return nil
}
