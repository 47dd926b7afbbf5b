package sweep

import "github.com/numalab/numalab/internal/result"

// FarNode is the node with CPUs farthest from node by the firmware's
// distances (the first of equals, in t.Nodes order): on 2 sockets of 2
// nodes each, a node on the other socket, not the near neighbour. Without
// distances it is the first other node with CPUs; with none, node itself.
func FarNode(t *result.Topology, node int) int {
	from := t.NodeIndex(node)
	far, farDist := node, -1
	for j, n := range t.Nodes {
		if n.ID == node || len(n.CPUs) == 0 {
			continue
		}
		d := 0
		if from >= 0 && from < len(t.Distances) && j < len(t.Distances[from]) {
			d = t.Distances[from][j]
		}
		if d > farDist {
			far, farDist = n.ID, d
		}
	}
	return far
}
