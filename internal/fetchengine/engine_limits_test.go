package fetchengine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A partition's result says the limits its data was fetched within: the
// partition's max bytes asked, and whether the response's records reached
// the request's max bytes (a broker may then have cut its last batch).
func TestEngineResultSaysFetchLimits(t *testing.T) {
	for _, tc := range []struct {
		budget int64
		full   bool
	}{{1000, false}, {1, true}} {
		c := newFakeConn()
		e := testEngine(t, c, Config{Budget: tc.budget})
		w := want(0, 0)
		w.MaxBytes = 600
		r := recv(t, fetchAsync(e, 1, w))
		require.NoError(t, r.Err)
		req := sent(t, c)
		assert.Equal(t, int32(600), r.MaxBytes, "budget %d", tc.budget)
		assert.Equal(t, req.Topics[0].Partitions[0].PartitionMaxBytes, r.MaxBytes, "budget %d", tc.budget)
		assert.Equal(t, tc.full, r.Full, "budget %d: %d bytes asked, 1 sent", tc.budget, req.MaxBytes)
	}
}
