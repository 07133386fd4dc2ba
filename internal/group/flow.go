package group

import "container/heap"

// FlowNetwork is a small min-cost max-flow solver (successive shortest paths
// with Dijkstra on reduced costs), for balancers that place partitions by
// cost (RackAffinityGroupBalancer). Costs must be non-negative.
type FlowNetwork struct {
	adj [][]FlowEdge
}

// FlowEdge is an edge of a FlowNetwork, to node To.
type FlowEdge struct {
	To, rev   int // rev: index of the reverse edge in adj[To]
	cap, cap0 int
	cost      int64
}

// Flow is the flow the solver sent along the edge.
func (e *FlowEdge) Flow() int { return e.cap0 - e.cap }

// NewFlowNetwork returns a network of nodes nodes (0 to nodes-1) and no
// edge.
func NewFlowNetwork(nodes int) *FlowNetwork {
	return &FlowNetwork{adj: make([][]FlowEdge, nodes)}
}

// Nodes is the number of nodes.
func (f *FlowNetwork) Nodes() int { return len(f.adj) }

// FlowArc locates an edge of a FlowNetwork, from node From.
type FlowArc struct{ From, index int }

// AddEdge adds an edge and returns where to find it.
func (f *FlowNetwork) AddEdge(from, to, capacity int, cost int64) (a FlowArc) {
	a.From, a.index = from, len(f.adj[from])
	f.adj[from] = append(f.adj[from], FlowEdge{To: to, rev: len(f.adj[to]), cap: capacity, cap0: capacity, cost: cost})
	f.adj[to] = append(f.adj[to], FlowEdge{To: from, rev: len(f.adj[from]) - 1, cost: -cost})
	return a
}

// Edge returns the edge a locates.
func (f *FlowNetwork) Edge(a FlowArc) *FlowEdge { return &f.adj[a.From][a.index] }

// MinCostFlow pushes as much flow as possible from s to t at least cost.
func (f *FlowNetwork) MinCostFlow(s, t int) {
	n := len(f.adj)
	potential := make([]int64, n) // zero is valid: initial costs are >= 0
	dist := make([]int64, n)
	prevNode := make([]int, n)
	prevEdge := make([]int, n)
	const unreached = int64(1<<63 - 1)

	for {
		for i := range dist {
			dist[i] = unreached
		}
		dist[s] = 0
		q := &flowQueue{{node: s}}
		for q.Len() > 0 {
			it := heap.Pop(q).(flowItem)
			if it.dist > dist[it.node] {
				continue
			}
			for i := range f.adj[it.node] {
				e := &f.adj[it.node][i]
				if e.cap == 0 {
					continue
				}
				d := it.dist + e.cost + potential[it.node] - potential[e.To]
				if d < dist[e.To] {
					dist[e.To] = d
					prevNode[e.To], prevEdge[e.To] = it.node, i
					heap.Push(q, flowItem{node: e.To, dist: d})
				}
			}
		}
		if dist[t] == unreached {
			return
		}
		for i := range potential {
			if dist[i] != unreached {
				potential[i] += dist[i]
			}
		}

		push := int(^uint(0) >> 1)
		for v := t; v != s; v = prevNode[v] {
			if c := f.adj[prevNode[v]][prevEdge[v]].cap; c < push {
				push = c
			}
		}
		for v := t; v != s; v = prevNode[v] {
			e := &f.adj[prevNode[v]][prevEdge[v]]
			e.cap -= push
			f.adj[v][e.rev].cap += push
		}
	}
}

type flowItem struct {
	node int
	dist int64
}

// flowQueue is a min-heap on distance, then node, for deterministic order.
type flowQueue []flowItem

func (q flowQueue) Len() int { return len(q) }
func (q flowQueue) Less(i, j int) bool {
	if q[i].dist != q[j].dist {
		return q[i].dist < q[j].dist
	}
	return q[i].node < q[j].node
}
func (q flowQueue) Swap(i, j int)       { q[i], q[j] = q[j], q[i] }
func (q *flowQueue) Push(x interface{}) { *q = append(*q, x.(flowItem)) }
func (q *flowQueue) Pop() interface{} {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}
