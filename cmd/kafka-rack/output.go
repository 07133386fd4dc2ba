package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

func writeJSON(w io.Writer, rep any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("writing the report as JSON: %w", err)
	}
	return nil
}

// writeTable prints the report for people: the consumer's plan, then the
// producer's.
func writeTable(w io.Writer, rep *Report) error {
	if err := writeTableOf(w, rep, true); err != nil {
		return err
	}
	if p := rep.Producer; p != nil {
		return writeProducers(w, []*ProducerPlan{p}, p.Cost)
	}
	return nil
}

// writeTableOf prints the report, with the brokers' table or without it
// (when an earlier report of the same run showed it).
func writeTableOf(w io.Writer, rep *Report, withBrokers bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	sel := "off"
	if rep.ClientSelect {
		sel = "on"
	}
	fmt.Fprintf(tw, "topic %s, client rack %q, client-side selection %s\n\n", rep.Topic, rep.Rack, sel)
	if withBrokers {
		writeBrokers(tw, rep.Brokers)
	}
	fmt.Fprintln(tw, "PARTITION\tLEADER\tISR\tLEADER NAMES\tREAD FROM\tIN RACK\tWHY")
	inRack := 0
	for _, p := range rep.Partitions {
		why := p.Reason
		if p.Error != "" {
			why += " (" + p.Error + ")"
		}
		if p.InRack {
			inRack++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Partition, replica(p.Leader), ints(p.ISR),
			preferred(p.Preferred), replica(p.Read), yesNo(p.InRack), why)
	}
	fmt.Fprintf(tw, "\n%d of %d partitions read in rack %q\n", inRack, len(rep.Partitions), rep.Rack)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if c := rep.Cost; c != nil {
		writeCost(w, c)
	}
	return nil
}

// writeBrokers prints the brokers' settings.
func writeBrokers(tw io.Writer, brokers []BrokerCheck) {
	fmt.Fprintln(tw, "BROKER\tHOST\tRACK\tbroker.rack\tFETCH\treplica.selector.class")
	for _, b := range brokers {
		sc := orDash(b.SelectorClass)
		if b.Error != "" {
			sc = "? (" + b.Error + ")"
		}
		fetch := "?"
		if b.FetchMaxVersion >= 0 {
			fetch = fmt.Sprintf("v%d", b.FetchMaxVersion)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", b.ID, b.Host, orDash(b.Rack), orDash(b.BrokerRack), fetch, sc)
	}
	fmt.Fprintln(tw)
}

func writeCost(w io.Writer, c *Cost) {
	fmt.Fprintf(w, "\ncost (consume rate %.3f MB/s from %s", c.BytesPerSecond/1e6, c.Source)
	if c.Source == "-observe" {
		fmt.Fprintf(w, ": %d bytes in %.0f s", c.ObservedBytes, c.ObservedSeconds)
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintf(w, "  bytes read in the rack: %.1f%% with this plan, %.1f%% reading leaders only\n", 100*c.InRackShare, 100*c.LeaderInRackShare)
	fmt.Fprintf(w, "  cross-zone GB a month: %.1f without rack-aware fetching, %.1f with it (of %.1f GB read)\n", c.CrossGBWithoutRack, c.CrossGBWithPlan, c.GBPerMonth)
	fmt.Fprintf(w, "  saved: $%.2f a month at $%.4f/GB each way (cross-zone cost left: $%.2f a month)\n", c.SavedUSDPerMonth, c.PricePerGBEachWay, c.CostUSDPerMonthAfter)
	fmt.Fprintln(w, "  assuming:")
	for _, a := range c.Assumptions {
		fmt.Fprintf(w, "  - %s\n", a)
	}
}

func replica(r Replica) string {
	if r.ID < 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%s)", r.ID, orDash(r.Rack))
}

func preferred(id int) string {
	if id < 0 {
		return "none (-1)"
	}
	return strconv.Itoa(id)
}

func ints(s []int) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
