// Package evalplan is what 'numalab eval's budget buys on a machine and
// how it is kept: the plan (NewPlan, a pure function of the budget, the
// machine and whether a MariaDB server can be had, HaveMariaDB), the
// least budget that plans (LeastBudget, MinBudget), each step's time as
// planned, and the budget kept as the steps run (budget.go: the steps'
// deadline, StepsDeadline; the pace so far, Pace; each step's share of
// what is left, Share).
//
// evalplan runs no step, reads no clock and prints nothing: eval runs
// the steps on the plan, and tells it the times they took.
package evalplan
