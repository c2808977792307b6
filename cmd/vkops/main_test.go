package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkops/vkops/internal/devtest"
)

// TestMain lets a test run this binary as the vkops command, in a fresh
// process with its own environment: VKOPS_AS_MAIN=1 and the arguments
// after "--".
func TestMain(m *testing.M) {
	if os.Getenv("VKOPS_AS_MAIN") == "1" {
		selfCommand = func(args ...string) (*exec.Cmd, error) {
			return exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...), nil
		}
		for i, a := range os.Args {
			if a == "--" {
				os.Exit(run(os.Args[i+1:], os.Stdout, os.Stderr))
			}
		}
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// noDevice is an environment in which the Vulkan loader finds no driver.
var noDevice = []string{"VK_ICD_FILENAMES=/nonexistent.json", "VK_DRIVER_FILES=/nonexistent.json"}

// missingDevice returns devtest.Missing's error when the child exited
// for want of a Vulkan device and none exists here, outside CI: what the
// child was to show needs a device. Otherwise it returns nil.
func missingDevice(code int, stderr string) error {
	if code != 1 || !strings.Contains(stderr, "no Vulkan device") {
		return nil
	}
	return devtest.Missing()
}

// vkops runs the command in a child process with extra environment.
func vkops(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return vkopsIn(t, "", env, args...)
}

// vkopsIn is vkops run in the directory dir ("" is the test's own).
func vkopsIn(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "VKOPS_AS_MAIN=1"), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestInfo(t *testing.T) {
	out, errOut, code := vkops(t, nil, "info", "--json")
	if err := missingDevice(code, errOut); err != nil {
		t.Skip(devtest.SkipLine(err))
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Chosen  int
		Devices []struct {
			Name   string
			Limits struct {
				MaxStorageBufferRange uint32 `json:"max_storage_buffer_range"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("info --json: %v\n%s", err, out)
	}
	if len(v.Devices) == 0 || v.Devices[v.Chosen].Limits.MaxStorageBufferRange == 0 {
		t.Fatalf("info --json lacks devices or limits: %s", out)
	}
	text, _, code := vkops(t, nil, "--device", "0", "info")
	if code != 0 || !strings.Contains(text, "(chosen)") || !strings.Contains(text, "maxStorageBufferRange") {
		t.Fatalf("info: exit %d\n%s", code, text)
	}
}

// Without any Vulkan driver, info prints one clear line and exits 1.
func TestInfoNoDevice(t *testing.T) {
	out, errOut, code := vkops(t, noDevice, "info")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q, want exit 1 and no output", code, out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "vkops: ") || !strings.Contains(lines[0], "no Vulkan device") {
		t.Fatalf("stderr %q: want one line beginning \"vkops: \" that says there is no Vulkan device", errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nosuchcommand"},
		{"help", "nosuchcommand"},
		{"help", "select", "where"},
		{"--nosuchflag", "info"},
		{"info", "--nosuchflag"},
		{"info", "extra"},
		{"--device", "no such device", "info"},
		{"bench", "--op", "nosuchop"},
	} {
		out, errOut, code := vkops(t, nil, args...)
		if err := missingDevice(code, errOut); err != nil {
			t.Logf("vkops %q: %s", args, devtest.SkipLine(err)) // --device needs devices to look among
			continue
		}
		if code != 2 {
			t.Errorf("vkops %q: exit %d, want 2 (%s)", args, code, errOut)
		}
		if !strings.HasPrefix(errOut, "vkops: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("vkops %q: stderr %q, want one line beginning \"vkops: \"", args, errOut)
		}
		if out != "" {
			t.Errorf("vkops %q: stdout %q, want nothing", args, out)
		}
		if strings.Contains(errOut, "goroutine ") {
			t.Errorf("vkops %q printed a Go panic trace", args)
		}
	}
	out, _, code := vkops(t, nil, "info", "--help")
	if code != 0 || !strings.Contains(out, "example:") || strings.Count(out, "usage:") != 1 {
		t.Errorf("info --help: exit %d, %q", code, out)
	}
	general, _, _ := vkops(t, nil, "help")
	for _, args := range [][]string{{"help", "help"}, {"help", "-h"}, {"help", "--help"}, {"--help"}} {
		if out, errOut, code := vkops(t, nil, args...); code != 0 || out != general || errOut != "" {
			t.Errorf("vkops %q: exit %d, stderr %q; want the general help", args, code, errOut)
		}
	}
}

// TestMessage checks that an error's line names the command as typed,
// once, whichever name the error began with (issue 40).
func TestMessage(t *testing.T) {
	for _, c := range []struct{ name, op, err, want string }{
		{"reduce-or", "reduce_logical_or", "reduce_logical_or: axis 5 is out of range", "reduce-or: axis 5 is out of range"},
		{"reduce-or", "reduce_logical_or", "reduce-or: --axes is required", "reduce-or: --axes is required"},
		{"reduce-and", "reduce_logical_and", "reduce_logical_and: device: tensor bool[2]: out of memory", "reduce-and: device: tensor bool[2]: out of memory"},
		{"reduce-and", "reduce_logical_and", "reduce-and: reduce_logical_and: x", "reduce-and: x"},
		{"select", "", "device: no such device: index 9", "select: device: no such device: index 9"},
		{"info", "", "no such device: index -1", "info: no such device: index -1"},
		{"where", "", "where: cond must be bool,\ngot i8", "where: cond must be bool, got i8"},
		{"less", "", "less-equal: x", "less: less-equal: x"}, // another command's name is no prefix of this one's
		{"equal", "", "npy: open equal: no such file", "equal: npy: open equal: no such file"},
	} {
		if got := message(c.name, c.op, errors.New(c.err)); got != c.want {
			t.Errorf("message(%q, %q, %q) = %q, want %q", c.name, c.op, c.err, got, c.want)
		}
	}
	for name, cmd := range commands {
		if cmd.op == name {
			t.Errorf("command %s: op %q: leave op empty where ops names it alike", name, cmd.op)
		}
	}
}

// Each flag's line in a command's --help is "-name" and at most a
// one-word value name: the flag package takes a back-quoted text in the
// usage for the value's name, which must not be a command line.
func TestHelpValueNames(t *testing.T) {
	for _, name := range sortedCommands() {
		stdout, _, _ := vkops(t, nil, name, "--help")
		_, flags, _ := strings.Cut(stdout, "\nflags:\n")
		for line := range strings.Lines(flags) {
			if f := strings.Fields(line); strings.HasPrefix(line, "  -") && len(f) > 2 {
				t.Errorf("vkops %s --help: flag line %q: want -name and at most one value name", name, strings.TrimSpace(line))
			}
		}
	}
}
