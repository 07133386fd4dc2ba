package e2e

import (
	"context"
	"fmt"
	"time"
)

// Plan is a matrix of settings, each run Rounds times for every client.
type Plan struct {
	Modes      []string
	Partitions []int
	Values     []int
	FetchBytes []int
	// Records per value size, over the whole topic (rounded down to a
	// multiple of the partition count).
	Records map[int]int
	Clients []string
	Rounds  int
	// Timeout bounds one client run.
	Timeout time.Duration
}

// Settings lists the plan's settings in the order they run.
func (p Plan) Settings() []Setting {
	var out []Setting
	for _, mode := range p.Modes {
		for _, parts := range p.Partitions {
			for _, v := range p.Values {
				for _, fb := range p.FetchBytes {
					n := p.Records[v] / parts * parts
					out = append(out, Setting{Mode: mode, Partitions: parts, ValueSize: v, Records: n, FetchBytes: fb})
				}
			}
		}
	}
	return out
}

// Cluster is where the runs read from.
type Cluster struct {
	Brokers []string
	Version string // KAFKA_VERSION, for sarama
}

// RunPlan makes sure every topic of the plan holds its records, then runs
// each setting's rounds: within a round, every client of the setting back to
// back, each in a child process of exe (see Spawn), the starting client
// rotating by round. Every run is passed to onRun as it ends.
func RunPlan(ctx context.Context, exe string, cl Cluster, p Plan, logf func(string, ...any), onRun func(Run)) error {
	settings := p.Settings()
	expected := map[string]Sum{}
	for _, s := range settings {
		if _, ok := expected[s.Topic()]; ok {
			continue
		}
		if err := EnsureTopic(ctx, cl.Brokers, s, logf); err != nil {
			return err
		}
		expected[s.Topic()] = Expected(s.Records, s.ValueSize, false)
	}
	for i, s := range settings {
		logf("[%d/%d] %s", i+1, len(settings), s.Name())
		for round := 0; round < p.Rounds; round++ {
			for k := range p.Clients {
				client := p.Clients[(k+round)%len(p.Clients)]
				spec := Spec{Setting: s, Client: client, Brokers: cl.Brokers, KafkaVersion: cl.Version, Timeout: p.Timeout}
				if s.Mode == ModeGroup {
					spec.GroupID = fmt.Sprintf("bench-e2e-%s-%d", client, time.Now().UnixNano())
				}
				run := Spawn(exe, spec, expected[s.Topic()])
				run.Round = round
				if run.Error != "" {
					logf("  round %d %-15s FAILED: %s", round+1, client, run.Error)
				} else {
					logf("  round %d %-15s %9.0f records/s  %6.2f CPU-s/GB  %5d MB RSS  %3d sockets  %5.1fs",
						round+1, client, run.RecordsPerSec(), run.CPUPerGB(), run.MaxRSS/1e6, run.Sockets, run.Wall)
				}
				onRun(run)
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
	return nil
}
