package integration

// A bare ConsumerGroup member of the group tests: its generations, one after the other, until it closes.

import (
	"context"
	"errors"
	"sync"
	"testing"

	kafka "github.com/rackfetch/kafka-go"
)

// cgiMember runs a consumer loop: every generation is recorded and kept
// busy by a function that waits for its end, then runs after (nil: none),
// until the group closes.
type cgiMember struct {
	cg   *kafka.ConsumerGroup
	mu   sync.Mutex
	gens []*kafka.Generation
	done chan struct{}
}

func cgiRun(t *testing.T, cfg kafka.ConsumerGroupConfig, after func()) *cgiMember {
	cg, err := kafka.NewConsumerGroup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := &cgiMember{cg: cg, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			gen, err := cg.Next(context.Background())
			if errors.Is(err, kafka.ErrGroupClosed) {
				return
			}
			if err != nil {
				continue
			}
			m.mu.Lock()
			m.gens = append(m.gens, gen)
			m.mu.Unlock()
			gen.Start(func(ctx context.Context) {
				<-ctx.Done()
				if after != nil {
					after()
				}
			})
		}
	}()
	t.Cleanup(func() {
		cg.Close()
		<-m.done
	})
	return m
}

func (m *cgiMember) latest() *kafka.Generation {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.gens) == 0 {
		return nil
	}
	return m.gens[len(m.gens)-1]
}
