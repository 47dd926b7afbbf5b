package topo

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysfs"
)

// ErrHwlocXML is wrapped by FromHwlocXML's errors about the document.
var ErrHwlocXML = errors.New("not an hwloc topology")

type xmlInfo struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlObject struct {
	Type          string      `xml:"type,attr"`
	OSIndex       string      `xml:"os_index,attr"`
	GPIndex       string      `xml:"gp_index,attr"`
	Cpuset        string      `xml:"cpuset,attr"`
	Complete      string      `xml:"complete_cpuset,attr"`
	Allowed       string      `xml:"allowed_cpuset,attr"`
	Subtype       string      `xml:"subtype,attr"`
	LocalMemory   int64       `xml:"local_memory,attr"`
	CacheSize     int64       `xml:"cache_size,attr"`
	Depth         string      `xml:"depth,attr"`
	CacheLinesize int         `xml:"cache_linesize,attr"`
	CacheAssoc    int         `xml:"cache_associativity,attr"`
	CacheType     string      `xml:"cache_type,attr"`
	Infos         []xmlInfo   `xml:"info"`
	Children      []xmlObject `xml:"object"`
}

type xmlDistances struct {
	Type     string   `xml:"type,attr"`
	NbObjs   int      `xml:"nbobjs,attr"`
	Kind     int      `xml:"kind,attr"`
	Name     string   `xml:"name,attr"`
	Indexing string   `xml:"indexing,attr"`
	Indexes  []string `xml:"indexes"`
	Values   []string `xml:"u64values"`
}

type xmlMemAttrValue struct {
	TargetType      string `xml:"target_obj_type,attr"`
	TargetGP        string `xml:"target_obj_gp_index,attr"`
	Value           uint64 `xml:"value,attr"`
	InitiatorCpuset string `xml:"initiator_cpuset,attr"`
	InitiatorGP     string `xml:"initiator_obj_gp_index,attr"`
}

type xmlMemAttr struct {
	Name   string            `xml:"name,attr"`
	Values []xmlMemAttrValue `xml:"memattr_value"`
}

type xmlTopology struct {
	XMLName   xml.Name       `xml:"topology"`
	Root      *xmlObject     `xml:"object"`
	Distances []xmlDistances `xml:"distances2"`
	MemAttrs  []xmlMemAttr   `xml:"memattr"`
	Infos     []xmlInfo      `xml:"info"`
}

func info(is []xmlInfo, name string) string {
	for _, i := range is {
		if i.Name == name {
			return i.Value
		}
	}
	return ""
}

var cacheTypeName = regexp.MustCompile(`^L(\d+)(i?)Cache$`)

