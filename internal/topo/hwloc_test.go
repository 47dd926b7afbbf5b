package topo

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/numalab/numalab/internal/result"
)

// countObjects counts `<object type="T"` in the raw text: an expectation
// derived from the file without the parser under test.
func countObjects(t *testing.T, raw, typ string) int {
	t.Helper()
	return len(regexp.MustCompile(`<object type="`+regexp.QuoteMeta(typ)+`"`).FindAllStringIndex(raw, -1))
}

func readXML(t *testing.T, name string) (*result.Topology, string) {
	t.Helper()
	p := filepath.Join(fixtures, name)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := FromHwlocXML(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return topo, string(raw)
}

func TestFromHwlocXMLFixtures(t *testing.T) {
	tests := []struct {
		file string
		// Caches counted by type name that are CPU caches (memory-side
		// caches subtracted where the file has them).
		memSideCaches int
		check         func(t *testing.T, topo *result.Topology)
	}{
		{file: "16amd64-4distances.xml", check: func(t *testing.T, topo *result.Topology) {
			// distances2 NUMALatency lists nodes in the order 1 0 2 5 4 3 6 7,
			// all 20 off the diagonal.
			for i := range topo.Nodes {
				for j := range topo.Nodes {
					want := 20
					if i == j {
						want = 10
					}
					if topo.Distances[i][j] != want {
						t.Errorf("distance %d->%d = %d, want %d", topo.Nodes[i].ID, topo.Nodes[j].ID, topo.Distances[i][j], want)
					}
				}
			}
			if topo.CPUModel != "Dual Core AMD Opteron(tm) Processor 865" || topo.Packages[3].Model != topo.CPUModel {
				t.Errorf("CPU model %q, package 3 %q", topo.CPUModel, topo.Packages[3].Model)
			}
			if topo.LatencyNS != nil {
				t.Errorf("LatencyNS = %v, want nil (no Latency memattr)", topo.LatencyNS)
			}
		}},
		{file: "192em64t-24n8c2t.xml", check: func(t *testing.T, topo *result.Topology) {
			// Row 0 of NUMALatency starts 10 50 65 65; node 0 holds 8 million... (local_memory 33255329792).
			if got := topo.Distances[0][:4]; !slices.Equal(got, []int{10, 50, 65, 65}) {
				t.Errorf("distances row 0 starts %v, want [10 50 65 65]", got)
			}
			if topo.Nodes[0].MemBytes != 33255329792 {
				t.Errorf("node 0 memory %d, want 33255329792", topo.Nodes[0].MemBytes)
			}
			// Core 0 of package 0 has PUs 0 and 192.
			if c := topo.Cores[0]; c.Package != 0 || c.ID != 0 || !slices.Equal(c.CPUs, []int{0, 192}) {
				t.Errorf("first core %+v, want package 0 core 0 with CPUs 0 and 192", c)
			}
			if topo.ThreadsPerCore() != 2 || topo.LastLevelCache() != 20971520 {
				t.Errorf("threads per core %d, LLC %d", topo.ThreadsPerCore(), topo.LastLevelCache())
			}
		}},
		{file: "64intel64-heteromem.xml", memSideCaches: 4, check: func(t *testing.T, topo *result.Topology) {
			// Nodes 0-3 are DRAM (1 GiB), 4-7 HBM (2 GiB); node 0 and 7
			// share CPUs 0-3,16-19,32-35,48-51.
			n0, n7 := topo.Nodes[0], topo.Nodes[7]
			if n0.MemBytes != 1<<30 || n7.MemBytes != 2<<30 || !slices.Equal(n0.CPUs, n7.CPUs) || len(n0.CPUs) != 16 {
				t.Errorf("node 0 %+v, node 7 %+v", n0, n7)
			}
			if c, _ := topo.CPU(0); c.Node != 0 {
				t.Errorf("CPU 0 on node %d, want the lowest of its nodes, 0", c.Node)
			}
			if topo.Distances != nil || topo.LatencyNS != nil {
				t.Errorf("distances %v, latency %v; the file has neither", topo.Distances, topo.LatencyNS)
			}
			if topo.Kernel != "Linux 3.10.0-327.el7.x86_64" || topo.Host != "localhost.localdomain" {
				t.Errorf("kernel %q host %q", topo.Kernel, topo.Host)
			}
		}},
		{file: "8intel64-4n2t-memattrs.xml", check: func(t *testing.T, topo *result.Topology) {
			// Synthetic "node:4 pu:2": no packages or cores in the file.
			if len(topo.Packages) != 1 || len(topo.Packages[0].CPUs) != 8 {
				t.Errorf("packages %+v, want one holding all 8 CPUs", topo.Packages)
			}
			if len(topo.Cores) != 8 {
				t.Errorf("%d cores, want 8 (each PU its own)", len(topo.Cores))
			}
			if topo.LatencyNS != nil {
				t.Errorf("LatencyNS %v; the file's memattrs are Bandwidth, foobar, barnoinit, coincoin", topo.LatencyNS)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			topo, raw := readXML(t, tt.file)
			pkgs := countObjects(t, raw, "Package")
			if pkgs == 0 {
				pkgs = 1
			}
			cores := countObjects(t, raw, "Core")
			if cores == 0 {
				cores = countObjects(t, raw, "PU")
			}
			caches := -tt.memSideCaches
			for _, typ := range []string{"L1Cache", "L2Cache", "L3Cache", "L1iCache"} {
				caches += countObjects(t, raw, typ)
			}
			want := map[string]int{
				"cpus": countObjects(t, raw, "PU"), "packages": pkgs, "nodes": countObjects(t, raw, "NUMANode"),
				"cores": cores, "caches": caches,
			}
			got := map[string]int{
				"cpus": len(topo.CPUs), "packages": len(topo.Packages), "nodes": len(topo.Nodes),
				"cores": len(topo.Cores), "caches": len(topo.Caches),
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: got %d, the file has %d", k, got[k], w)
				}
			}
			if n := strings.Count(raw, `<distances2 type="NUMANode"`); n > 0 && len(topo.Distances) != len(topo.Nodes) {
				t.Errorf("the file has a NUMANode distance matrix; got %v", topo.Distances)
			}
			checkConsistent(t, topo)
			tt.check(t, topo)
		})
	}
}

// checkConsistent checks the invariants every Topology must keep, whatever
// its source.
func checkConsistent(t *testing.T, topo *result.Topology) {
	t.Helper()
	seen := map[int]int{}
	for i, c := range topo.CPUs {
		if i > 0 && topo.CPUs[i-1].ID >= c.ID {
			t.Errorf("CPUs not sorted at %d", c.ID)
		}
		if c.Core < 0 || c.Core >= len(topo.Cores) || !slices.Contains(topo.Cores[c.Core].CPUs, c.ID) {
			t.Errorf("CPU %d: core index %d does not hold it", c.ID, c.Core)
		}
		if c.Node >= 0 && topo.NodeIndex(c.Node) < 0 {
			t.Errorf("CPU %d: node %d is not in Nodes", c.ID, c.Node)
		}
	}
	for _, co := range topo.Cores {
		for _, id := range co.CPUs {
			seen[id]++
		}
	}
	for _, c := range topo.CPUs {
		if seen[c.ID] != 1 {
			t.Errorf("CPU %d is in %d cores, want 1", c.ID, seen[c.ID])
		}
	}
	for _, p := range topo.Packages {
		for _, id := range p.CPUs {
			if c, ok := topo.CPU(id); !ok || c.Package != p.ID {
				t.Errorf("package %d lists CPU %d whose package is %d", p.ID, id, c.Package)
			}
		}
	}
	for i, row := range topo.Distances {
		if len(row) != len(topo.Nodes) || row[i] == 0 {
			t.Errorf("distance row %d = %v", i, row)
		}
	}
}

// TestFromHwlocXMLMatrices checks that a permuted, asymmetric distance
// matrix and a Latency memory attribute land on the right nodes.
func TestFromHwlocXMLMatrices(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="3.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000003f" allowed_cpuset="0x00000007" gp_index="1">
    <info name="HostName" value="box"/>
    <object type="Package" os_index="0" cpuset="0x00000003" gp_index="2">
      <info name="CPUModel" value="Test CPU"/>
      <object type="NUMANode" os_index="4" cpuset="0x00000003" gp_index="3" local_memory="1024"/>
      <object type="L2Cache" cpuset="0x00000003" gp_index="4" cache_size="1048576" depth="2" cache_linesize="64" cache_associativity="8" cache_type="0">
        <object type="L1Cache" cpuset="0x00000001" gp_index="5" cache_size="32768" depth="1" cache_linesize="64" cache_associativity="8" cache_type="1">
          <object type="Core" os_index="7" cpuset="0x00000001" gp_index="6">
            <object type="PU" os_index="0" cpuset="0x00000001" gp_index="7"/>
          </object>
        </object>
        <object type="Core" os_index="9" cpuset="0x00000002" gp_index="8">
          <object type="PU" os_index="1" cpuset="0x00000002" gp_index="9"/>
        </object>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x0000000c" gp_index="10">
      <object type="NUMANode" os_index="2" cpuset="0x0000000c" gp_index="11" local_memory="2048"/>
      <object type="Core" os_index="0" cpuset="0x0000000c" gp_index="12">
        <object type="PU" os_index="2" cpuset="0x00000004" gp_index="13"/>
        <object type="PU" os_index="3" cpuset="0x00000008" gp_index="14"/>
      </object>
    </object>
  </object>
  <distances2 type="NUMANode" nbobjs="2" kind="5" name="NUMALatency" indexing="os">
    <indexes length="4">4 2 </indexes>
    <u64values length="12">10 21 31 11 </u64values>
  </distances2>
  <memattr name="Latency" flags="6">
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="3" value="90" initiator_cpuset="0x00000003"/>
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="11" value="140" initiator_cpuset="0x00000003"/>
    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="11" value="95" initiator_obj_gp_index="10" initiator_obj_type="Package"/>
  </memattr>
</topology>`
	topo, err := FromHwlocXML(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	// Nodes sort as 2, 4; the file's order is 4, 2 with 4->2 = 21, 2->4 = 31.
	if topo.Nodes[0].ID != 2 || topo.Nodes[1].ID != 4 {
		t.Fatalf("nodes %+v", topo.Nodes)
	}
	if want := [][]int{{11, 31}, {21, 10}}; !slices.EqualFunc(topo.Distances, want, slices.Equal) {
		t.Errorf("distances %v, want %v", topo.Distances, want)
	}
	// CPU 3 is outside allowed_cpuset; 4 and 5 are in complete_cpuset only.
	if !slices.Equal(topo.Offline, []int{3, 4, 5}) || len(topo.CPUs) != 3 {
		t.Errorf("offline %v, %d CPUs", topo.Offline, len(topo.CPUs))
	}
	// Row = initiator: node 4's CPUs 0-1 by cpuset, node 2's CPUs 2-3 as
	// package 1 (CPU 3 being disallowed does not change the node's set).
	if want := [][]float64{{95, 0}, {140, 90}}; !slices.EqualFunc(topo.LatencyNS, want, slices.Equal) {
		t.Errorf("latency %v, want %v", topo.LatencyNS, want)
	}
	if topo.Host != "box" || topo.CPUModel != "Test CPU" || topo.Packages[1].Model != "" {
		t.Errorf("host %q model %q", topo.Host, topo.CPUModel)
	}
	if len(topo.Caches) != 2 || topo.Caches[0].Type != "Data" || topo.Caches[1].Type != "Unified" ||
		!slices.Equal(topo.Caches[1].CPUs, []int{0, 1}) {
		t.Errorf("caches %+v", topo.Caches)
	}
	if c, _ := topo.CPU(1); topo.Cores[c.Core].ID != 9 || c.Node != 4 || c.Package != 0 {
		t.Errorf("CPU 1 %+v in core %+v", c, topo.Cores[c.Core])
	}
	checkConsistent(t, topo)
}

func TestFromHwlocXMLRefusesOtherDocuments(t *testing.T) {
	for _, doc := range []string{"", "not xml", `<topology version="3.0"></topology>`, `<html><body/></html>`,
		`<topology><object type="Machine"/></topology>`} {
		if _, err := FromHwlocXML(strings.NewReader(doc)); !errors.Is(err, ErrHwlocXML) {
			t.Errorf("FromHwlocXML(%q): err = %v, want ErrHwlocXML", doc, err)
		}
	}
}
