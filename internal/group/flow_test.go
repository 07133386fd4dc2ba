package group

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The flow is maximal first, then cheapest: of two parallel edges the
// cheaper carries the unit; a detour that would be cheaper is not taken
// when it blocks another unit.
func TestFlowNetworkMinCostMaxFlow(t *testing.T) {
	const s, x, tt = 0, 1, 2
	f := NewFlowNetwork(3)
	f.AddEdge(s, x, 1, 0)
	dear := f.AddEdge(x, tt, 1, 3)
	cheap := f.AddEdge(x, tt, 1, 1)
	f.MinCostFlow(s, tt)
	require.Equal(t, 0, f.Edge(dear).Flow())
	require.Equal(t, 1, f.Edge(cheap).Flow())
	require.Equal(t, tt, f.Edge(cheap).To)
	require.Equal(t, x, cheap.From)

	const src, a, b, sink = 0, 1, 2, 3
	f = NewFlowNetwork(4)
	require.Equal(t, 4, f.Nodes())
	f.AddEdge(src, a, 1, 0)
	f.AddEdge(src, b, 1, 0)
	direct := f.AddEdge(a, sink, 1, 5)
	detour := f.AddEdge(a, b, 1, 0)
	bt := f.AddEdge(b, sink, 1, 1)
	f.MinCostFlow(src, sink)
	require.Equal(t, 1, f.Edge(direct).Flow(), "two units need the dear edge")
	require.Equal(t, 0, f.Edge(detour).Flow())
	require.Equal(t, 1, f.Edge(bt).Flow())
}
