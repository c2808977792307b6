// Command vkops runs tensor operations as Vulkan compute shaders: device
// information, ops on .npy files, and benchmarks.
//
//	vkops [--device D] info [--json]
//	vkops [--device D] select COND THEN ELSE -o OUT [--broadcast numpy|none|pdpd] [--dtype bf16]
//	vkops [--device D] where COND INPUT OTHER -o OUT [--dtype T]
//	vkops [--device D] equal|not-equal|less|less-equal|greater|greater-equal A B -o OUT [--broadcast numpy|none|pdpd] [--dtype bf16]
//	vkops [--device D] logical-and|logical-or|logical-xor A B -o OUT [--broadcast numpy|none|pdpd]
//	vkops [--device D] logical-not A -o OUT
//	vkops [--device D] is-nan|is-finite A -o OUT [--dtype bf16]
//	vkops [--device D] is-inf A -o OUT [--dtype bf16] [--detect-negative=false] [--detect-positive=false]
//	vkops [--device D] maximum|minimum A B -o OUT [--broadcast numpy|none|pdpd] [--dtype bf16]
//	vkops [--device D] clamp A --min LO --max HI -o OUT [--dtype bf16]
//	vkops [--device D] reduce-or DATA --axes 2,3 [--keep-dims] -o OUT
//	vkops [--device D] reduce-and DATA --axes 2,3 [--keep-dims] -o OUT
//	vkops [--device D] reduce-xor DATA --axes 2,3 [--keep-dims] -o OUT
//	vkops [--device D] bench [flags]
//	vkops [--device D] tune [--json]
//	vkops help [COMMAND]
//
// Where an operand may be a number (INPUT and OTHER of where, A and B of
// the compare ops), an argument that reads as a number is one, negative
// ones included ("-1" is no flag), even where a file of that name exists
// (./1 names the file); anything else is a .npy path. A number must fit
// the element type it meets exactly: 1e400 fits none. Where only a file
// is taken, the argument is always a path.
//
// Errors are one line on stderr beginning "vkops:" and the command as
// typed ("vkops: reduce-or: axis 5 is out of range ..."); the exit status
// is 2 for bad input (files, shapes, types, numbers, flags, an output
// whose directory does not exist) and 1 for a device failure.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vkops/vkops/device"
)

// command is one subcommand: its run function gets the arguments after
// its name. op is the name package ops gives the op in its errors where
// that is not the command's (reduce_logical_or for reduce-or): run's
// message names the command instead.
type command struct {
	run     func(env *env, args []string) error
	summary string
	op      string
}

var commands = map[string]command{
	"info":       {runInfo, "list Vulkan devices and the one vkops would choose", ""},
	"bench":      {runBench, "measure ops and transfers on the device", ""},
	"reduce-or":  {runReduceOr, "logical or of a bool .npy over axes", "reduce_logical_or"},
	"reduce-and": {runReduceAnd, "logical and of a bool .npy over axes", "reduce_logical_and"},
	"reduce-xor": {runReduceXor, "logical xor (parity) of a bool .npy over axes", "reduce_logical_xor"},
	"tune":       {runTune, "measure every kernel variant and keep the fastest for this device", ""},
	"select":     {runSelect, "pick THEN or ELSE elements by a bool COND (OpenVINO Select-1)", ""},
	"where":      {runWhere, "pick INPUT or OTHER elements by COND; INPUT/OTHER may be numbers (PyPTO where)", ""},
	"clamp":      {runClamp, "limit the elements of A to [--min, --max], NaN kept (OpenVINO Clamp-1)", ""},
}

// env is what every subcommand shares.
type env struct {
	device string // --device, or $VKOPS_DEVICE
	stdout io.Writer
	stderr io.Writer
}

// open opens the chosen device; a --device that names none is bad input.
func (e *env) open() (*device.Device, error) {
	d, err := device.Open(device.Options{Device: e.device})
	if errors.Is(err, device.ErrNoSuchDevice) {
		return nil, &inputError{err}
	}
	return d, err
}

