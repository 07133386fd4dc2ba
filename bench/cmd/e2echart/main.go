// Command e2echart redraws the chart of an e2e run from its runs file and
// prints its tables: go run ./cmd/e2echart results/e2e-....jsonl writes the
// .svg next to it and the markdown tables (overview, then one per setting)
// to stdout.
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
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: e2echart [-title T] runs.jsonl")
	}
	in := flag.Arg(0)
	f, err := os.Open(in)
	if err != nil {
		log.Fatal(err)
	}
	runs, err := e2e.ReadRuns(f)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	base := strings.TrimSuffix(in, ".jsonl")
	name := filepath.Base(base)
	if *title == "" {
		*title = fmt.Sprintf("%s: medians of per-round ratios to %s", name, e2e.Base)
	}
	sums := e2e.Summarize(runs)
	write(base+".svg", func(f *os.File) { e2e.SVG(f, sums, *title) })
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
