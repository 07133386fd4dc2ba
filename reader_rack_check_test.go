package kafka

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rackfetch/kafka-go/internal/consumer"
	"github.com/rackfetch/kafka-go/protocol"
	"github.com/rackfetch/kafka-go/testing/fakebroker"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Reader's rack check on the fake brokers: brokers below Fetch v11, a
// rack no broker has, and no false finding when rack fetching works.

const rcLine = "rack-aware fetching is inactive"

// RackTestLinesWith returns the lines that contain sub (exported for the
// integration tests' loggers).
func RackTestLinesWith(lines []string, sub string) []string {
	var out []string
	for _, s := range lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// rcLines returns the lines of l that contain sub.
func rcLines(l *rtLogger, sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return RackTestLinesWith(l.lines, sub)
}

// rcRead reads 12 records of t/0 with a Reader in rack, logging to errs
// and info, and returns the Reader.
func rcRead(t *testing.T, c *fakebroker.Cluster, rack string, errs, info Logger) *Reader {
	for i := 0; i < 3; i++ {
		rtAppend(c, 0, i*4, 4)
	}
	r := rtReader(t, c, func(cfg *ReaderConfig) {
		cfg.Rack, cfg.MaxBytes, cfg.ErrorLogger, cfg.Logger = rack, 1, errs, info
	})
	rtExpect(t, r, 0, 12)
	return r
}

func TestReaderRackCheckFetchTooOld(t *testing.T) {
	c := rtRackCluster(t, true)
	for id := int32(1); id <= 3; id++ {
		c.Broker(id).SetMaxVersion(protocol.Fetch, 10)
	}
	errs, info := &rtLogger{}, &rtLogger{}
	r := rcRead(t, c, "b", errs, info)

	// The broker is dialed before it is fetched from: found by now.
	lines := rcLines(errs, rcLine)
	require.Len(t, lines, 1, "error log: %q", errs.all())
	assert.Contains(t, lines[0], "(brokers below Fetch v11): broker 1 supports Fetch up to v10")
	assert.Empty(t, rcLines(info, rcLine), "the Logger gets it only without an ErrorLogger")
	st := r.Stats()
	require.Len(t, st.RackInactive, 1)
	assert.Equal(t, RackFetchTooOld, st.RackInactive[0].Cause)
	assert.Equal(t, []int{1}, st.RackInactive[0].Brokers)
	assert.Len(t, r.Stats().RackInactive, 1, "a second Stats keeps it")
}

func TestReaderRackCheckNoBrokerInRack(t *testing.T) {
	c := rtRackCluster(t, true)
	info := &rtLogger{}
	r := rcRead(t, c, "us-east-1a", nil, info)

	// Without an ErrorLogger the line goes to the Logger.
	lines := rcLines(info, rcLine)
	require.Len(t, lines, 1, "log: %q", info.all())
	assert.Contains(t, lines[0], `(no broker in the client's rack): no broker is in rack "us-east-1a"; the brokers' racks are "a", "b", "c"`)
	st := r.Stats()
	require.Len(t, st.RackInactive, 1)
	assert.Equal(t, RackNoBrokerInRack, st.RackInactive[0].Cause)
}

func TestReaderRackCheckQuietWhenActive(t *testing.T) {
	c := rtRackCluster(t, true)
	errs, info := &rtLogger{}, &rtLogger{}
	r := rcRead(t, c, "b", errs, info)
	st := r.Stats()
	require.Equal(t, 2, st.Routing[0].Broker, "read from the rack-b replica")
	assert.Nil(t, st.RackInactive)
	assert.Empty(t, rcLines(errs, rcLine))
	assert.Empty(t, rcLines(info, rcLine))
}

func TestReaderRackCheckOffWithoutRack(t *testing.T) {
	c := rtRackCluster(t, false)
	for id := int32(1); id <= 3; id++ {
		c.Broker(id).SetMaxVersion(protocol.Fetch, 10)
	}
	errs := &rtLogger{}
	r := rcRead(t, c, "", errs, nil)
	assert.Nil(t, r.Stats().RackInactive)
	assert.Empty(t, rcLines(errs, rcLine))
}

// Without a Logger a rack that cannot take effect still reaches
// slog.Default() at Warn, once for the share of partition Readers however
// many partitions they read; a Reader with a Logger leaves slog.Default()
// alone.
func TestReaderRackCheckWarnsThroughSlogDefault(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rack   string
		old    bool // brokers below Fetch v11
		logger bool
		cause  RackInactiveCause
	}{
		{name: "no broker in the rack", rack: "us-east-1a", cause: RackNoBrokerInRack},
		{name: "brokers too old", rack: "b", old: true, cause: RackFetchTooOld},
		{name: "a Logger given", rack: "us-east-1a", logger: true, cause: RackNoBrokerInRack},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := &slogRecords{}
			restore := slog.Default()
			slog.SetDefault(slog.New(def))
			t.Cleanup(func() { slog.SetDefault(restore) })

			const partitions = 3
			c := rtCluster(t, fakebroker.Config{Brokers: 3, Racks: []string{"a", "b", "c"}, RackAwareSelector: true}, partitions, 3)
			if tc.old {
				for id := int32(1); id <= 3; id++ {
					c.Broker(id).SetMaxVersion(protocol.Fetch, 10)
				}
			}
			info := &rtLogger{}
			var readers []*Reader
			for p := 0; p < partitions; p++ {
				c.AppendRecords("t", int32(p), "x", "y")
				readers = append(readers, rtReader(t, c, func(cfg *ReaderConfig) {
					cfg.Partition, cfg.Rack = p, tc.rack
					if tc.logger {
						cfg.Logger = info
					}
				}))
			}
			ctx := rtCtx(t)
			for _, r := range readers {
				for i := 0; i < 2; i++ {
					_, err := r.FetchMessage(ctx)
					require.NoError(t, err, "partition %d", r.config.Partition)
				}
				require.Len(t, r.Stats().RackInactive, 1, "partition %d", r.config.Partition)
				assert.Equal(t, tc.cause, r.Stats().RackInactive[0].Cause)
			}

			var warned []string
			for _, m := range def.messages() {
				if strings.Contains(m, rcLine) {
					warned = append(warned, m)
				}
			}
			if tc.logger {
				assert.Empty(t, warned, "slog.Default() used although a Logger was given")
				assert.Len(t, rcLines(info, rcLine), 1, "log: %q", info.all())
				return
			}
			assert.Equal(t, []string{"WARN kafka reader: rack-aware fetching is inactive"}, warned,
				"one warning for the share of %d partition Readers", partitions)
			_, ok := def.find(slog.LevelWarn, "kafka reader: rack-aware fetching is inactive",
				map[string]string{"rack": tc.rack, "cause": string(tc.cause)})
			assert.True(t, ok, "attributes of %q", def.messages())
		})
	}
}

