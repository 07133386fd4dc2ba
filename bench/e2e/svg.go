package e2e

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

var palette = map[string]string{
	"rackfetch":       "#1f77b4",
	"rackfetch-batch": "#2ca02c",
	"kafka-go":        "#ff7f0e",
	"sarama":          "#9467bd",
}

// SVG draws a horizontal bar chart of every client's median records/s and
// CPU-s/GB ratios to the base client, one group of bars per setting, with
// the base at 1. Ratios past the axis's end are clipped and labeled.
func SVG(w io.Writer, sums []SettingSummary, title string) {
	var clients []string
	for _, ss := range sums {
		for _, c := range ss.Clients {
			if c.Client != Base && !contains(clients, c.Client) {
				clients = append(clients, c.Client)
			}
		}
	}
	const (
		labelW = 190
		panelW = 330
		gap    = 40
		barH   = 7
		top    = 70
	)
	groupH := float64(len(clients)*barH + 8)
	height := top + int(groupH*float64(len(sums))) + 40
	width := labelW + 2*panelW + gap + 20
	scale := func(get func(ClientSummary) Stat) float64 {
		m := 1.0
		for _, ss := range sums {
			for _, c := range ss.Clients {
				if v := get(c).Med; !math.IsNaN(v) {
					m = math.Max(m, v)
				}
			}
		}
		return math.Min(math.Ceil(m*2)/2, 4)
	}
	panels := []struct {
		name string
		get  func(ClientSummary) Stat
	}{
		{"records/s ÷ " + Base + " (higher is better)", func(c ClientSummary) Stat { return c.RecSRatio }},
		{"CPU-s per GB ÷ " + Base + " (lower is better)", func(c ClientSummary) Stat { return c.CPURatio }},
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="10">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for i, c := range clients {
		x := labelW + i*130
		fmt.Fprintf(&b, `<rect x="%d" y="28" width="10" height="10" fill="%s"/><text x="%d" y="37">%s</text>`+"\n", x, palette[c], x+14, c)
	}
	for pi, p := range panels {
		x0 := float64(labelW + pi*(panelW+gap))
		xmax := scale(p.get)
		px := func(v float64) float64 { return x0 + math.Min(v, xmax)/xmax*panelW }
		fmt.Fprintf(&b, `<text x="%.0f" y="58" font-weight="bold">%s</text>`+"\n", x0, html.EscapeString(p.name))
		bottom := float64(top) + groupH*float64(len(sums))
		for t := 0.0; t <= xmax+1e-9; t += 0.5 {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", px(t), top-4, px(t), bottom)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%g</text>`+"\n", px(t), bottom+12, t)
		}
		for si, ss := range sums {
			y := float64(top) + groupH*float64(si)
			if pi == 0 {
				fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", labelW-6, y+groupH/2+3, html.EscapeString(ss.Setting.Short()))
			}
			if si > 0 {
				fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/>`+"\n", x0, y-2, x0+panelW, y-2)
			}
			for ci, cname := range clients {
				by := y + float64(ci*barH)
				var cs *ClientSummary
				for k := range ss.Clients {
					if ss.Clients[k].Client == cname {
						cs = &ss.Clients[k]
					}
				}
				if cs == nil || math.IsNaN(p.get(*cs).Med) {
					fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" font-size="7" fill="#c00">failed</text>`+"\n", x0+2, by+barH-1)
					continue
				}
				v := p.get(*cs).Med
				fmt.Fprintf(&b, `<rect x="%.0f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s %s: %.2f</title></rect>`+"\n",
					x0, by, px(v)-x0, barH-1, palette[cname], cname, html.EscapeString(ss.Setting.Short()), v)
				if v > xmax {
					fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="7" text-anchor="end" fill="white">%.1f</text>`+"\n", px(v)-2, by+barH-1, v)
				}
			}
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="black" stroke-dasharray="3,2"/>`+"\n", px(1), top-4, px(1), bottom)
	}
	fmt.Fprintf(&b, "</svg>\n")
	io.WriteString(w, b.String())
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