// FromHwlocXML reads a topology exported by hwloc 2 (`lstopo --of xml`,
// or `lstopo file.xml` of a machine numalab is not running on).
//
// It takes Package, Die, Core, PU and NUMANode objects, CPU caches (L1Cache
// to L5Cache and their i variants; memory-side caches are not CPU caches
// and are left out), the CPUModel, HostName, OSName/OSRelease and DMI
// infos, the NUMANode latency distance matrix (distances2, "NUMALatency")
// into Distances, and the "Latency" memory attribute, where present, into
// LatencyNS. PUs outside the root's allowed_cpuset go to Offline with those
// in complete_cpuset that have no PU object. A document without Package
// objects (hwloc's synthetic topologies) gets one package, 0, holding every
// CPU; a PU without a Core above it is a core of its own. A CPU local to
// several nodes (DRAM and HBM behind the same cores) gets the lowest node
// number in CPU.Node.
func FromHwlocXML(r io.Reader) (*result.Topology, error) {
	var doc xmlTopology
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading hwloc XML: %w (%w: want the output of lstopo --of xml)", err, ErrHwlocXML)
	}
	if doc.Root == nil {
		return nil, fmt.Errorf("reading hwloc XML: no root object: %w (want the output of lstopo --of xml)", ErrHwlocXML)
	}
	root := doc.Root
	t := &result.Topology{Source: "hwloc"}
	allInfos := slices.Concat(root.Infos, doc.Infos)
	t.Host = info(allInfos, "HostName")
	if rel := info(allInfos, "OSRelease"); rel != "" {
		t.Kernel = strings.TrimSpace(cmp.Or(info(allInfos, "OSName"), "Linux") + " " + rel)
	}
	t.Hypervisor = dmiHypervisor(info(allInfos, "DMISysVendor"), info(allInfos, "DMIProductName"), false, false)

	var allowed []int
	hasAllowed := false
	if root.Allowed != "" {
		if a, err := sysfs.ParseCPUMask([]byte(root.Allowed)); err == nil {
			allowed, hasAllowed = a, true
		}
	}

	// Walk the tree, remembering the enclosing package, die and core.
	type pu struct {
		id, pkg, die int
		core         *xmlObject
	}
	var pus []pu
	var nodes []*xmlObject
	var caches []*xmlObject
	var packages []*xmlObject
	byGP := make(map[string]*xmlObject)
	pkgIndex := make(map[*xmlObject]int)
	var walk func(o *xmlObject, pkg, die int, core *xmlObject) error
	walk = func(o *xmlObject, pkg, die int, core *xmlObject) error {
		if o.GPIndex != "" {
			byGP[o.GPIndex] = o
		}
		switch o.Type {
		case "Package", "Socket":
			packages = append(packages, o)
			pkg = atoiOr(o.OSIndex, len(packages)-1)
			pkgIndex[o] = pkg
			if t.CPUModel == "" {
				t.CPUModel = info(o.Infos, "CPUModel")
			}
		case "Die":
			die = atoiOr(o.OSIndex, 0)
		case "Core":
			core = o
		case "NUMANode":
			nodes = append(nodes, o)
		case "PU":
			id, err := strconv.Atoi(o.OSIndex)
			if err != nil {
				return fmt.Errorf("reading hwloc XML: PU with os_index %q: %w", o.OSIndex, ErrHwlocXML)
			}
			pus = append(pus, pu{id, pkg, die, core})
		default:
			if isCPUCache(o) {
				caches = append(caches, o)
			}
		}
		for i := range o.Children {
			if err := walk(&o.Children[i], pkg, die, core); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, 0, 0, nil); err != nil {
		return nil, err
	}
	if t.CPUModel == "" {
		t.CPUModel = info(allInfos, "CPUModel")
	}
	if len(pus) == 0 {
		return nil, fmt.Errorf("reading hwloc XML: no PU objects: %w (want the output of lstopo --of xml)", ErrHwlocXML)
	}
	slices.SortFunc(pus, func(a, b pu) int { return cmp.Compare(a.id, b.id) })

	var usable, all []int
	for _, p := range pus {
		all = append(all, p.id)
		if !hasAllowed || contains(allowed, p.id) {
			usable = append(usable, p.id)
		}
	}
	if root.Complete != "" {
		if c, err := sysfs.ParseCPUMask([]byte(root.Complete)); err == nil {
			all = normalizeInts(append(all, c...))
		}
	}
	for _, id := range all {
		if !contains(usable, id) {
			t.Offline = append(t.Offline, id)
		}
	}

	// Cores.
	coreIdx := make(map[*xmlObject]int)
	coreOf := make(map[int]int)
	for _, p := range pus {
		if !contains(usable, p.id) {
			continue
		}
		key := p.core
		if key == nil {
			t.Cores = append(t.Cores, result.Core{Package: p.pkg, Die: p.die, ID: p.id, CPUs: []int{p.id}})
			coreOf[p.id] = len(t.Cores) - 1
			continue
		}
		i, ok := coreIdx[key]
		if !ok {
			i = len(t.Cores)
			coreIdx[key] = i
			t.Cores = append(t.Cores, result.Core{Package: p.pkg, Die: p.die, ID: atoiOr(key.OSIndex, p.id)})
		}
		t.Cores[i].CPUs = append(t.Cores[i].CPUs, p.id)
		coreOf[p.id] = i
	}
	perm := sortCores(t.Cores)
	for _, p := range pus {
		if contains(usable, p.id) {
			t.CPUs = append(t.CPUs, result.CPU{ID: p.id, Package: p.pkg, Die: p.die, Core: perm[coreOf[p.id]], Node: -1})
		}
	}

	// Packages.
	if len(packages) == 0 {
		t.Packages = []result.Package{{ID: 0, CPUs: slices.Clone(usable)}}
	}
	for _, o := range packages {
		cs, _ := sysfs.ParseCPUMask([]byte(o.Cpuset))
		t.Packages = append(t.Packages,
			result.Package{ID: pkgIndex[o], Model: info(o.Infos, "CPUModel"), CPUs: intersect(cs, usable)})
	}
	slices.SortFunc(t.Packages, func(a, b result.Package) int { return cmp.Compare(a.ID, b.ID) })

	// NUMA nodes; a document without any has one node with every CPU.
	if len(nodes) == 0 {
		t.Nodes = []result.Node{{ID: 0, CPUs: slices.Clone(usable)}}
	}
	for i, o := range nodes {
		cs, _ := sysfs.ParseCPUMask([]byte(o.Cpuset))
		t.Nodes = append(t.Nodes, result.Node{ID: atoiOr(o.OSIndex, i), CPUs: intersect(cs, usable), MemBytes: o.LocalMemory})
	}
	slices.SortFunc(t.Nodes, func(a, b result.Node) int { return cmp.Compare(a.ID, b.ID) })
	for i := range t.CPUs {
		for _, n := range t.Nodes {
			if contains(n.CPUs, t.CPUs[i].ID) {
				t.CPUs[i].Node = n.ID
				break
			}
		}
	}

	// Caches.
	for _, o := range caches {
		cs, _ := sysfs.ParseCPUMask([]byte(o.Cpuset))
		cs = intersect(cs, usable)
		if len(cs) == 0 {
			continue
		}
		level, typ := cacheKind(o)
		t.Caches = append(t.Caches, result.Cache{Level: level, Type: typ, SizeBytes: o.CacheSize,
			LineBytes: max(o.CacheLinesize, 0), Ways: max(o.CacheAssoc, 0), CPUs: cs})
	}
	sortCaches(t.Caches)

	nodeOf := func(o *xmlObject) int {
		if o == nil || o.Type != "NUMANode" {
			return -1
		}
		return t.NodeIndex(atoiOr(o.OSIndex, -1))
	}
	t.Distances = xmlNodeDistances(doc.Distances, t, byGP, nodeOf)
	nodeSets := make([][]int, len(t.Nodes)) // each node's CPUs, usable or not
	for _, o := range nodes {
		if i := nodeOf(o); i >= 0 {
			nodeSets[i], _ = sysfs.ParseCPUMask([]byte(o.Cpuset))
		}
	}
	t.LatencyNS = xmlLatency(doc.MemAttrs, nodeSets, byGP, nodeOf)
	return t, nil
}

