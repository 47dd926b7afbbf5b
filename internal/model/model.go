// Package model is numalab's memory-latency transaction model: how many
// transactions per second a core, a socket and a multi-socket system deliver
// when part of every transaction must wait for round trips to memory
// (pointer chasing: B-tree navigation).
//
// The formulas are docs/model.md's, implemented exactly as pure functions:
//
//	cycles per transaction  C = A + M·L·f
//	tps per core            = f·10⁹ / C   (× the SMT gain with SMT)
//	total tps               = tps per core × cores per socket × sockets
//	S-socket latency        L = (Lloc + (S − 1)·Lrem) / S + B
//
// with A the core cycles a transaction needs when nothing waits for memory,
// M the memory waits per transaction that nothing overlaps, L the memory
// latency in ns and f the core clock in GHz. The classic form of the
// literature's worked examples, I instructions of which a fraction m waits,
// is A = (1 − m)·I and M = m·I. A and M are fitted, with confidence
// intervals, from points at two or more latencies (FitPoints); the SMT
// gain and the multi-socket latencies come from measurement or, failing
// that, from the published bands of published.go (StallBand). On top of
// these the package derives scaling ratios, the single-socket latency that
// matches an S-socket system, the two-tier memory break-even and
// per-core-licence sizing. It holds the one reading of a machine's latency
// inputs (Latencies), and it parses and checks the model commands' inputs,
// each refusal naming its flag: plausible ranges, physical bounds no
// machine passes, the published SMT band for a gain nothing measured, and
// more than PublishedSockets sockets only where a topology or the remote
// latency per hop gives the hops.
//
// The model does no I/O, measures nothing and knows no stored run: it is
// arithmetic on numbers the caller supplies. Reading a machine's figures
// from a topology or a stored run, and calibrating to stored runs, is
// package calib's; choosing a server to buy is package decide's; the DOP
// rule of thumb is package dop's; DDR timing is package dram's. It models
// neither bandwidth, nor queueing under load, nor caches: a "latency" is
// the average round trip of a dependent miss.
package model

import (
	"errors"
	"fmt"
	"math"
)

// ErrInput is wrapped by every error about a parameter out of range.
var ErrInput = errors.New("invalid model input")

// ErrUnreachable is wrapped when a target cannot be met at any positive
// latency (the cycles that do not wait for memory already cost too much).
var ErrUnreachable = errors.New("unreachable")

// Defaults from docs/model.md.
const (
	DefaultInstructions = 10_000_000 // instructions per transaction
	DefaultMiss         = 0.05       // fraction of instructions that wait for memory
)

// Workload is what one transaction asks of a core.
type Workload struct {
	Instructions float64 `json:"instructions"` // I: instructions per transaction
	Miss         float64 `json:"miss"`         // m: fraction of them that wait for a memory round trip
}

// Default is docs/model.md's workload: 10,000,000 instructions, 5% waiting.
func Default() Workload {
	return Workload{Instructions: DefaultInstructions, Miss: DefaultMiss}
}

// Validate reports the first parameter out of range.
func (w Workload) Validate() error {
	if !(w.Instructions > 0) || math.IsInf(w.Instructions, 0) {
		return fmt.Errorf("instructions per transaction %v: want a positive number: %w", w.Instructions, ErrInput)
	}
	if !(w.Miss >= 0 && w.Miss <= 1) {
		return fmt.Errorf("miss fraction %v: want a fraction in [0, 1]: %w", w.Miss, ErrInput)
	}
	return nil
}

// Core is A = (1 − m)·I, the core cycles a transaction needs when
// nothing waits for memory (the classic form charges every instruction
// that does not wait one cycle).
func (w Workload) Core() float64 { return (1 - w.Miss) * w.Instructions }

// Waits is M = m·I, the memory waits per transaction that nothing
// overlaps.
func (w Workload) Waits() float64 { return w.Miss * w.Instructions }

// FromCycles is the workload of C = A + M·L·f in the classic form:
// I = A + M, m = M / I.
func FromCycles(a, m float64) Workload {
	return Workload{Instructions: a + m, Miss: m / (a + m)}
}

