package group

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A context derived from a generation's ends with it without a goroutine
// of its own per context while the generation lasts (genCtx.AfterFunc); a
// derived context cancelled first is forgotten by the generation.
func TestGenerationContextNeedsNoGoroutine(t *testing.T) {
	gen := &Generation{done: make(chan struct{})}
	parent := genCtx{gen}
	before := runtime.NumGoroutine()
	var cancels []context.CancelFunc
	var ctxs []context.Context
	for i := 0; i < 100; i++ {
		ctx, cancel := context.WithCancel(parent)
		ctxs, cancels = append(ctxs, ctx), append(cancels, cancel)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+5, "a goroutine per derived context")

	cancels[0]()
	gen.mu.Lock()
	assert.Len(t, gen.afters, 99, "a context cancelled first still registered")
	gen.mu.Unlock()

	gen.end(nil)
	for i, ctx := range ctxs {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("context %d not done with its generation", i)
		}
		require.Error(t, ctx.Err())
	}
	for _, c := range cancels {
		c()
	}
	late, cancel := context.WithCancel(parent)
	defer cancel()
	select {
	case <-late.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context derived after the end is not done")
	}
}
