// Command benchratio reads go test -bench output made of several rounds of
// the same benchmarks (each round one run holding every client) and prints
// markdown tables: per setting, each client's median of a metric and the
// median, over rounds, of the ratio of one client to each other, taken
// within a round. On a shared machine whose load drifts, ratios of
// neighbours in time are steadier than ratios of medians.
//
//	go run ./cmd/benchratio -key client -of rackfetch < out.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	key := flag.String("key", "client", "name key (key=value part of the sub-benchmark name) that tells the clients apart")
	of := flag.String("of", "rackfetch", "client whose ratios to the others are shown")
	metrics := flag.String("metrics", "ns/record,cpu-ns/record,records/s", "comma-separated units to tabulate (absent ones are left out)")
	best := flag.String("best", "ns/record", "comma-separated units also tabulated by their best round (the lowest value): the least disturbed one on a loaded machine")
	counts := flag.String("counts", "allocs/record", "comma-separated units shown as medians per 10,000 (no ratios)")
	flag.Parse()
	res, err := parse(os.Stdin, *key)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
	for _, unit := range strings.Split(*metrics, ",") {
		if res.has(unit) {
			res.ratioTable(os.Stdout, unit, *of)
		}
	}
	for _, unit := range strings.Split(*best, ",") {
		if res.has(unit) {
			res.bestTable(os.Stdout, unit, *of)
		}
	}
	for _, unit := range strings.Split(*counts, ",") {
		if res.has(unit) {
			res.countTable(os.Stdout, unit)
		}
	}
}

// results holds values[setting][client][unit] = one value per round, in
// the order met.
type results struct {
	settings []string
	clients  []string
	values   map[string]map[string]map[string][]float64
}

func parse(r io.Reader, key string) (*results, error) {
	res := &results{values: map[string]map[string]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // GOMAXPROCS suffix
			}
		}
		var setting []string
		client := ""
		for _, part := range strings.Split(name, "/") {
			if v, ok := strings.CutPrefix(part, key+"="); ok {
				client = v
			} else {
				setting = append(setting, part)
			}
		}
		if client == "" {
			continue
		}
		s := strings.Join(setting, "/")
		if res.values[s] == nil {
			res.values[s] = map[string]map[string][]float64{}
			res.settings = append(res.settings, s)
		}
		if res.values[s][client] == nil {
			res.values[s][client] = map[string][]float64{}
			if !slices.Contains(res.clients, client) {
				res.clients = append(res.clients, client)
			}
		}
		// f[1] is the iteration count; then value, unit pairs.
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", f[0], err)
			}
			res.values[s][client][f[i+1]] = append(res.values[s][client][f[i+1]], v)
		}
	}
	return res, sc.Err()
}

// has reports whether any result has unit.
func (res *results) has(unit string) bool {
	for _, byClient := range res.values {
		for _, byUnit := range byClient {
			if len(byUnit[unit]) > 0 {
				return true
			}
		}
	}
	return false
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// ratioTable prints each client's median and, for every other client, the
// per-round ratio of client of to it: median [min–max] (n rounds).
func (res *results) ratioTable(w io.Writer, unit, of string) {
	var others []string
	for _, c := range res.clients {
		if c != of {
			others = append(others, c)
		}
	}
	fmt.Fprintf(w, "\n%s (median over rounds; ratio = %s ÷ other, per round: median [min–max])\n\n", unit, of)
	fmt.Fprint(w, "| setting |")
	for _, c := range res.clients {
		fmt.Fprintf(w, " %s |", c)
	}
	for _, c := range others {
		fmt.Fprintf(w, " %s ÷ %s |", of, c)
	}
	fmt.Fprint(w, "\n|---|")
	fmt.Fprint(w, strings.Repeat("---:|", len(res.clients)+len(others)))
	fmt.Fprintln(w)
	for _, s := range res.settings {
		fmt.Fprintf(w, "| %s |", s)
		for _, c := range res.clients {
			fmt.Fprintf(w, " %s |", num(median(res.values[s][c][unit])))
		}
		mine := res.values[s][of][unit]
		for _, c := range others {
			theirs := res.values[s][c][unit]
			var ratios []float64
			for i := 0; i < len(mine) && i < len(theirs); i++ {
				if theirs[i] > 0 {
					ratios = append(ratios, mine[i]/theirs[i])
				}
			}
			if len(ratios) == 0 {
				fmt.Fprint(w, " – |")
				continue
			}
			fmt.Fprintf(w, " %.2f [%.2f–%.2f] |", median(ratios), slices.Min(ratios), slices.Max(ratios))
		}
		fmt.Fprintln(w)
	}
}

// bestTable prints each client's lowest value of unit over the rounds and
// the ratio of client of's to each other's.
func (res *results) bestTable(w io.Writer, unit, of string) {
	fmt.Fprintf(w, "\n%s, best round of each client (lowest value; ratio = %s ÷ other)\n\n| setting |", unit, of)
	for _, c := range res.clients {
		fmt.Fprintf(w, " %s |", c)
	}
	for _, c := range res.clients {
		if c != of {
			fmt.Fprintf(w, " %s ÷ %s |", of, c)
		}
	}
	fmt.Fprint(w, "\n|---|"+strings.Repeat("---:|", 2*len(res.clients)-1)+"\n")
	for _, s := range res.settings {
		fmt.Fprintf(w, "| %s |", s)
		low := map[string]float64{}
		for _, c := range res.clients {
			if v := res.values[s][c][unit]; len(v) > 0 {
				low[c] = slices.Min(v)
			}
			fmt.Fprintf(w, " %s |", num(low[c]))
		}
		for _, c := range res.clients {
			if c == of {
				continue
			}
			if low[c] > 0 {
				fmt.Fprintf(w, " %.2f |", low[of]/low[c])
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintln(w)
	}
}

// countTable prints each client's median of unit, per 10,000.
func (res *results) countTable(w io.Writer, unit string) {
	fmt.Fprintf(w, "\n%s × 10,000 (median over rounds)\n\n| setting |", unit)
	for _, c := range res.clients {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprint(w, "\n|---|"+strings.Repeat("---:|", len(res.clients))+"\n")
	for _, s := range res.settings {
		fmt.Fprintf(w, "| %s |", s)
		for _, c := range res.clients {
			fmt.Fprintf(w, " %s |", num(median(res.values[s][c][unit])*10000))
		}
		fmt.Fprintln(w)
	}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
