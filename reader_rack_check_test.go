package kafka

import (
	"strings"
	"testing"

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
	require.Len(t, lines, 1, "error log: %q", errs.lines)
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
	require.Len(t, lines, 1, "log: %q", info.lines)
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
