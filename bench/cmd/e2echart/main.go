// Command e2echart redraws the chart of an e2e run from its runs file and
// prints its tables: go run ./cmd/e2echart results/e2e-....jsonl writes the
// .svg next to it and the markdown tables (overview, then one per setting)
// to stdout. Given several runs files of the same settings, it summarizes
// them as one run (each file's rounds numbered after the previous file's)
// and writes the chart only where -svg says.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/rackfetch/kafka-go/bench/e2e"
)

func main() {
	title := flag.String("title", "", "chart title (default: the file's name)")
	svg := flag.String("svg", "", "where to write the chart (default: next to a single runs file; none for several)")
	flag.Parse()
	if flag.NArg() < 1 {
		log.Fatal("usage: e2echart [-title T] [-svg FILE] runs.jsonl [more.jsonl ...]")
	}
	var runs []e2e.Run
	rounds := 0
	for _, in := range flag.Args() {
		f, err := os.Open(in)
		if err != nil {
			log.Fatal(err)
		}
		more, err := e2e.ReadRuns(f)
		f.Close()
		if err != nil {
			log.Fatalf("%s: %v", in, err)
		}
		next := rounds
		for i := range more {
			more[i].Round += rounds
			next = max(next, more[i].Round+1)
		}
		runs, rounds = append(runs, more...), next
	}
	base := strings.TrimSuffix(flag.Arg(0), ".jsonl")
	if *svg == "" && flag.NArg() == 1 {
		*svg = base + ".svg"
	}
	if *title == "" {
		*title = fmt.Sprintf("%s: medians of per-round ratios to %s", filepath.Base(base), e2e.Base)
	}
	sums := e2e.Summarize(runs)
	if *svg != "" {
		write(*svg, func(f *os.File) { e2e.SVG(f, sums, *title) })
	}
	e2e.Overview(os.Stdout, sums)
	e2e.Markdown(os.Stdout, sums)
}

func write(path string, fill func(*os.File)) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	fill(f)
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