func TestRackInactiveString(t *testing.T) {
	f := rackInactive(consumer.NewRackDetector("x").Brokers(time.Now(), map[int]string{1: "a", 2: "b", 3: "c"}, nil))
	require.NotNil(t, f)
	s := f.String()
	assert.True(t, strings.HasPrefix(s, "rack-aware fetching is inactive (no broker in the client's rack): "), s)
	assert.Nil(t, f.Brokers)
}

// The causes are metric label values like the reroute reasons: stable IDs
// of [a-z_]+, each with a sentence of its own for the logs.
func TestRackInactiveCauseIDs(t *testing.T) {
	want := map[RackInactiveCause]string{
		RackNoReplicaSelector: "no_replica_selector",
		RackNoBrokerInRack:    "no_broker_in_rack",
		RackFetchTooOld:       "fetch_too_old",
	}
	sentences := map[string]bool{}
	for c, id := range want {
		assert.Equal(t, id, string(c))
		assert.Regexp(t, `^[a-z_]+$`, string(c))
		assert.NotEqual(t, id, c.Sentence(), "cause %q has no sentence", c)
		assert.False(t, sentences[c.Sentence()], "sentence %q used twice", c.Sentence())
		sentences[c.Sentence()] = true
	}
	assert.Equal(t, "some_cause", RackInactiveCause("some_cause").Sentence())
}
