package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/vkops/vkops/bench"
)

// A sample is one result line: a case measured once, by vkops or by a
// peer, with the fields of bench.Result and those it does not know.
type sample struct {
	bench.Result
	labels []string // extra string and bool fields, "fused=true", sorted
	parts  []part   // extra number fields named NAME_ms, in file order
}

// part is one timed part of a run, such as an offload's upload.
type part struct {
	name string
	ms   float64
}

// caseKey names a case: the fields that tell cases apart.
type caseKey struct {
	op, pattern, dtype, shape string
}

func keyOf(r bench.Result) caseKey {
	return caseKey{r.Op, r.Pattern, r.DType, fmt.Sprint(r.Shape)}
}

// row is one case of the tables: vkops's samples, one a run, and the
// samples of each peer that ran the same case.
type row struct {
	key    caseKey
	labels []string
	vk     []sample
	peers  map[string][]sample
}

// name is the case as vkops bench prints it, with its labels:
// "chain/relu/f32[4096 4096] fused=true".
func (r *row) name() string {
	p := r.key.pattern
	if p == "" {
		p = "-"
	}
	s := fmt.Sprintf("%s/%s/%s%s", r.key.op, p, r.key.dtype, r.key.shape)
	return strings.Join(append([]string{s}, r.labels...), " ")
}

// overhead is the object vkops bench prints last: per-op cost and first
// calls.
type overhead struct {
	PerOp      bench.PerOp       `json:"per_op"`
	FirstCalls []bench.FirstCall `json:"first_calls"`
}

// results is one directory of bench/results: a device's runs.
type results struct {
	meta     meta
	rows     []*row   // in the order vkops first ran them
	peers    []string // in the order first met
	versions map[string]string
	overhead []overhead
	ceiling  *ceiling // the C harness's, where it ran (ceilingFile)
}

// known are the JSON fields of bench.Result; any other is a label or a
// part.
var known = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[bench.Result]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = true
	}
	return m
}()

// decode reads one result line.
func decode(line []byte) (sample, error) {
	var s sample
	if err := json.Unmarshal(line, &s.Result); err != nil {
		return s, err
	}
	// The raw fields, in file order, for the ones bench.Result lacks.
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return s, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return s, err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return s, err
		}
		s.addExtra(tok.(string), v)
	}
	sort.Strings(s.labels)
	return s, nil
}

// labelFields are the fields of bench.Result that tell cases apart
// beside the key, and so are labels too: a chain fused or not, and run
// from Go slices or on resident tensors.
var labelFields = map[string]bool{"fused": true, "slices": true}

// addExtra files a field bench.Result lacks, or one of labelFields, as
// a label or a part.
func (s *sample) addExtra(name string, v any) {
	if known[name] && !labelFields[name] {
		return
	}
	switch v := v.(type) {
	case string:
		s.labels = append(s.labels, name+"="+v)
	case bool:
		s.labels = append(s.labels, fmt.Sprintf("%s=%t", name, v))
	case json.Number:
		if p, ok := strings.CutSuffix(name, "_ms"); ok {
			if ms, err := v.Float64(); err == nil {
				s.parts = append(s.parts, part{p, ms})
			}
		}
	}
}

// load reads a results directory: meta.json and every other *.json file
// in it, each one run's lines (subdirectories, such as sweep/, are not
// read).
func load(dir string) (*results, error) {
	m, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	res := &results{meta: m, versions: map[string]string{}}
	var peers []sample
	for _, f := range files {
		if filepath.Base(f) == metaFile {
			continue
		}
		ss, ovs, err := readLines(f)
		if err != nil {
			return nil, err
		}
		res.overhead = append(res.overhead, ovs...)
		for _, s := range ss {
			if s.Peer != "" {
				peers = append(peers, s)
			} else {
				res.add(s)
			}
		}
	}
	if len(res.rows) == 0 {
		return nil, fmt.Errorf("%s: no vkops results", dir)
	}
	if res.ceiling, err = readCeiling(dir); err != nil {
		return nil, err
	}
	for _, p := range peers {
		res.addPeer(p)
	}
	// The cases beside a peer first, then those vkops ran alone.
	alone := func(r *row) int {
		if len(r.peers) == 0 {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(res.rows, func(a, b *row) int { return alone(a) - alone(b) })
	return res, nil
}

// readLines reads one file of JSON lines: results, and the overhead
// objects apart.
func readLines(file string) ([]sample, []overhead, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var ss []sample
	var ovs []overhead
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var head struct{ Op string }
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		if head.Op == "overhead" {
			var o overhead
			if err := json.Unmarshal(line, &o); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", file, n, err)
			}
			ovs = append(ovs, o)
			continue
		}
		s, err := decode(line)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		ss = append(ss, s)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	return ss, ovs, nil
}

// add files a vkops sample under its row.
func (res *results) add(s sample) {
	k := keyOf(s.Result)
	for _, r := range res.rows {
		if r.key == k && slices.Equal(r.labels, s.labels) {
			r.vk = append(r.vk, s)
			return
		}
	}
	res.rows = append(res.rows, &row{key: k, labels: s.labels, vk: []sample{s}, peers: map[string][]sample{}})
}

// addPeer files a peer's sample under every row of the same case whose
// labels include the sample's: a peer that has one way of running a
// chain stands beside vkops's fused and unfused rows alike.
func (res *results) addPeer(s sample) {
	k := keyOf(s.Result)
	matched := false
	for _, r := range res.rows {
		if r.key == k && subset(s.labels, r.labels) {
			r.peers[s.Peer] = append(r.peers[s.Peer], s)
			matched = true
		}
	}
	if matched && !slices.Contains(res.peers, s.Peer) {
		res.peers = append(res.peers, s.Peer)
		res.versions[s.Peer] = s.Version
	}
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// runs is how many runs the rows' figures are medians of: the most
// samples of any row.
func (res *results) runs() int {
	n := 0
	for _, r := range res.rows {
		n = max(n, len(r.vk))
	}
	return n
}
