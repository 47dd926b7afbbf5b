package tpcc

import "fmt"

// FirstWarehouses is w with its streams' inputs drawn from warehouses 1
// to n only, as if the database held n (Meta says so): the transactions,
// their statements and the rest of their inputs are w's. The page-size
// experiment (internal/workload/pages) runs W = 1 on any tpcc database.
// It refuses n outside 1 to the warehouses w holds.
func (w *Workload) FirstWarehouses(n int) (*Workload, error) {
	if n < 1 || n > w.meta.Warehouses {
		return nil, fmt.Errorf("drawing from the first %d warehouses: the database holds %d (expected 1 to %d)",
			n, w.meta.Warehouses, w.meta.Warehouses)
	}
	c := *w
	c.meta.Warehouses = n
	return &c, nil
}
