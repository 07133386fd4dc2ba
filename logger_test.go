package kafka

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
)

// slogRecords is a slog.Handler keeping every record, at every level.
type slogRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *slogRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *slogRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *slogRecords) WithGroup(string) slog.Handler            { return h }
func (h *slogRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.records = append(h.records, r.Clone())
	h.mu.Unlock()
	return nil
}

// find returns the attributes of the first record with msg at level whose
// attributes include want (compared as strings).
func (h *slogRecords) find(level slog.Level, msg string, want map[string]string) (map[string]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
next:
	for _, r := range h.records {
		if r.Level != level || r.Message != msg {
			continue
		}
		attrs := map[string]string{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		for k, v := range want {
			if attrs[k] != v {
				continue next
			}
		}
		return attrs, true
	}
	return nil, false
}

func (h *slogRecords) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		out = append(out, r.Level.String()+" "+r.Message)
	}
	return out
}

// Through a SlogAdapter a reroute is an Info record with its attributes,
// the follower's failure a Warn record naming the broker, and the way back
// to the leader another Info record with its reason.
func TestSlogAdapterRoutingEvents(t *testing.T) {
	c := rtRackCluster(t, true)
	for i := 0; i < 4; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	h := &slogRecords{}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes = "b", 1
		cfg.Logger = NewSlogAdapter(slog.New(h), slog.LevelInfo)
		cfg.ErrorLogger = NewSlogAdapter(slog.New(h), slog.LevelError)
	})
	rtExpect(t, r, 0, 8)
	attrs, ok := h.find(slog.LevelInfo, "kafka reader: partition rerouted", map[string]string{
		"topic": "t", "partition": "0", "from": "1", "from_rack": "a", "to": "2", "to_rack": "b",
		"reason": "preferred_replica", "reason_text": "preferred replica", "leader": "1",
	})
	require.True(t, ok, "no reroute record in %q", h.messages())
	assert.Len(t, attrs, 9)

	c.Broker(2).Stop()
	rtExpect(t, r, 8, 8) // maybe fetched before the stop (one fetch ahead)
	rtAppend(c, 0, 16, 4)
	rtExpect(t, r, 16, 4) // fetched after it
	failed := false
	for _, msg := range []string{"kafka reader: dialing the broker failed", "kafka reader: fetch failed"} {
		if attrs, ok := h.find(slog.LevelWarn, msg, map[string]string{"broker": "2", "partition": "0"}); ok {
			failed = true
			assert.NotEmpty(t, attrs["error"])
		}
	}
	assert.True(t, failed, "no Warn record of broker 2's failure in %q", h.messages())
	_, ok = h.find(slog.LevelInfo, "kafka reader: partition rerouted", map[string]string{
		"from": "2", "to": "1", "reason": string(RerouteFollowerFailed),
	})
	assert.True(t, ok, "no reroute back to the leader in %q", h.messages())
}

// An error the application gets is an Error record.
func TestSlogAdapterReturnedErrorIsError(t *testing.T) {
	c := rtRackCluster(t, false)
	rtAppend(c, 0, 0, 4)
	c.Broker(1).Script(protocol.Fetch, 1, fakebroker.Step{ErrorCode: int16(TopicAuthorizationFailed)})
	h := &slogRecords{}
	r := rtReader(t, c, func(cfg *ReaderConfig) { cfg.Logger = NewSlogAdapter(slog.New(h), slog.LevelInfo) })
	_, err := r.FetchMessage(rtCtx(t))
	require.ErrorIs(t, err, TopicAuthorizationFailed)
	attrs, ok := h.find(slog.LevelError, "kafka reader: fetch failed", map[string]string{"broker": "1", "partition": "0", "offset": "0"})
	require.True(t, ok, "no Error record in %q", h.messages())
	assert.Contains(t, attrs["error"], "Authorization")
}

// The adapter's Printf lines come preformatted at its Level, none when the
// handler drops that level; a nil Logger is slog.Default().
func TestSlogAdapterPrintfLevel(t *testing.T) {
	h := &slogRecords{}
	NewSlogAdapter(slog.New(h), slog.LevelWarn).Printf("kafka reader: broker %d gone", 3)
	assert.Equal(t, []string{"WARN kafka reader: broker 3 gone"}, h.messages())

	var quiet strings.Builder
	NewSlogAdapter(slog.New(slog.NewTextHandler(&quiet, nil)), slog.LevelDebug).Printf("dropped")
	assert.Empty(t, quiet.String(), "a Debug line through an Info handler")

	restore := slog.Default()
	t.Cleanup(func() { slog.SetDefault(restore) })
	def := &slogRecords{}
	slog.SetDefault(slog.New(def))
	(&SlogAdapter{Level: slog.LevelInfo}).Printf("to the default")
	(&SlogAdapter{}).LogAttrs(context.Background(), slog.LevelWarn, "a record")
	assert.Equal(t, []string{"INFO to the default", "WARN a record"}, def.messages())
}

// With CommitInterval 0 a commit per message is not logged by a plain
// Logger; an AttrLogger gets it at Debug.
func TestReaderGroupSyncCommitsNotLogged(t *testing.T) {
	c := rtCluster(t, fakebroker.Config{}, 1, 1)
	rtAppend(c, 0, 0, 6)

	plain := &rtLogger{}
	r := rtGroupReader(t, c, "g-log", func(cfg *ReaderConfig) { cfg.Logger = plain })
	rtReadGroup(t, r, 3, map[int]int64{0: 0})
	require.NoError(t, r.Close())
	assert.Empty(t, plain.find("committed offsets"), "commit lines in %q", plain.all())

	h := &slogRecords{}
	r2 := rtGroupReader(t, c, "g-log", func(cfg *ReaderConfig) { cfg.Logger = NewSlogAdapter(slog.New(h), slog.LevelInfo) })
	rtReadGroup(t, r2, 3, map[int]int64{0: 3})
	_, ok := h.find(slog.LevelDebug, "kafka reader: committed offsets", map[string]string{"group": "g-log", "offsets": "[t/0:6]"})
	assert.True(t, ok, "no Debug commit record in %q", h.messages())
	for _, m := range h.messages() {
		assert.NotContains(t, m, "INFO committed offsets")
	}
}
