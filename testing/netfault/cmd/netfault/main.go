// Command netfault runs the fault proxy of package netfault for the cluster tool, and controls it.
//
//	netfault serve -control ADDR -route ID,LISTEN,UPSTREAM [-route ...] [-tag WORD]
//	netfault ctl -control ADDR set ID FAULT... [DURATION]   (FAULT as netfault.Parse reads it)
//	netfault ctl -control ADDR clear ID|all
//	netfault ctl -control ADDR status
//
// serve runs until SIGINT or SIGTERM; -tag is ignored (the cluster tool marks its processes with it).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rackfetch/kafka-go/testing/netfault"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "ctl":
		err = ctl(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: netfault serve -control ADDR -route ID,LISTEN,UPSTREAM ... | netfault ctl -control ADDR set ID FAULT... [DURATION] | clear ID|all | status")
	os.Exit(2)
}

type routes []string

func (r *routes) String() string     { return strings.Join(*r, " ") }
func (r *routes) Set(v string) error { *r = append(*r, v); return nil }

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	control := fs.String("control", "127.0.0.1:0", "address of the control API")
	fs.String("tag", "", "ignored: marks the process")
	var rs routes
	fs.Var(&rs, "route", "ID,LISTEN,UPSTREAM (repeated)")
	fs.Parse(args)
	if len(rs) == 0 {
		return errors.New("serve: no -route")
	}
	p := netfault.New()
	defer p.Close()
	for _, r := range rs {
		f := strings.Split(r, ",")
		if len(f) != 3 {
			return fmt.Errorf("serve: -route %q: want ID,LISTEN,UPSTREAM", r)
		}
		id, err := strconv.Atoi(f[0])
		if err != nil || id <= 0 {
			return fmt.Errorf("serve: -route %q: %q is not a broker id", r, f[0])
		}
		if _, err := p.Add(id, f[1], f[2]); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", *control)
	if err != nil {
		return fmt.Errorf("serve: control API: %w", err)
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	fmt.Printf("netfault: serving %s, control http://%s\n", rs.String(), ln.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	srv.Close()
	return nil
}

func ctl(args []string) error {
	fs := flag.NewFlagSet("ctl", flag.ExitOnError)
	control := fs.String("control", "", "address of the control API")
	fs.Parse(args)
	rest := fs.Args()
	if *control == "" || len(rest) == 0 {
		usage()
	}
	c := &netfault.Client{Addr: *control}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	switch rest[0] {
	case "status":
		st, err := c.Status(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("%-3s %-21s %-21s %-9s %-6s %-5s %-14s %-14s %s\n", "ID", "LISTEN", "UPSTREAM", "ACCEPTED", "DIALED", "OPEN", "TO_BROKER", "TO_CLIENT", "FAULT")
		for _, b := range st {
			fmt.Printf("%-3d %-21s %-21s %-9d %-6d %-5d %-14d %-14d %s\n", b.ID, b.Listen, b.Upstream, b.Stats.Accepted, b.Stats.Dialed, b.Stats.Open, b.Stats.BytesToBroker, b.Stats.BytesToClient, b.Fault)
		}
		return nil
	case "set", "clear":
		if len(rest) < 2 {
			usage()
		}
		id := 0
		if !(rest[0] == "clear" && rest[1] == "all") {
			n, err := strconv.Atoi(rest[1])
			if err != nil || n <= 0 {
				return fmt.Errorf("%s: %q is not a broker id", rest[0], rest[1])
			}
			id = n
		}
		if rest[0] == "clear" {
			return c.Clear(ctx, id)
		}
		f, err := netfault.Parse(rest[2:])
		if err != nil {
			return err
		}
		if err := c.Set(ctx, id, f); err != nil {
			return err
		}
		fmt.Printf("netfault: broker %d: %s\n", id, f)
		return nil
	}
	usage()
	return nil
}
