package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	kafka "github.com/rackfetch/kafka-go"
)

var t0 = time.Now()
var mu sync.Mutex

type spyConn struct{ net.Conn }

func (c spyConn) Write(b []byte) (int, error) {
	if len(b) >= 6 {
		api := binary.BigEndian.Uint16(b[4:6])
		if api == 2 {
			pcs := make([]uintptr, 30)
			n := runtime.Callers(2, pcs)
			fr := runtime.CallersFrames(pcs[:n])
			var names []string
			for {
				f, more := fr.Next()
				if strings.Contains(f.Function, "kafka-go") {
					names = append(names, f.Function[strings.LastIndex(f.Function, "/")+1:])
				}
				if !more {
					break
				}
			}
			mu.Lock()
			fmt.Fprintf(os.Stdout, "%6.1f LO %s %s\n", time.Since(t0).Seconds(), c.RemoteAddr(), strings.Join(names, " < "))
			mu.Unlock()
		}
	}
	return c.Conn.Write(b)
}

func main() {
	brokers := []string{"127.0.0.1:25091", "127.0.0.1:25092", "127.0.0.1:25093"}
	d := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, DialFunc: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var nd net.Dialer
		c, err := nd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return spyConn{c}, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for p := 0; p < 300; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: "bench-e2e-p300-v100-n3000", Partition: p, Rack: "b", Dialer: d})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			for {
				if _, err := r.FetchMessage(ctx); err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
}