// LatencyCycles is a latency in ns expressed in cycles of an f GHz clock.
func LatencyCycles(latencyNS, ghz float64) float64 {
	return latencyNS * ghz
}

// CyclesPerTxn is C = A + M·L·f: the core cycles A plus M waits of the
// whole latency each. In the classic form A = (1 − m)·I and M = m·I.
func CyclesPerTxn(w Workload, latencyNS, ghz float64) float64 {
	return w.Core() + w.Waits()*LatencyCycles(latencyNS, ghz)
}

// TPSPerCore is f·10⁹ / C, transactions per second on one core with one
// hardware thread.
func TPSPerCore(w Workload, latencyNS, ghz float64) float64 {
	return ghz * 1e9 / CyclesPerTxn(w, latencyNS, ghz)
}

// ThreadTPS is the per-core throughput the tables use: TPSPerCore times
// the SMT gain (1 with one thread per core).
func ThreadTPS(w Workload, latencyNS, ghz, smtGain float64) float64 {
	return TPSPerCore(w, latencyNS, ghz) * smtGain
}

// TotalTPS is per-core throughput × cores per socket × sockets.
func TotalTPS(perCore float64, coresPerSocket, sockets int) float64 {
	return perCore * float64(coresPerSocket) * float64(sockets)
}

// AverageLatency is the mean latency of S sockets with no memory locality
// (every node equally likely): (Lloc + (S − 1)·Lrem) / S + B, where B is an
// extra latency on every access (a memory buffer chip in the path).
func AverageLatency(localNS, remoteNS, bufferNS float64, sockets int) float64 {
	s := float64(sockets)
	return (localNS+(s-1)*remoteNS)/s + bufferNS
}

// LocalityLatency is the latency with a fraction p of accesses on the local
// node and the rest spread evenly over the other S − 1:
// p·Lloc + (1 − p)·Lrem + B. With p = 1/S it equals AverageLatency; with
// one socket every access is local.
func LocalityLatency(localNS, remoteNS, bufferNS float64, sockets int, p float64) float64 {
	if sockets <= 1 {
		return localNS + bufferNS
	}
	return p*localNS + (1-p)*remoteNS + bufferNS
}

// Ratio is b relative to a (b / a): the scaling from configuration a to b.
func Ratio(a, b float64) float64 {
	return b / a
}

// LatencyForTPS solves the model backwards: the memory latency (ns) at
// which one core at f GHz with an SMT gain g (1: one thread per core)
// delivers perCoreTPS: C = g·f·10⁹/tps and L = (C − A) / (M·f). It fails
// (wrapping ErrUnreachable) when no positive latency gives that
// throughput, and (wrapping ErrInput) when M = 0, since latency then does
// not matter.
func LatencyForTPS(w Workload, ghz, smtGain, perCoreTPS float64) (float64, error) {
	if err := w.Validate(); err != nil {
		return 0, err
	}
	if !(ghz > 0) {
		return 0, fmt.Errorf("clock %v GHz: want a positive frequency: %w", ghz, ErrInput)
	}
	if !(perCoreTPS > 0) {
		return 0, fmt.Errorf("target %v tps per core: want a positive throughput: %w", perCoreTPS, ErrInput)
	}
	if w.Miss == 0 {
		return 0, fmt.Errorf("solving for latency with no memory waits: throughput does not depend on latency: %w", ErrInput)
	}
	c := max(smtGain, 1) * ghz * 1e9 / perCoreTPS
	l := (c - w.Core()) / (w.Waits() * ghz)
	if !(l > 0) {
		return 0, fmt.Errorf("%.4g tps per core needs %.4g cycles per transaction, fewer than the %.4g core cycles "+
			"that do not wait for memory: %w", perCoreTPS, c, w.Core(), ErrUnreachable)
	}
	return l, nil
}

// MatchingSingleSocketLatency is the latency a single-socket system needs
// to deliver the same total throughput as an S-socket system with the same
// cores per socket, clock and SMT gain: its cores must each do S times the
// S-socket system's per-core throughput.
func MatchingSingleSocketLatency(w Workload, ghz, smtGain float64, sockets int,
	perCoreTPSAtS float64) (float64, error) {
	return LatencyForTPS(w, ghz, smtGain, float64(sockets)*perCoreTPSAtS)
}
