package faults

import (
	"fmt"
	"io"
	"strings"
)

// TableHeader is the Markdown header of the matrix's table, one row per
// window (Row).
func TableHeader(w io.Writer) {
	fmt.Fprintln(w, "| client | target (broker) | fault | left: followed · all (most/served) | longest gap (others) | cross-rack during · after | after heal: back · caught up (lag) | lost · dup · ooo | app errors · rebalances | req/s: all (before) · to broker · dials to broker | log lines/s (warn+) | in ISR |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
}

// Row writes one window's figures as a row of the table.
func Row(w io.Writer, r Result) {
	if r.Error != "" {
		fmt.Fprintf(w, "| %s | %s (%d) | %s | error: %s |\n", r.Client, r.Target, r.Broker, r.Fault, oneLine(r.Error))
		return
	}
	fmt.Fprintf(w, "| %s | %s (%d) | %s | %s | %s s (%s s) | %s · %s | %s | %d · %d · %d | %d · %d | %.1f (%.1f) · %.1f · %.2f | %.1f (%.1f) | %s |\n",
		r.Client, r.Target, r.Broker, r.Fault, left(r), secs(r.GapS), secs(r.GapOthersS),
		share(r.CrossRackDuring, r.BytesDuring), share(r.CrossRackAfter, r.BytesAfter), backCell(r),
		r.Lost, r.Dup, r.OutOfOrder, r.AppErrors, r.Rebalances, r.RequestsPerS, r.RequestsBeforePerS, r.RequestsToBrokerPerS, r.DialsToBrokerPerS, r.LogLinesPerS, r.ErrorLogLinesPerS, isrCell(r))
}

// WriterHeader and WriterRow: the Writer's figures of windows whose producer
// wrote through the fault (Spec.WriterFaulted).
func WriterHeader(w io.Writer) {
	fmt.Fprintln(w, "| producer | target (broker) | fault | failed calls (WriteMessages, ProduceSync) | longest time without an acknowledgement | led partitions' records/s acknowledged: before · during | after heal: every led partition acknowledged again | acknowledged · lost |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
}

func WriterRow(w io.Writer, r Result) {
	if r.Error != "" || !r.WriterFaulted {
		return
	}
	back := "no led partition"
	if len(r.Leads) > 0 {
		back = within(r.WriterBackS)
	}
	fmt.Fprintf(w, "| %s | %s (%d) | %s | %d | %s s | %.0f · %.0f | %s | %d · %d |\n", r.Client, r.Target, r.Broker, r.Fault, r.ProduceErrors, secs(r.ProducerStallS),
		r.WriterLedPerSBefore, r.WriterLedPerSDuring, back, r.Acked, r.Lost)
}

// left: how soon reads left the faulted broker on the partitions it
// followed and on all it served, and how many of those did at most.
func left(r Result) string {
	if len(r.Served) == 0 {
		return "served none"
	}
	return fmt.Sprintf("%s · %s (%d/%d)", when(r.LeftFollowedS), when(r.LeftS), r.LeftMost, len(r.Served))
}

// when is a time in seconds, or "never" (-1).
func when(s float64) string {
	if s < 0 {
		return "never"
	}
	return secs(s) + " s"
}

func backCell(r Result) string {
	return fmt.Sprintf("%s · %s (%d)", within(r.BackS), within(r.CaughtUpS), r.LagAtHeal)
}

// within is a time in seconds after the heal, or what it was not within.
func within(s float64) string {
	if s < 0 {
		return fmt.Sprintf("not in %v", BackLimit)
	}
	return secs(s) + " s"
}

func isrCell(r Result) string {
	if r.InISR {
		return "yes"
	}
	return fmt.Sprintf("no (%d samples)", r.ISRSamples)
}

func secs(s float64) string { return fmt.Sprintf("%.1f", s) }

// share is a cross-rack share with the bytes it is of.
func share(x float64, bytes int64) string {
	if bytes < 1e6 {
		return fmt.Sprintf("%.1f %% of %.0f kB", 100*x, float64(bytes)/1e3)
	}
	return fmt.Sprintf("%.1f %% of %.1f MB", 100*x, float64(bytes)/1e6)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
