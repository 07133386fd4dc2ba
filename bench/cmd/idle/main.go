// Command idle measures what consumers cost while they have nothing to read
// (package idle): a topic of 300 partitions with 10 records each is read to
// the end, then each client waits for more for a minute. With -kill N,
// broker N is killed once everything was read and started again after the
// client's run, and the window starts -settle later. -settle without -kill
// starts the window that long after everything was read: the cost of a
// consumer that has been idle for a while, once its first minute's
// slowing-down is over.
//
//	cd bench && go run ./cmd/idle                      # idle, every client and mode
//	cd bench && go run ./cmd/idle -settle 2m           # idle for 2 minutes before the window
//	cd bench && go run ./cmd/idle -kill 3 -settle 2m   # one broker dead for good
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rackfetch/kafka-go/bench/idle"
)

func main() {
	idle.MaybeChild()
	var (
		partitions = flag.Int("partitions", 300, "partitions of the topic")
		per        = flag.Int("per", 10, "records per partition")
		rack       = flag.String("rack", "b", "the consumers' rack")
		window     = flag.Duration("idle", time.Minute, "the measured idle window")
		clients    = flag.String("clients", strings.Join(idle.Clients, ","), "clients")
		modes      = flag.String("modes", "partition,group", "modes: partition, group")
		kill       = flag.Int("kill", 0, "broker to kill once everything was read (0: none)")
		settle     = flag.Duration("settle", 2*time.Minute, "time from the kill (with -kill) or from reading to the end (when set without -kill) to the window")
		cluster    = flag.String("cluster", "../testing/cluster/kafka-cluster", "the cluster tool (with -kill)")
		out        = flag.String("out", "results", "directory for the JSON lines of the runs")
		name       = flag.String("name", "", "base name of the output file (default idle-<UTC time>)")
	)
	flag.Parse()
	settleSet := false
	flag.Visit(func(f *flag.Flag) { settleSet = settleSet || f.Name == "settle" })
	brokers := os.Getenv("KAFKA_BROKERS")
	if brokers == "" {
		log.Fatal("KAFKA_BROKERS is unset: start a cluster and source its env file")
	}
	ctx := context.Background()
	bl := strings.Split(brokers, ",")
	if err := idle.EnsureTopic(ctx, bl, *partitions, *per); err != nil {
		log.Fatal(err)
	}
	racks, err := idle.Racks(ctx, bl)
	if err != nil {
		log.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	if *name == "" {
		*name = "idle-" + time.Now().UTC().Format("20060102-150405")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	jf, err := os.Create(filepath.Join(*out, *name+".jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	defer jf.Close()
	fmt.Printf("| client | mode | requests/s | Fetch/s | Metadata/s | ListOffsets/s | outside rack %s /s | dials (failed) | CPU-s | GC CPU-s (GCs) | goroutines | sockets | RSS MB |\n", *rack)
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, mode := range strings.Split(*modes, ",") {
		for _, client := range strings.Split(*clients, ",") {
			spec := idle.Spec{Client: client, Mode: mode, Brokers: bl, Topic: idle.TopicName(*partitions, *per),
				Partitions: *partitions, Records: *partitions * *per, Rack: *rack, ReadLimit: 3 * time.Minute,
				Idle: *window}
			if mode == idle.ModeGroup {
				spec.GroupID = fmt.Sprintf("bench-idle-%s-%d", client, time.Now().UnixNano())
			}
			if *kill > 0 {
				spec.Kill = fmt.Sprintf("%s kill %d", *cluster, *kill)
			}
			if *kill > 0 || settleSet {
				spec.Settle = *settle
			}
			rep := idle.Spawn(exe, spec)
			if *kill > 0 {
				if out, err := exec.Command(*cluster, "start", fmt.Sprint(*kill)).CombinedOutput(); err != nil {
					log.Fatalf("starting broker %d again: %v: %s", *kill, err, out)
				}
			}
			line, _ := json.Marshal(struct {
				idle.Spec
				Report idle.Report `json:"report"`
			}{spec, rep})
			fmt.Fprintln(jf, string(line))
			if rep.Error != "" {
				fmt.Printf("| %s | %s | error: %s |\n", client, mode, rep.Error)
				continue
			}
			printRow(client, mode, rep, racks, *rack)
		}
	}
}

func printRow(client, mode string, rep idle.Report, racks map[string]string, rack string) {
	secs := rep.Window.Seconds()
	t := rep.Requests.Total()
	var outside int64
	var addrs []string
	for addr, a := range rep.Requests {
		addrs = append(addrs, addr)
		if r, ok := racks[addr]; ok && r != rack {
			outside += a.Requests
		}
	}
	sort.Strings(addrs)
	fmt.Printf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %d (%d) | %.3f | %.3f (%d) | %d | %d | %.0f |\n", client, mode,
		float64(t.Requests)/secs, float64(t.ByAPI[1])/secs, float64(t.ByAPI[3])/secs, float64(t.ByAPI[2])/secs,
		float64(outside)/secs, t.Dials, t.FailedDials, rep.CPU, rep.GCCPU, rep.GCs, rep.Goroutines, rep.Sockets, float64(rep.RSS)/1e6)
}
