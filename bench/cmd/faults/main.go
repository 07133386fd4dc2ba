// Command faults runs the fault matrix (package faults): for each client,
// target and fault, a window on a topic and group of its own, with the fault
// on the target broker's client path for -fault-for. It needs a cluster
// started with KAFKA_NETFAULT=1 (source its env file). Results go to
// <out>/<name>.jsonl, one line per window, and a Markdown table to stdout.
//
//	cd bench && go run ./cmd/faults                                  # the whole matrix, 30 s faults
//	cd bench && go run ./cmd/faults -targets follower -faults blackhole,latency-300ms -fault-for 10s
//
// Every fault is cleared when the command ends, also on SIGINT or SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rackfetch/kafka-go/bench/faults"
)

func main() {
	var faultNames []string
	for _, f := range faults.Faults {
		faultNames = append(faultNames, f.Name)
	}
	var (
		clients  = flag.String("clients", strings.Join(faults.Clients, ","), "clients: "+strings.Join(faults.Clients, ", "))
		targets  = flag.String("targets", strings.Join(faults.Targets, ","), "whose path to fault: "+strings.Join(faults.Targets, ", "))
		faultArg = flag.String("faults", strings.Join(faultNames, ","), "faults: "+strings.Join(faultNames, ", "))
		faultFor = flag.Duration("fault-for", 30*time.Second, "how long each fault lasts")
		after    = flag.Duration("after", 15*time.Second, "how long each window goes on after the heal (longer while reads are not back, up to a minute)")
		rate     = flag.Int("rate", 2400, "records/s the producer writes in all (200 B each)")
		rack     = flag.String("rack", "b", "the consumers' rack")
		out      = flag.String("out", "results", "directory for the JSON lines of the windows")
		name     = flag.String("name", "", "base name of the output file (default faults-<UTC time>)")
		writer   = flag.Bool("writer-faulted", false, "the producer (this library's Writer) writes through the fault too: the Writer's rows")
	)
	flag.Parse()
	if err := run(*clients, *targets, *faultArg, *faultFor, *after, *rate, *rack, *out, *name, *writer); err != nil {
		log.Fatal(err)
	}
}

func run(clients, targets, faultArg string, faultFor, after time.Duration, rate int, rack, out, name string, writer bool) error {
	cs, ts, fs := split(clients), split(targets), split(faultArg)
	for _, c := range cs {
		if err := faults.CheckClient(c); err != nil {
			return err
		}
	}
	for _, t := range ts {
		if err := faults.CheckTarget(t); err != nil {
			return err
		}
	}
	for _, f := range fs {
		if _, err := faults.FaultByName(f); err != nil {
			return err
		}
	}
	if faultFor <= 0 || rate <= 0 {
		return fmt.Errorf("-fault-for and -rate must be positive")
	}
	cl, err := faults.ClusterFromEnv()
	if err != nil {
		return fmt.Errorf("%w (start a cluster with KAFKA_NETFAULT=1 and source its env file)", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Whatever happens, no fault outlives the run.
	clearAll := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.NF.Clear(cctx, 0); err != nil {
			log.Printf("clearing every fault: %v", err)
		}
	}
	clearAll()
	defer clearAll()

	if name == "" {
		name = "faults-" + time.Now().UTC().Format("20060102-150405")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(out, name+".jsonl")
	jf, err := os.Create(path)
	if err != nil {
		return err
	}
	defer jf.Close()

	n := len(cs) * len(ts) * len(fs)
	log.Printf("%d windows of %v faults; results in %s", n, faultFor, path)
	var rows []faults.Result
	// The table holds every window measured, also when the run is cut short.
	defer func() {
		faults.TableHeader(os.Stdout)
		for _, r := range rows {
			faults.Row(os.Stdout, r)
		}
		if writer {
			fmt.Println()
			faults.WriterHeader(os.Stdout)
			for _, r := range rows {
				faults.WriterRow(os.Stdout, r)
			}
		}
	}()
	i := 0
	for _, t := range ts {
		for _, f := range fs {
			for _, c := range cs {
				i++
				spec := faults.Spec{Client: c, Target: t, Fault: f, For: faultFor, After: after, Rack: rack, Rate: rate, WriterFaulted: writer}
				log.Printf("window %d/%d: %s, %s on the %s's path", i, n, c, f, t)
				r := faults.Run(ctx, cl, spec)
				if r.Error != "" {
					log.Printf("window %d/%d: %s", i, n, r.Error)
				}
				line, _ := json.Marshal(r)
				fmt.Fprintln(jf, string(line))
				rows = append(rows, r)
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted after %d of %d windows: %w", i, n, ctx.Err())
				}
			}
		}
	}
	return nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