func isCPUCache(o *xmlObject) bool {
	if o.Subtype == "MemorySideCache" {
		return false
	}
	if o.Type == "Cache" { // hwloc 1.x
		return true
	}
	return cacheTypeName.MatchString(o.Type)
}

// cacheKind returns a cache's level and type from its attributes, falling
// back to its type name ("L2Cache", "L1iCache").
func cacheKind(o *xmlObject) (int, string) {
	level := atoiOr(o.Depth, 0)
	typ := "Unified"
	if m := cacheTypeName.FindStringSubmatch(o.Type); m != nil {
		if level == 0 {
			level, _ = strconv.Atoi(m[1])
		}
		if m[2] == "i" {
			typ = "Instruction"
		}
	}
	switch o.CacheType {
	case "1":
		typ = "Data"
	case "2":
		typ = "Instruction"
	case "0":
		typ = "Unified"
	}
	return level, typ
}

// xmlNodeDistances returns the NUMA latency matrix (hwloc's NUMALatency,
// or the first NUMANode matrix whose kind means latency), reordered to
// t.Nodes; nil when there is none or it does not cover every node.
func xmlNodeDistances(ds []xmlDistances, t *result.Topology, byGP map[string]*xmlObject,
	nodeOf func(*xmlObject) int) [][]int {
	var best *xmlDistances
	for i := range ds {
		d := &ds[i]
		if d.Type != "NUMANode" || d.Kind&4 == 0 && d.Name != "NUMALatency" {
			continue
		}
		if best == nil || d.Name == "NUMALatency" && best.Name != "NUMALatency" {
			best = d
		}
	}
	if best == nil {
		return nil
	}
	idx := strings.Fields(strings.Join(best.Indexes, " "))
	vals := strings.Fields(strings.Join(best.Values, " "))
	n := best.NbObjs
	if len(idx) != n || len(vals) != n*n || n != len(t.Nodes) {
		return nil
	}
	pos := make([]int, n) // position in the matrix -> position in t.Nodes
	for i, s := range idx {
		if best.Indexing == "gp" {
			pos[i] = nodeOf(byGP[s])
		} else {
			pos[i] = t.NodeIndex(atoiOr(s, -1))
		}
		if pos[i] < 0 {
			return nil
		}
	}
	m := make([][]int, n)
	for i := range m {
		m[i] = make([]int, n)
	}
	for i := range n {
		for j := range n {
			v, err := strconv.Atoi(vals[i*n+j])
			if err != nil {
				return nil
			}
			m[pos[i]][pos[j]] = v
		}
	}
	return m
}

