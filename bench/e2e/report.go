package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// ReadRuns reads runs written one JSON object a line.
func ReadRuns(r io.Reader) ([]Run, error) {
	var runs []Run
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var run Run
		if err := json.Unmarshal(sc.Bytes(), &run); err != nil {
			return nil, fmt.Errorf("reading runs: %w", err)
		}
		runs = append(runs, run)
	}
	return runs, sc.Err()
}

// Stat is a median with its range.
type Stat struct{ Med, Min, Max float64 }

func stat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{math.NaN(), math.NaN(), math.NaN()}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{m, s[0], s[len(s)-1]}
}

// ClientSummary is one client's figures in one setting: medians of the
// absolute values over its good rounds, and medians of the per-round ratios
// to the base client (rounds where both read everything).
type ClientSummary struct {
	Client                        string
	Rounds, Failed                int
	Failure                       string
	RecS, CPUGB, RSS, Sockets     Stat
	RecSRatio, CPURatio, RSSRatio Stat
	// Middle and MiddleRatio are records/s from a tenth of the records
	// read to nine tenths (Run.MiddlePerSec).
	Middle, MiddleRatio Stat
}

// SettingSummary is every client's figures in one setting.
type SettingSummary struct {
	Setting Setting
	Clients []ClientSummary
	// Load1 is the range of the machine's 1-minute load average when the
	// setting's runs started (zero when not recorded).
	Load1 Stat
}

// Summarize groups runs by setting (in the order first seen) and client
// (in Clients order, then others).
func Summarize(runs []Run) []SettingSummary {
	var order []Setting
	by := map[Setting][]Run{}
	for _, r := range runs {
		if _, ok := by[r.Setting]; !ok {
			order = append(order, r.Setting)
		}
		by[r.Setting] = append(by[r.Setting], r)
	}
	var out []SettingSummary
	for _, s := range order {
		rs := by[s]
		base := map[int]*Run{}
		for i := range rs {
			if rs[i].Client == Base && rs[i].OK() {
				base[rs[i].Round] = &rs[i]
			}
		}
		var clients []string
		for _, r := range rs {
			if !slices.Contains(clients, r.Client) {
				clients = append(clients, r.Client)
			}
		}
		slices.SortStableFunc(clients, func(a, b string) int { return clientRank(a) - clientRank(b) })
		ss := SettingSummary{Setting: s}
		var loads []float64
		for _, r := range rs {
			if r.Load1 > 0 {
				loads = append(loads, r.Load1)
			}
		}
		if len(loads) > 0 {
			ss.Load1 = stat(loads)
		}
		for _, c := range clients {
			cs := ClientSummary{Client: c}
			var recs, cpu, rss, socks, middle, rr, cr, mr, midR []float64
			for i := range rs {
				r := &rs[i]
				if r.Client != c {
					continue
				}
				if !r.OK() {
					cs.Failed++
					cs.Failure = r.Error
					continue
				}
				cs.Rounds++
				recs = append(recs, r.RecordsPerSec())
				cpu = append(cpu, r.CPUPerGB())
				rss = append(rss, float64(r.MaxRSS))
				socks = append(socks, float64(r.Sockets))
				middle = append(middle, r.MiddlePerSec())
				if b := base[r.Round]; b != nil {
					rr = append(rr, r.RecordsPerSec()/b.RecordsPerSec())
					midR = append(midR, r.MiddlePerSec()/b.MiddlePerSec())
					cr = append(cr, r.CPUPerGB()/b.CPUPerGB())
					mr = append(mr, float64(r.MaxRSS)/float64(b.MaxRSS))
				}
			}
			cs.RecS, cs.CPUGB, cs.RSS, cs.Sockets = stat(recs), stat(cpu), stat(rss), stat(socks)
			cs.RecSRatio, cs.CPURatio, cs.RSSRatio = stat(rr), stat(cr), stat(mr)
			cs.Middle, cs.MiddleRatio = stat(middle), stat(midR)
			ss.Clients = append(ss.Clients, cs)
		}
		out = append(out, ss)
	}
	return out
}

func clientRank(c string) int {
	if i := slices.Index(Clients, c); i >= 0 {
		return i
	}
	return len(Clients)
}