// inputError is bad input: exit status 2.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput wraps err (or formats one) as bad input.
func badInput(format string, args ...any) error {
	return &inputError{fmt.Errorf(format, args...)}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: vkops [--device INDEX|NAME] COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	for _, name := range sortedCommands() {
		fmt.Fprintf(w, "  %-13s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nexample:\n  vkops --device 0 select cond.npy then.npy else.npy -o out.npy")
	fmt.Fprintln(w, "\nRun 'vkops help COMMAND' (or 'vkops COMMAND --help') for a command's flags. $VKOPS_DEVICE chooses a device too.")
}

// helpCommand resolves "vkops help [COMMAND]" to COMMAND and the
// arguments "--help", which print what "vkops COMMAND --help" prints;
// where there is no command to run it prints the general help, or an
// error, and returns "" and the exit code.
func helpCommand(stdout, stderr io.Writer, args []string) (string, []string, int) {
	switch {
	case len(args) > 1:
		fmt.Fprintf(stderr, "vkops: help: want one command, got %d arguments\n", len(args))
		return "", nil, 2
	case len(args) == 0 || slices.Contains([]string{"help", "-h", "--help"}, args[0]):
		usage(stdout)
		return "", nil, 0
	}
	if _, ok := commands[args[0]]; !ok {
		fmt.Fprintf(stderr, "vkops: help: unknown command %q (want one of %s)\n", args[0], strings.Join(sortedCommands(), ", "))
		return "", nil, 2
	}
	return args[0], []string{"--help"}, 0
}

func sortedCommands() []string {
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			if names[j] < names[i] {
				names[i], names[j] = names[j], names[i]
			}
		}
	}
	return names
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vkops", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e := &env{stdout: stdout, stderr: stderr}
	fs.StringVar(&e.device, "device", "", "device index or name substring (default: $VKOPS_DEVICE, else the best)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		fmt.Fprintf(stderr, "vkops: %v\n", err)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "vkops: missing command (run 'vkops help' for the list)")
		return 2
	}
	name, args := fs.Arg(0), fs.Args()[1:]
	if name == "help" {
		var code int
		if name, args, code = helpCommand(stdout, stderr, args); name == "" {
			return code
		}
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "vkops: unknown command %q (want one of %s)\n", name, strings.Join(sortedCommands(), ", "))
		return 2
	}
	err := cmd.run(e, args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "vkops: %s\n", message(name, cmd.op, err))
	var ie *inputError
	if errors.As(err, &ie) {
		return 2
	}
	return 1
}

// message is err as the one line run prints for command name: the name
// as the user typed it, once, then what went wrong. The errors of the
// commands, of ops and of device may each begin with a name of their own
// (ops' op, "reduce_logical_or: ..."), or with the command's already:
// those prefixes go, so that "reduce-or: axis 5 is out of range" and
// "reduce-or: --axes is required" read alike.
func message(name, op string, err error) string {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	for {
		rest, cut := strings.CutPrefix(msg, name+": ")
		if !cut && op != "" {
			rest, cut = strings.CutPrefix(msg, op+": ")
		}
		if !cut {
			return name + ": " + msg
		}
		msg = rest
	}
}

// checkOutputDir refuses, before any work is done, an output path (the
// value of the flag flagName) whose directory does not exist or is not
// one, saying which; npy.WriteFile would say so only at the end.
func checkOutputDir(name, flagName, path string) error {
	dir := filepath.Dir(path)
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return badInput("%s: %s %s: %s is not a directory", name, flagName, path, p)
		case errors.Is(err, fs.ErrNotExist) && p == dir:
			return badInput("%s: %s %s: directory %s does not exist", name, flagName, path, dir)
		}
		if err == nil || p == filepath.Dir(p) {
			return nil
		}
	}
}

// newFlags makes a subcommand's flag set whose errors are bad input and
// whose --help prints the usage line, each of notes as a paragraph, the
// example and the flags.
func newFlags(e *env, name, usageLine, example string, notes ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "usage: vkops %s\n", usageLine)
		for _, n := range notes {
			fmt.Fprintf(e.stdout, "\n%s\n", n)
		}
		fmt.Fprintf(e.stdout, "\nexample:\n  %s\n\nflags:\n", example)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments, as
// users write them ("vkops select a b c -o out"). It prints the usage for
// --help alone: a flag error is one line on stderr, and stdout stays
// empty.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	show := fs.Usage
	fs.Usage = func() {} // fs.Parse calls it on errors as well as for --help
	defer func() { fs.Usage = show }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				show()
				return nil, err
			}
			return nil, badInput("%s: %v (vkops %s --help lists the flags)", fs.Name(), err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