// xmlLatency returns the "Latency" memory attribute as a node-to-node
// matrix in ns: row i holds the values whose initiator is node i's CPUs
// (exactly, or else a set containing them), column j the target node.
// Entries hwloc does not give are 0. Nil when the attribute is absent.
func xmlLatency(attrs []xmlMemAttr, nodeSets [][]int, byGP map[string]*xmlObject,
	nodeOf func(*xmlObject) int) [][]float64 {
	var lat *xmlMemAttr
	for i := range attrs {
		if strings.EqualFold(attrs[i].Name, "Latency") {
			lat = &attrs[i]
		}
	}
	if lat == nil || len(lat.Values) == 0 {
		return nil
	}
	n := len(nodeSets)
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
	}
	exact := make([][]bool, n)
	for i := range exact {
		exact[i] = make([]bool, n)
	}
	found := false
	for _, v := range lat.Values {
		j := nodeOf(byGP[v.TargetGP])
		if j < 0 {
			continue
		}
		var init []int
		switch {
		case v.InitiatorCpuset != "":
			init, _ = sysfs.ParseCPUMask([]byte(v.InitiatorCpuset))
		case v.InitiatorGP != "":
			if o := byGP[v.InitiatorGP]; o != nil {
				init, _ = sysfs.ParseCPUMask([]byte(o.Cpuset))
			}
		}
		for i, cpus := range nodeSets {
			if len(cpus) == 0 {
				continue
			}
			isExact := slices.Equal(cpus, init)
			within := len(intersect(cpus, init)) == len(cpus)
			if isExact || within && !exact[i][j] {
				m[i][j] = float64(v.Value)
				exact[i][j] = exact[i][j] || isExact
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	return m
}

// sortCores orders cores by (package, die, id, first CPU) and returns each
// old index's new position.
func sortCores(cores []result.Core) []int {
	perm := make([]int, len(cores))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		x, y := cores[a], cores[b]
		return cmp.Or(cmp.Compare(x.Package, y.Package), cmp.Compare(x.Die, y.Die), cmp.Compare(x.ID, y.ID),
			cmp.Compare(first(x.CPUs), first(y.CPUs)))
	})
	sorted := make([]result.Core, len(cores))
	newIndex := make([]int, len(cores))
	for to, from := range perm {
		sorted[to] = cores[from]
		newIndex[from] = to
	}
	copy(cores, sorted)
	return newIndex
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n
	}
	return def
}

func normalizeInts(s []int) []int {
	slices.Sort(s)
	return slices.Compact(s)
}
