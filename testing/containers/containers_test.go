package containers

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

func TestCluster(t *testing.T) {
	ctx := context.Background()
	if err := DockerAvailable(ctx); err != nil {
		t.Skipf("SKIPPED, NOT RUN: no Docker engine is available here (%v); the testcontainers cluster "+
			"needs one. The JVM-based cluster (make kafka-up) covers this machine.", err)
	}
	if testing.Short() {
		t.Skip("starts three Kafka containers: skipped with -short")
	}
	c, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Terminate(context.Background()); err != nil {
			t.Errorf("terminate: %v", err)
		}
	})
	for _, addr := range c.Brokers {
		racks, err := brokerRacks(addr)
		if err != nil {
			t.Fatalf("Metadata from %s: %v", addr, err)
		}
		for id, rack := range c.Racks {
			if racks[id] != rack {
				t.Errorf("Metadata from %s: broker %d in rack %q, want %q", addr, id, racks[id], rack)
			}
		}
	}
	if env := c.Env(); env["KAFKA_RACKS"] != "1=a,2=b,3=c" || env["KAFKA_BROKER_IDS"] != "1,2,3" {
		t.Errorf("Env() = %v", env)
	}
}

// brokerRacks asks addr for Metadata v4 (no topics) and returns broker id -> rack.
func brokerRacks(addr string) (map[int]string, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := []byte{0, 0, 0, 17, 0, 3, 0, 4, 0, 0, 0, 1, 0, 2, 'k', 't', 0, 0, 0, 0, 0}
	if _, err := conn.Write(req); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, b); err != nil {
		return nil, err
	}
	out := map[int]string{}
	i := 12 // correlation id, throttle time, broker count
	for n := int(binary.BigEndian.Uint32(b[8:])); n > 0 && i+12 <= len(b); n-- {
		id := int(binary.BigEndian.Uint32(b[i:]))
		i += 4
		i += 2 + int(binary.BigEndian.Uint16(b[i:])) // host
		i += 4                                       // port
		if l := int16(binary.BigEndian.Uint16(b[i:])); l >= 0 {
			out[id] = string(b[i+2 : i+2+int(l)])
			i += 2 + int(l)
		} else {
			i += 2
		}
	}
	return out, nil
}
