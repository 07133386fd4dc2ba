// Command e2e runs the end-to-end consume benchmark (package e2e) against
// the cluster of KAFKA_BROKERS and writes its runs (JSON lines), tables
// (markdown) and chart (SVG) to -out. See bench/RESULTS.md.
//
//	cd bench && go run ./cmd/e2e -rounds 3         # the full matrix
//	cd bench && go run ./cmd/e2e -quick            # smoke run, small topics, one round
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
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rackfetch/kafka-go/bench/e2e"
)

func main() {
	e2e.MaybeChild() // a child process consumes and exits here

	var (
		quick      = flag.Bool("quick", false, "smoke run: 60k × 100 B and 12k × 1 KiB records, one round (explicit flags still apply)")
		rounds     = flag.Int("rounds", 3, "rounds per setting")
		modes      = flag.String("modes", "partition,group", "modes: partition, group")
		partitions = flag.String("partitions", "6,60,300", "partition counts of the topics")
		values     = flag.String("values", "100,1024", "value sizes in bytes")
		fetch      = flag.String("fetch", "1048576,10000000,52428800", "per-partition fetch sizes in bytes (1 MiB, 10 MB, 50 MiB)")
		records    = flag.String("records", "100=3000000,1024=1000000", "records per topic for each value size")
		clients    = flag.String("clients", strings.Join(e2e.Clients, ","), "clients (franz-go is the base of every ratio)")
		timeout    = flag.Duration("timeout", 5*time.Minute, "limit of one client run")
		out        = flag.String("out", "results", "directory for the output files")
		name       = flag.String("name", "", "base name of the output files (default e2e-<UTC time>, quick-<UTC time> with -quick)")
	)
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["records"] {
			*records = "100=60000,1024=12000"
		}
		if !set["rounds"] {
			*rounds = 1
		}
	}
	brokers := os.Getenv("KAFKA_BROKERS")
	if brokers == "" {
		log.Fatal("KAFKA_BROKERS is unset: start a cluster and source its env file (see RESULTS.md)")
	}
	plan := e2e.Plan{
		Modes:      split(*modes),
		Partitions: ints(*partitions),
		Values:     ints(*values),
		FetchBytes: ints(*fetch),
		Records:    map[int]int{},
		Clients:    split(*clients),
		Rounds:     *rounds,
		Timeout:    *timeout,
	}
	for _, kv := range split(*records) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			log.Fatalf("-records: %q is not value=count", kv)
		}
		plan.Records[atoi(k)] = atoi(v)
	}
	for _, v := range plan.Values {
		if plan.Records[v] == 0 {
			log.Fatalf("-records names no count for %d-byte values", v)
		}
	}
	if *name == "" {
		prefix := "e2e-"
		if *quick {
			prefix = "quick-"
		}
		*name = prefix + time.Now().UTC().Format("2006-01-02T1504")
	}
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	base := filepath.Join(*out, *name)
	jf, err := os.Create(base + ".jsonl")
	if err != nil {
		log.Fatal(err)
	}
	defer jf.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	start := time.Now()
	load0 := e2e.LoadAverage()
	logf := func(format string, args ...any) { log.Printf(format, args...) }
	logf("%d settings × %d clients × %d rounds; runs to %s.jsonl; load %s", len(plan.Settings()), len(plan.Clients), plan.Rounds, base, load0)
	var runs []e2e.Run
	err = e2e.RunPlan(ctx, exe, e2e.Cluster{Brokers: split(brokers), Version: os.Getenv("KAFKA_VERSION")}, plan, logf, func(r e2e.Run) {
		runs = append(runs, r)
		js, _ := json.Marshal(r)
		fmt.Fprintf(jf, "%s\n", js)
	})
	took := time.Since(start)
	if err != nil {
		logf("stopped: %v", err)
	}
	sums := e2e.Summarize(runs)
	mf, ferr := os.Create(base + ".md")
	if ferr != nil {
		log.Fatal(ferr)
	}
	fmt.Fprintf(mf, "# %s\n\n", *name)
	fmt.Fprintf(mf, "Command: `%s`  \n", strings.Join(append([]string{"go run ./cmd/e2e"}, os.Args[1:]...), " "))
	fmt.Fprintf(mf, "Started %s UTC, took %s; %s, GOMAXPROCS %d; cluster %s (Kafka %s); load average %s at the start, %s at the end.\n\n",
		start.UTC().Format("2006-01-02 15:04"), took.Round(time.Second), runtime.Version(), runtime.GOMAXPROCS(0),
		brokers, os.Getenv("KAFKA_VERSION"), load0, e2e.LoadAverage())
	fmt.Fprintf(mf, "%s\n\n", e2e.RatiosNote)
	e2e.Overview(mf, sums)
	e2e.Markdown(mf, sums)
	mf.Close()
	sf, ferr := os.Create(base + ".svg")
	if ferr != nil {
		log.Fatal(ferr)
	}
	e2e.SVG(sf, sums, fmt.Sprintf("%s: medians of per-round ratios to %s, %d round(s)", *name, e2e.Base, plan.Rounds))
	sf.Close()
	logf("done in %s: %s.{jsonl,md,svg}", took.Round(time.Second), base)
	if err != nil {
		os.Exit(1)
	}
	for _, r := range runs {
		if !r.OK() {
			os.Exit(1)
		}
	}
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

func ints(s string) []int {
	var out []int
	for _, f := range split(s) {
		out = append(out, atoi(f))
	}
	return out
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64) // 3e6
		if ferr != nil || f != float64(int(f)) {
			log.Fatalf("%q is not a number", s)
		}
		return int(f)
	}
	return n
}