// Markdown writes one table per setting.
func Markdown(w io.Writer, sums []SettingSummary) {
	for _, ss := range sums {
		fmt.Fprintf(w, "#### %s\n\n", ss.Setting.Name())
		if ss.Load1.Max > 0 {
			fmt.Fprintf(w, "Load average (1 min) when the runs started: %.1f–%.1f.\n\n", ss.Load1.Min, ss.Load1.Max)
		}
		fmt.Fprintf(w, "| client | records/s | ÷ %s | middle 80 %% | ÷ %s | CPU-s/GB | ÷ %s | peak RSS MB | ÷ %s | peak sockets | rounds |\n", Base, Base, Base, Base)
		fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range ss.Clients {
			if c.Rounds == 0 {
				fmt.Fprintf(w, "| %s | failed: %s | | | | | | | | | 0/%d |\n", c.Client, oneLine(c.Failure), c.Failed)
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f | %s | %.0f | %s | %.0f | %d/%d |\n", c.Client,
				kilo(c.RecS.Med), ratio(c.RecSRatio, c.Client), kilo(c.Middle.Med), ratio(c.MiddleRatio, c.Client),
				c.CPUGB.Med, ratio(c.CPURatio, c.Client),
				c.RSS.Med/1e6, ratio(c.RSSRatio, c.Client), c.Sockets.Med, c.Rounds, c.Rounds+c.Failed)
		}
		fmt.Fprintln(w)
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func kilo(x float64) string {
	if x >= 1e6 {
		return fmt.Sprintf("%.2fM", x/1e6)
	}
	return fmt.Sprintf("%.0fk", x/1e3)
}

func ratio(s Stat, client string) string {
	switch {
	case client == Base:
		return "1"
	case math.IsNaN(s.Med):
		return "–"
	case s.Min == s.Max:
		return fmt.Sprintf("%.2f×", s.Med)
	}
	return fmt.Sprintf("%.2f× [%.2f–%.2f]", s.Med, s.Min, s.Max)
}

// RatiosNote heads the tables of a run's markdown file.
const RatiosNote = "Medians of per-round ratios to " + Base + " (a ratio above 1 is more records/s or more CPU per GB). " +
	"Records/s count from the consumer's creation (connecting and joining included); " +
	"\"middle 80 %\" counts from a tenth of the records read to nine tenths, the rate once the client reads at full speed."

// Overview writes one row per setting: every client's median records/s and
// CPU-s/GB ratios to the base, with the rackfetch Reader's peak RSS ratio
// and peak sockets (the base's in brackets), the figures the targets of the
// fetch engine are set in.
func Overview(w io.Writer, sums []SettingSummary) {
	var clients []string
	for _, ss := range sums {
		for _, c := range ss.Clients {
			if c.Client != Base && !slices.Contains(clients, c.Client) {
				clients = append(clients, c.Client)
			}
		}
	}
	fmt.Fprintf(w, "| setting |")
	for _, c := range clients {
		fmt.Fprintf(w, " %s records/s · CPU-s/GB ÷ %s |", c, Base)
	}
	fmt.Fprintf(w, " rackfetch records/s in the middle 80 %% ÷ %s | rackfetch RSS ÷ %s | sockets rackfetch (%s) |\n|---|", Base, Base, Base)
	for range clients {
		fmt.Fprintf(w, "---:|")
	}
	fmt.Fprintf(w, "---:|---:|---:|\n")
	for _, ss := range sums {
		get := func(name string) *ClientSummary {
			for i := range ss.Clients {
				if ss.Clients[i].Client == name && ss.Clients[i].Rounds > 0 {
					return &ss.Clients[i]
				}
			}
			return nil
		}
		fmt.Fprintf(w, "| %s |", ss.Setting.Short())
		for _, c := range clients {
			if cs := get(c); cs != nil && !math.IsNaN(cs.RecSRatio.Med) {
				fmt.Fprintf(w, " %.2f · %.2f |", cs.RecSRatio.Med, cs.CPURatio.Med)
			} else {
				fmt.Fprintf(w, " – |")
			}
		}
		rf, base := get("rackfetch"), get(Base)
		switch {
		case rf != nil && base != nil:
			fmt.Fprintf(w, " %.2f | %.2f | %.0f (%.0f) |\n", rf.MiddleRatio.Med, rf.RSSRatio.Med, rf.Sockets.Med, base.Sockets.Med)
		default:
			fmt.Fprintf(w, " – | – | – |\n")
		}
	}
	fmt.Fprintln(w)
}
