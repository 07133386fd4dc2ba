package netfault

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Fault is what happens on the path between clients and one broker. The zero Fault forwards everything
// untouched. Fields combine (a delay with loss, a bandwidth cap with a delay).
type Fault struct {
	// Blackhole forwards no byte either way. Open connections stay open; new ones are accepted (the
	// kernel completes the handshake) and then hang, never reaching the broker.
	Blackhole bool `json:"blackhole,omitempty"`
	// DropReplies loses the broker's bytes to the client (one way): requests still reach the broker.
	DropReplies bool `json:"drop_replies,omitempty"`
	// Delay is added to each direction (a round trip gains twice this).
	Delay time.Duration `json:"delay,omitempty"`
	// Loss is the probability that a TCP segment is lost, each way (see lossStall for how a
	// user-space proxy approximates it).
	Loss float64 `json:"loss,omitempty"`
	// Rate caps each direction at this many bytes per second, shared by the broker's connections.
	Rate int64 `json:"rate,omitempty"`
	// Reset resets (RST) the open connections at once and every new one on accept.
	Reset bool `json:"reset,omitempty"`
	// Silent resets the open connections at once; new ones are accepted and never answered.
	Silent bool `json:"silent,omitempty"`
	// For clears the fault after this long (0: until Clear).
	For time.Duration `json:"for,omitempty"`
}

// direction of a byte stream through the proxy.
type direction int

const (
	toBroker direction = iota // requests
	toClient                  // replies
)

// stalls reports whether the fault forwards nothing in direction d.
func (f Fault) stalls(d direction) bool {
	return f.Blackhole || f.Silent || (d == toClient && f.DropReplies)
}

// String is the fault in the form Parse reads.
func (f Fault) String() string {
	var parts []string
	add := func(s string) { parts = append(parts, s) }
	if f.Blackhole {
		add("blackhole")
	}
	if f.DropReplies {
		add("oneway")
	}
	if f.Delay > 0 {
		add("latency " + f.Delay.String())
	}
	if f.Loss > 0 {
		add("loss " + strconv.FormatFloat(f.Loss*100, 'g', -1, 64) + "%")
	}
	if f.Rate > 0 {
		add("bandwidth " + formatRate(f.Rate))
	}
	if f.Reset {
		add("reset")
	}
	if f.Silent {
		add("silent")
	}
	if len(parts) == 0 {
		add("none")
	}
	s := strings.Join(parts, " ")
	if f.For > 0 {
		s += " for " + f.For.String()
	}
	return s
}

// Parse reads a fault from words, as the cluster tool passes them:
//
//	blackhole | oneway | latency 300ms | loss 5% | bandwidth 1mbit | reset | silent
//
// several of them in a row combine, and a last bare duration ("30s") sets For.
func Parse(words []string) (Fault, error) {
	var f Fault
	if len(words) == 0 {
		return f, fmt.Errorf("netfault: no fault given")
	}
	arg := func(i int, kind string) (string, error) {
		if i+1 >= len(words) {
			return "", fmt.Errorf("netfault: %s needs a value", kind)
		}
		return words[i+1], nil
	}
	for i := 0; i < len(words); i++ {
		w := strings.ToLower(words[i])
		switch w {
		case "blackhole":
			f.Blackhole = true
		case "oneway", "drop-replies":
			f.DropReplies = true
		case "reset":
			f.Reset = true
		case "silent":
			f.Silent = true
		case "latency", "delay":
			v, err := arg(i, w)
			if err != nil {
				return f, err
			}
			if f.Delay, err = time.ParseDuration(v); err != nil || f.Delay <= 0 {
				return f, fmt.Errorf("netfault: latency %q: want a positive duration (300ms)", v)
			}
			i++
		case "loss":
			v, err := arg(i, w)
			if err != nil {
				return f, err
			}
			p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err != nil || p <= 0 || p >= 100 {
				return f, fmt.Errorf("netfault: loss %q: want a percentage in (0, 100) (5%%)", v)
			}
			f.Loss = p / 100
			i++
		case "bandwidth", "rate":
			v, err := arg(i, w)
			if err != nil {
				return f, err
			}
			if f.Rate, err = parseRate(v); err != nil {
				return f, err
			}
			i++
		default:
			d, err := time.ParseDuration(w)
			if err != nil || d <= 0 || i != len(words)-1 {
				return f, fmt.Errorf("netfault: unknown fault word %q (want blackhole, oneway, latency D, loss P%%, bandwidth R, reset, silent, then an optional duration)", words[i])
			}
			f.For = d
		}
	}
	if f == (Fault{For: f.For}) {
		return f, fmt.Errorf("netfault: %q names no fault", strings.Join(words, " "))
	}
	return f, nil
}

// parseRate reads a bit rate ("1mbit", "512kbit", "2000000bit") as bytes per second.
func parseRate(s string) (int64, error) {
	v := strings.ToLower(s)
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "gbit"):
		mult, v = 1e9, strings.TrimSuffix(v, "gbit")
	case strings.HasSuffix(v, "mbit"):
		mult, v = 1e6, strings.TrimSuffix(v, "mbit")
	case strings.HasSuffix(v, "kbit"):
		mult, v = 1e3, strings.TrimSuffix(v, "kbit")
	case strings.HasSuffix(v, "bit"):
		v = strings.TrimSuffix(v, "bit")
	default:
		return 0, fmt.Errorf("netfault: bandwidth %q: want a bit rate (1mbit, 512kbit)", s)
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("netfault: bandwidth %q: want a positive bit rate (1mbit, 512kbit)", s)
	}
	bytes := int64(n * float64(mult) / 8)
	if bytes < 1 {
		return 0, fmt.Errorf("netfault: bandwidth %q: below one byte per second", s)
	}
	return bytes, nil
}

// formatRate writes bytes per second as the bit rate parseRate reads.
func formatRate(bytesPerSecond int64) string {
	bits := bytesPerSecond * 8
	switch {
	case bits%1e9 == 0:
		return strconv.FormatInt(bits/1e9, 10) + "gbit"
	case bits%1e6 == 0:
		return strconv.FormatInt(bits/1e6, 10) + "mbit"
	case bits%1e3 == 0:
		return strconv.FormatInt(bits/1e3, 10) + "kbit"
	}
	return strconv.FormatInt(bits, 10) + "bit"
}
