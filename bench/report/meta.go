package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// metaFile holds, in a results directory, what the results were measured
// on and at.
const metaFile = "meta.json"

// meta is what a table says of its figures: the device, driver and
// machine, the commit measured, when, and by what command.
type meta struct {
	Device  string `json:"device"` // as vkops bench names it: "NAME (TYPE, DRIVER)"
	Driver  string `json:"driver"`
	Machine string `json:"machine"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	Command string `json:"command"`
	Seconds int    `json:"seconds,omitempty"` // how long the command took, where known
	// Load is this machine's load average over the last 5 minutes
	// before a run of it began (loadavg.txt beside its JSON, which make
	// bench-report writes), else when it was rendered: on a shared
	// machine, how much else ran. Taken after the run, it counted the
	// run's own processes, about 1.4 on 2 vCPUs.
	Load string `json:"load,omitempty"`
}

func readMeta(dir string) (meta, error) {
	var m meta
	data, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, metaFile), err)
	}
	return m, nil
}

func writeMeta(dir string, m meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, metaFile), append(data, '\n'), 0o644)
}

// deviceName is the device's own name: "llvmpipe (LLVM 15.0.6, 256 bits)".
func (m meta) deviceName() string {
	name, _, _ := m.splitDevice()
	return name
}

// kind is "cpu" for a device that runs on the host's cores, such as
// lavapipe, and "gpu" for any other: the blocks a device's tables fill.
func (m meta) kind() string {
	if _, typ, _ := m.splitDevice(); typ == "cpu" {
		return "cpu"
	}
	return "gpu"
}

// slug names the device's directory under bench/results: "lavapipe" for
// Mesa's llvmpipe, else its name in lower case words joined by dashes.
func (m meta) slug() string {
	name, _, driver := m.splitDevice()
	if driver == "llvmpipe" {
		return "lavapipe"
	}
	f := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9')
	})
	return strings.Join(f, "-")
}

// splitDevice parses Device.String()'s "NAME (TYPE, DRIVER)"; a name
// may hold brackets of its own.
func (m meta) splitDevice() (name, typ, driver string) {
	i := strings.LastIndex(m.Device, " (")
	if i < 0 || !strings.HasSuffix(m.Device, ")") {
		return m.Device, "", ""
	}
	typ, driver, _ = strings.Cut(m.Device[i+2:len(m.Device)-1], ", ")
	return m.Device[:i], typ, driver
}

// metaLine heads a device's tables.
func (res *results) metaLine() string {
	m := res.meta
	var peers []string
	for _, p := range res.peers {
		peers = append(peers, strings.TrimSpace(p+" "+res.versions[p]))
	}
	took := ""
	if m.Seconds > 0 {
		took = fmt.Sprintf(", %d s", m.Seconds)
	}
	if m.Load != "" {
		took += ", load average " + m.Load
	}
	runs := "One run"
	if n := res.runs(); n > 1 {
		runs = fmt.Sprintf("Medians of %d runs, ranges in brackets", n)
	}
	return fmt.Sprintf("**%s**, driver %s; %s. Commit `%s`, %s; `%s`%s. Peers: %s. %s; ratios are a peer's wall time over vkops's, above 1 where vkops is faster.",
		m.deviceName(), m.Driver, m.Machine, m.Commit, m.Date, m.Command, took, strings.Join(peers, ", "), runs)
}

// newMeta describes the results in src, which vkops bench measured on
// device: the driver from a `vkops info` listing there (info.txt, or the
// GPU bundle's log.txt), the machine from the bundle's nvidia-smi line or
// else this machine's, with its load, the date from the newest file.
func newMeta(src, device, commit, command string, seconds int) (meta, error) {
	m := meta{Device: device, Commit: commit, Command: command, Seconds: seconds}
	var err error
	if m.Commit == "" {
		if m.Commit, err = headCommit(); err != nil {
			return m, err
		}
	}
	m.Driver = driverIn(filepath.Join(src, "info.txt"), filepath.Join(src, "log.txt"))
	if m.Machine = gpuIn(filepath.Join(src, "log.txt")); m.Machine == "" {
		m.Machine, m.Load = thisMachine(), loadAverage(filepath.Join(src, "loadavg.txt"))
	}
	files, _ := filepath.Glob(filepath.Join(src, "*.json"))
	var newest time.Time
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(newest) {
			newest = st.ModTime()
		}
	}
	m.Date = newest.UTC().Format("2006-01-02 15:04 UTC")
	return m, nil
}

// driverIn finds the chosen device's driver line in a `vkops info`
// listing: "llvmpipe Mesa 22.3.6 (LLVM 15.0.6)".
func driverIn(files ...string) string {
	for _, f := range files {
		chosen := false
		for _, line := range lines(f) {
			switch {
			case strings.HasPrefix(line, "device "):
				chosen = strings.Contains(line, "(chosen)")
			case chosen && strings.HasPrefix(strings.TrimSpace(line), "driver:"):
				return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "driver:"))
			}
		}
	}
	return "unknown"
}

// gpuIn describes the GPU from what `nvidia-smi --query-gpu=name,...
// --format=csv` wrote in the GPU bundle's log, less its name and
// driver, which the tables give already: "clocks.sm 1980 MHz,
// memory.total 81559 MiB (nvidia-smi)"; "" without it.
func gpuIn(file string) string {
	ls := lines(file)
	for i, line := range ls {
		if !strings.HasPrefix(line, "name, ") || i+1 >= len(ls) {
			continue
		}
		keys, values := strings.Split(line, ", "), strings.Split(ls[i+1], ", ")
		var parts []string
		for j, k := range keys {
			k, _, _ = strings.Cut(k, " [")
			if j < len(values) && k != "name" && k != "driver_version" {
				parts = append(parts, k+" "+values[j])
			}
		}
		return strings.Join(parts, ", ") + " (nvidia-smi)"
	}
	return ""
}

// thisMachine describes the host: CPU model, cores, memory.
func thisMachine() string {
	model, cores := "unknown CPU", "cores"
	for _, line := range lines("/proc/cpuinfo") {
		k, v, _ := strings.Cut(line, ":")
		switch strings.TrimSpace(k) {
		case "model name":
			model = strings.TrimSpace(v)
		case "flags":
			if strings.Contains(" "+v+" ", " hypervisor ") {
				cores = "vCPUs"
			}
		}
	}
	mem := ""
	for _, line := range lines("/proc/meminfo") {
		var kb int64
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %d GiB", (kb+1<<19)>>20)
		}
	}
	return fmt.Sprintf("%s, %d %s%s", model, runtime.NumCPU(), cores, mem)
}

// loadAverage returns the load average over 5 minutes in before, a copy
// of /proc/loadavg, else in /proc/loadavg now, or "".
func loadAverage(before string) string {
	for _, file := range []string{before, "/proc/loadavg"} {
		if f := strings.Fields(strings.Join(lines(file), " ")); len(f) > 1 {
			return f[1]
		}
	}
	return ""
}

func lines(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ls []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ls = append(ls, sc.Text())
	}
	return ls
}

// headCommit is the commit checked out, marked "-dirty" where the code
// differs from it (the files this tool writes aside).
func headCommit() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "", fmt.Errorf("git rev-parse: %w (give -commit)", err)
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--",
		".", ":(exclude)bench/results", ":(exclude)*.md", ":(exclude)docs").Output()
	if err != nil {
		return "", fmt.Errorf("git status: %w", err)
	}
	if len(strings.TrimSpace(string(status))) > 0 {
		commit += "-dirty"
	}
	return commit, nil
}
