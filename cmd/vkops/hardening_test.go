package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/tensor"
)

// The hardening table (issue #6): every class of bad input the command
// can be given, each input run in a child process. Each must exit with
// its status (2 for bad input unless the class says otherwise), print
// exactly one line on stderr beginning "vkops: " and no Go panic trace,
// and write nothing: the input and output directories are the same
// before and after, so no output file, temporary file or partial file is
// left behind and no input is touched. TestHardening logs the number of
// inputs tried in each class; TESTING.md quotes them.

// hardNpy assembles a .npy file from a raw header dict: the magic, the
// version, the header length, the dict padded with spaces and a newline
// so that the data starts on 64 bytes, as numpy writes it, then data.
func hardNpy(major byte, dict string, data []byte) []byte {
	lenSize := 2
	if major >= 2 {
		lenSize = 4
	}
	hdr := dict + " "
	for (6+2+lenSize+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	b := []byte("\x93NUMPY")
	b = append(b, major, 0)
	if lenSize == 2 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	}
	b = append(b, hdr...)
	return append(b, data...)
}

// hardDict formats a header dict from the text of its three values.
func hardDict(descr, fortran, shape string) string {
	return fmt.Sprintf("{'descr': %s, 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape)
}

// hardValid returns the bytes npy.Write gives for h.
func hardValid(t *testing.T, h *tensor.Host) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "v.npy")
	if err := npy.WriteFile(p, h); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hardBadFile is an .npy file that every reader must refuse.
type hardBadFile struct {
	name string
	data []byte
}

// hardBadFiles returns the bad .npy files of each kind, by class.
func hardBadFiles(t *testing.T) []struct {
	class string
	files []hardBadFile
} {
	valid := hardValid(t, selHost(t, []int{2, 3}, true, false, true, true, false, false))
	oneWrong := slices.Clone(valid)
	oneWrong[3] = 'X'
	big := func(descr, fortran, shape string, data ...byte) []byte {
		return hardNpy(1, hardDict(descr, fortran, shape), data)
	}
	f := func(name string, data []byte) hardBadFile { return hardBadFile{name, data} }
	return []struct {
		class string
		files []hardBadFile
	}{
		{"npy: wrong magic", []hardBadFile{
			f("empty file", nil),
			f("text", []byte("hello, world\n")),
			f("magic without \\x93", append([]byte("NUMPY"), valid[6:]...)),
			f("lower-case magic", append([]byte("\x93numpy"), valid[6:]...)),
			f("one byte of the magic wrong", oneWrong),
			f(".npz (zip) archive", append([]byte("PK\x03\x04\x14\x00\x00\x00\x00\x00"), valid...)),
			f("PNG image", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")),
			f("UTF-8 BOM then .npy", append([]byte("\xef\xbb\xbf"), valid...)),
			f("all zeros", make([]byte, 256)),
		}},
		{"npy: truncated header", []hardBadFile{
			f("magic only", []byte("\x93NUMPY")),
			f("no header length", []byte("\x93NUMPY\x01\x00")),
			f("half a header length", []byte("\x93NUMPY\x01\x00\x76")),
			f("v2 header length cut", []byte("\x93NUMPY\x02\x00\x76\x00")),
			f("header cut mid-dict", valid[:40]),
			f("header cut before newline", valid[:127]),
			f("header length past the file (v1)", append([]byte("\x93NUMPY\x01\x00\xff\xff"), "{'descr'"...)),
			f("4 GiB header length (v2)", append([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"), "{'descr'"...)),
			f("4 GiB header length (v3)", append([]byte("\x93NUMPY\x03\x00\xff\xff\xff\xff"), "{'descr'"...)),
		}},
		{"npy: truncated data", []hardBadFile{
			f("no data", valid[:128]),
			f("one byte short", valid[:len(valid)-1]),
			f("f4 data cut mid-element", big("'<f4'", "False", "(3,)", 1, 2, 3, 4, 5, 6)),
			f("0-D with no data", big("'<i8'", "False", "()")),
		}},
		{"npy: huge shape claimed", []hardBadFile{
			f("2^40 f8, 3 bytes", big("'<f8'", "False", "(1099511627776,)", 1, 2, 3)),
			f("2^20 x 2^20 Fortran u1", big("'|u1'", "True", "(1048576, 1048576)", 1, 2, 3)),
			f("2^48 bools, no data", big("'|b1'", "False", "(281474976710656,)")),
			f("2^62-1 u1, one byte", big("'|u1'", "False", "(4611686018427387903,)", 7)),
			f("rank 64 of 2s", big("'|b1'", "False", "("+strings.Repeat("2, ", 64)+")", 1)),
			f("2^61 i8, too large to address", big("'<i8'", "False", "(2305843009213693952,)")),
		}},
		{"npy: negative or overflowing shape", []hardBadFile{
			f("-1", big("'<f4'", "False", "(-1,)")),
			f("2, -3", big("'<f4'", "False", "(2, -3)")),
			f("unary minus with space", big("'<f4'", "False", "(- 1,)")),
			f("0, -1", big("'|b1'", "False", "(0, -1)")),
			f("20 digits", big("'<f4'", "False", "(99999999999999999999,)")),
			f("2^32 x 2^32 overflows", big("'<f4'", "False", "(4294967296, 4294967296)")),
			f("overflow beside a zero", big("'|b1'", "False", "(0, 4294967296, 4294967296)")),
			f("just past int64", big("'|u1'", "False", "(3037000500, 3037000500)")),
			f("bytes overflow (2^62 f8)", big("'<f8'", "False", "(4611686018427387904,)")),
			f("float dimension", big("'<f4'", "False", "(1.5,)")),
			f("hex dimension", big("'<f4'", "False", "(0x10,)")),
			f("string dimension", big("'<f4'", "False", "('1',)")),
			f("shape is a list", big("'<f4'", "False", "[1]")),
			f("shape is an int", big("'<f4'", "False", "1")),
			f("shape of bools", big("'<f4'", "False", "(True,)")),
		}},
		{"npy: unsupported dtype", []hardBadFile{
			f("object |O", big("'|O'", "False", "(1,)", 0, 0, 0, 0, 0, 0, 0, 0)),
			f("unicode <U5", big("'<U5'", "False", "(1,)")),
			f("big-endian unicode >U2", big("'>U2'", "False", "(1,)")),
			f("bytes |S3", big("'|S3'", "False", "(1,)", 'a', 'b', 'c')),
			f("bytes |a4", big("'|a4'", "False", "(1,)")),
			f("complex <c8", big("'<c8'", "False", "(1,)")),
			f("complex <c16", big("'<c16'", "False", "(1,)")),
			f("datetime <M8[ns]", big("'<M8[ns]'", "False", "(1,)")),
			f("timedelta <m8[s]", big("'<m8[s]'", "False", "(1,)")),
			f("void |V4", big("'|V4'", "False", "(1,)")),
			f("float128 <f16", big("'<f16'", "False", "(1,)")),
			f("int128 <i16", big("'<i16'", "False", "(1,)")),
			f("type name 'float32'", big("'float32'", "False", "(1,)")),
			f("empty descr", big("''", "False", "(1,)")),
			f("structured", big("[('a', '<i4'), ('b', '<f8')]", "False", "(1,)")),
			f("subarray", big("('<i4', (2,))", "False", "(1,)")),
			f("descr is an int", big("5", "False", "(1,)")),
			f("descr is a dict", big("{'names': ['a'], 'formats': ['<i4']}", "False", "(1,)")),
		}},
		{"npy: malformed header", []hardBadFile{
			f("version 4.0", append([]byte("\x93NUMPY\x04\x00"), valid[8:]...)),
			f("version 0.0", append([]byte("\x93NUMPY\x00\x00"), valid[8:]...)),
			f("version 1.1", append([]byte("\x93NUMPY\x01\x01"), valid[8:]...)),
			f("not a dict", hardNpy(1, "[1, 2]", nil)),
			f("empty header", hardNpy(1, "", nil)),
			f("missing shape", hardNpy(1, "{'descr': '|b1', 'fortran_order': False}", nil)),
			f("missing descr", hardNpy(1, "{'fortran_order': False, 'shape': (1,)}", nil)),
			f("extra key", hardNpy(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1,), 'x': 1}", []byte{1})),
			f("repeated key", hardNpy(1, "{'descr': '|b1', 'descr': '|b1', 'fortran_order': False, 'shape': (1,)}", []byte{1})),
			f("fortran_order 'yes'", big("'|b1'", "'yes'", "(1,)", 1)),
			f("fortran_order None", big("'|b1'", "None", "(1,)", 1)),
			f("unterminated string", hardNpy(1, "{'descr: '|b1'}", nil)),
			f("deep nesting", hardNpy(1, "{'descr': "+strings.Repeat("[", 200)+strings.Repeat("]", 200)+"}", nil)),
			f("text after the dict", hardNpy(1, hardDict("'|b1'", "False", "(1,)")+" x", []byte{1})),
			f("a name, not a literal", big("bool", "False", "(1,)", 1)),
			f("v3 header not UTF-8", hardNpy(3, hardDict("'|b1\xff'", "False", "(1,)"), []byte{1})),
			f("trailing bytes after the data", append(slices.Clone(valid), 0)),
			f("second array appended", append(slices.Clone(valid), valid...)),
		}},
	}
}

// hardCase is one invocation that must fail.
type hardCase struct {
	args []string // "OUT" stands for the output path of the case
	env  []string
	code int    // the exit status wanted; 0 means 2
	msg  string // the prefix of the one line on stderr; "" means "vkops: "
	out  string // the output path, when not the default
}

// hardClass is one row of the table.
type hardClass struct {
	name  string
	cases []hardCase
}

// hardSnapshot lists every file under the directories with its size and
// contents' first bytes, to tell whether anything was written.
func hardSnapshot(t *testing.T, dirs ...string) string {
	t.Helper()
	var sb strings.Builder
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := e.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(&sb, "%s %v %d %v\n", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return sb.String()
}

// hardOutcome is what became of one case.
type hardOutcome int

const (
	hardHeld hardOutcome = iota
	hardFailed
	// hardSkipped: the case failed only because no Vulkan device exists
	// here, outside CI (missingDevice); what it checks needs one.
	hardSkipped
)

// hardRun runs one case and checks the rules.
func hardRun(t *testing.T, c hardCase, out string, dirs []string) hardOutcome {
	t.Helper()
	if c.out != "" {
		out = c.out
	}
	args := slices.Clone(c.args)
	for i, a := range args {
		if a == "OUT" {
			args[i] = out
		}
	}
	code := c.code
	if code == 0 {
		code = 2
	}
	msg := c.msg
	if msg == "" {
		msg = "vkops: "
	}
	before := hardSnapshot(t, dirs...)
	stdout, stderr, got := vkops(t, c.env, args...)
	var fails []string
	fail := func(format string, a ...any) { fails = append(fails, fmt.Sprintf(format, a...)) }
	if got != code {
		fail("exit %d, want %d (stderr %q)", got, code, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") || !strings.HasPrefix(stderr, "vkops: ") {
		fail("stderr %q: want exactly one line beginning \"vkops: \"", stderr)
	} else if !strings.HasPrefix(stderr, msg) {
		fail("stderr %q: want it to begin %q", stderr, msg)
	}
	// A command the user typed is named as typed, once (issue 40): not
	// again by ops' own name for the op (reduce_logical_or).
	if name := hardCommand(args); name != "" && strings.HasPrefix(stderr, "vkops: ") {
		rest, named := strings.CutPrefix(stderr, "vkops: "+name+": ")
		op := commands[name].op
		switch {
		case !named:
			fail("stderr %q: want it to begin %q, the command as typed", stderr, "vkops: "+name+": ")
		case strings.HasPrefix(rest, name+": ") || op != "" && strings.Contains(rest, op):
			fail("stderr %q: names the command twice", stderr)
		}
	}
	if strings.Contains(stderr, ".tmp") {
		fail("stderr %q: names a temporary file", stderr)
	}
	for _, s := range []string{stdout, stderr} {
		if strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") || strings.Contains(s, "runtime error") {
			fail("printed a Go panic trace: %q", s)
		}
	}
	// Bad input prints nothing on stdout, a flag error included.
	if stdout != "" {
		fail("stdout %q: want nothing", stdout)
	}
	if after := hardSnapshot(t, dirs...); after != before {
		fail("changed the file system:\n%s", hardDiff(before, after))
	}
	if _, err := os.Lstat(out); err == nil && c.out == "" {
		fail("left %s behind", out)
		os.RemoveAll(out) // so that the next cases start clean
	}
	switch {
	case len(fails) == 0:
		return hardHeld
	case missingDevice(got, stderr) != nil:
		return hardSkipped
	}
	for _, f := range fails {
		t.Errorf("vkops %q: %s", args, f)
	}
	return hardFailed
}

// hardCommand returns the command that args run, as typed, or "" where
// they fail before naming one (a bad global flag, an unknown command).
func hardCommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--device" || a == "-device":
			i++ // its value
		case strings.HasPrefix(a, "--device=") || strings.HasPrefix(a, "-device="):
		case strings.HasPrefix(a, "-"):
			return ""
		default:
			if _, ok := commands[a]; ok {
				return a
			}
			return ""
		}
	}
	return ""
}

// hardRunAll runs cases in turn as hardRun does, and logs how many were
// skipped.
func hardRunAll(t *testing.T, cases []hardCase, out string, dirs []string) {
	t.Helper()
	skipped := 0
	for _, c := range cases {
		if hardRun(t, c, out, dirs) == hardSkipped {
			skipped++
		}
	}
	hardLogSkipped(t, skipped, len(cases))
}

// hardLogSkipped logs, when some of total cases were skipped, how many and
// why, in the usual skip line.
func hardLogSkipped(t *testing.T, skipped, total int) {
	t.Helper()
	if skipped > 0 {
		t.Logf("%d of %d cases need a Vulkan device: %s", skipped, total, devtest.SkipLine(devtest.Missing()))
	}
}

// hardDiff lists the lines of one snapshot missing from the other.
func hardDiff(before, after string) string {
	var sb strings.Builder
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	for _, l := range b {
		if l != "" && !slices.Contains(a, l) {
			fmt.Fprintf(&sb, "  - %s\n", l)
		}
	}
	for _, l := range a {
		if l != "" && !slices.Contains(b, l) {
			fmt.Fprintf(&sb, "  + %s\n", l)
		}
	}
	return sb.String()
}

func TestHardening(t *testing.T) {
	in, outDir := t.TempDir(), t.TempDir()
	file := func(name string, h *tensor.Host) string { return writeNpy(t, in, name, h) }
	raw := func(name string, b []byte) string {
		p := filepath.Join(in, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zeros := func(dt tensor.DType, shape ...int) *tensor.Host {
		h, err := tensor.New(dt, shape)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	// Good operands, to put the bad one among.
	c := file("c.npy", selHost(t, []int{2, 3}, true, false, true, true, false, false))
	a := file("a.npy", selHost(t, []int{2, 3}, int32(1), 2, 3, 4, 5, 6))
	b := file("b.npy", selHost(t, []int{2, 3}, int32(-1), -2, -3, -4, -5, -6))
	data := file("data.npy", selHost(t, []int{2, 3, 4}, make([]bool, 24)...))
	scalarBool := file("bool0d.npy", selHost(t, []int{}, true))
	typed := map[tensor.DType]string{}
	for _, dt := range []tensor.DType{tensor.Bool, tensor.I8, tensor.U8, tensor.I16, tensor.U16, tensor.I32, tensor.U32,
		tensor.I64, tensor.U64, tensor.F16, tensor.F32, tensor.F64} {
		typed[dt] = file(dt.String()+".npy", zeros(dt, 2, 3))
	}
	row2 := file("row2.npy", selHost(t, []int{2}, int32(1), 2))
	row3 := file("row3.npy", selHost(t, []int{3}, int32(1), 2, 3))
	c23x := file("c3x5.npy", zeros(tensor.Bool, 3, 5))
	a2345 := file("a2345.npy", zeros(tensor.F32, 2, 3, 4, 5))
	// Every dimension broadcast in then or else but not both: nothing
	// merges, so the kernels' eight dimensions do not suffice.
	altA, altB := tensor.Shape{}, tensor.Shape{}
	for range 9 {
		altA, altB = append(altA, 2, 1), append(altB, 1, 2)
	}
	alt1 := file("alt1.npy", zeros(tensor.U8, altA...))
	alt2 := file("alt2.npy", zeros(tensor.U8, altB...))
	wide1 := raw("wide1.npy", hardNpy(1, hardDict("'|u1'", "False", "(0, 1099511627776, 1)"), nil))
	wide2 := raw("wide2.npy", hardNpy(1, hardDict("'|u1'", "False", "(0, 1, 1099511627776)"), nil))
	emptyWide := raw("empty-wide.npy", hardNpy(1, hardDict("'|b1'", "False", "(0, 1125899906842624)"), nil))
	emptyBig := raw("empty-big.npy", hardNpy(1, hardDict("'|b1'", "False", "(0, 70368744177664)"), nil))
	aDir := filepath.Join(outDir, "a-directory")
	if err := os.Mkdir(aDir, 0o755); err != nil {
		t.Fatal(err)
	}

	var classes []hardClass
	add := func(name string, cases ...hardCase) {
		for i, cl := range classes {
			if cl.name == name {
				classes[i].cases = append(classes[i].cases, cases...)
				return
			}
		}
		classes = append(classes, hardClass{name, cases})
	}
	cmd := func(msg string, args ...string) hardCase { return hardCase{args: args, msg: msg} }

	// Each bad file in every place a file goes (with -short, in one place
	// of each command).
	place := func(p string) []hardCase {
		_, err := os.Stat(p)
		missing := errors.Is(err, fs.ErrNotExist)
		// num is a case with p where a number may stand, operand role:
		// there, a missing file is neither a number nor a file.
		num := func(role string, args ...string) hardCase {
			if missing {
				return cmd(fmt.Sprintf("vkops: %s: operand %s: %q is neither a number nor an existing file", args[0], role, p), args...)
			}
			return cmd("vkops: "+args[0]+": npy: ", args...)
		}
		all := []hardCase{
			cmd("vkops: select: npy: ", "select", p, a, b, "-o", "OUT"),
			cmd("vkops: select: npy: ", "select", c, p, b, "-o", "OUT"),
			cmd("vkops: select: npy: ", "select", c, a, p, "-o", "OUT"),
			cmd("vkops: where: npy: ", "where", p, "1", "0", "-o", "OUT"),
			num("input", "where", c, p, b, "-o", "OUT"),
			num("other", "where", c, "0", p, "-o", "OUT"),
			cmd("vkops: reduce-or: npy: ", "reduce-or", p, "--axes", "0", "-o", "OUT"),
			cmd("vkops: reduce-and: npy: ", "reduce-and", p, "--axes", "", "-o", "OUT"),
			num("a", "greater", p, b, "-o", "OUT"),
			num("b", "equal", a, p, "-o", "OUT"),
			num("b", "logical-or", c, p, "-o", "OUT"),
			cmd("vkops: is-nan: npy: ", "is-nan", p, "-o", "OUT"),
		}
		if testing.Short() {
			return []hardCase{all[1], all[4], all[6]}
		}
		return all
	}
	for _, cl := range hardBadFiles(t) {
		for i, bf := range cl.files {
			add(cl.class, place(raw(fmt.Sprintf("%s-%d.npy", strings.ReplaceAll(cl.class, " ", "_")[5:], i), bf.data))...)
		}
	}
	// Every prefix of a valid file: each cut is an error.
	for _, v := range []struct {
		h     *tensor.Host
		where func(p string) hardCase
	}{
		{selHost(t, []int{2, 3}, true, false, true, true, false, true), func(p string) hardCase {
			return cmd("vkops: reduce-or: npy: ", "reduce-or", p, "--axes", "1", "-o", "OUT")
		}},
		{selHost(t, []int{2, 3}, int32(1), 2, 3, 4, 5, 6), func(p string) hardCase {
			return cmd("vkops: select: npy: ", "select", c, a, p, "-o", "OUT")
		}},
	} {
		full := hardValid(t, v.h)
		step := 1
		if testing.Short() {
			step = 7
		}
		for n := 0; n < len(full); n += step {
			add("npy: every prefix of a valid file", v.where(raw(fmt.Sprintf("prefix-%v-%d.npy", v.h.DType, n), full[:n])))
		}
	}
	for _, p := range []string{filepath.Join(in, "missing.npy"), in, "/dev/null", "/dev/zero", ""} {
		add("npy: not a readable .npy file", place(p)...)
	}

	add("unknown flags and bad flag values",
		cmd("vkops: flag provided but not defined: -nosuch", "--nosuch", "info"),
		cmd("vkops: flag provided but not defined: -o", "-o", "OUT", "select", c, a, b),
		cmd("vkops: flag needs an argument: -device", "--device"),
		cmd("vkops: unknown command \"selct\"", "selct", c, a, b, "-o", "OUT"),
		cmd("vkops: unknown command \"SELECT\"", "SELECT", c, a, b, "-o", "OUT"),
		cmd("vkops: select: flag provided but not defined: -nosuch", "select", "--nosuch", c, a, b, "-o", "OUT"),
		cmd("vkops: select: flag provided but not defined: -x", "select", c, a, b, "-o", "OUT", "-x"),
		cmd("vkops: select: flag provided but not defined: -mode", "select", c, a, b, "-o", "OUT", "--mode", "none"),
		cmd("vkops: select: flag needs an argument: -o", "select", c, a, b, "-o"),
		cmd("vkops: select: unknown --broadcast \"bidirectional\"", "select", c, a, b, "-o", "OUT", "--broadcast", "bidirectional"),
		cmd("vkops: select: unknown --broadcast \"\"", "select", c, a, b, "-o", "OUT", "--broadcast", ""),
		cmd("vkops: select: unknown --broadcast \"NUMPY\"", "select", c, a, b, "-o", "OUT", "--broadcast=NUMPY"),
		cmd("vkops: where: flag provided but not defined: -nosuch", "where", c, a, b, "-o", "OUT", "--nosuch"),
		cmd("vkops: where: flag needs an argument: -dtype", "where", c, "1", "0", "-o", "OUT", "--dtype"),
		cmd("vkops: where: --dtype: unknown element type \"f8\"", "where", c, "1", "0", "-o", "OUT", "--dtype", "f8"),
		cmd("vkops: where: --dtype: unknown element type \"complex64\"", "where", c, "1", "0", "-o", "OUT", "--dtype", "complex64"),
		cmd("vkops: where: --dtype: unknown element type \"float128\"", "where", c, "1", "0", "-o", "OUT", "--dtype=float128"),
		cmd("vkops: reduce-or: flag provided but not defined: -axis", "reduce-or", data, "--axis", "0", "-o", "OUT"),
		cmd("vkops: reduce-or: flag needs an argument: -axes", "reduce-or", data, "-o", "OUT", "--axes"),
		cmd("vkops: reduce-and: invalid boolean value \"maybe\" for -keep-dims", "reduce-and", data, "--axes", "0", "--keep-dims=maybe", "-o", "OUT"),
		cmd("vkops: reduce-and: flag provided but not defined: -keepdims", "reduce-and", data, "--axes", "0", "--keepdims", "-o", "OUT"),
		cmd("vkops: tune: flag provided but not defined: -nosuch", "tune", "--nosuch"),
		cmd("vkops: tune: unexpected argument \"extra\"", "tune", "extra"),
		cmd("vkops: info: flag provided but not defined: -nosuch", "info", "--nosuch"),
		cmd("vkops: info: unexpected argument \"extra\"", "info", "extra"),
		// bench's own checks change with it: only their prefix is fixed here.
		cmd("vkops: bench: flag provided but not defined: -nosuch", "bench", "--nosuch"),
		cmd("vkops: bench: ", "bench", "--op", "nosuch", "--size", "4096", "--runs", "1"),
		cmd("vkops: bench: ", "bench", "--size", "0"),
		cmd("vkops: bench: ", "bench", "--size", "-4096"),
		cmd("vkops: bench: ", "bench", "--runs", "-1"),
		cmd("vkops: bench: ", "bench", "--runs", "0"),
		cmd("vkops: bench: invalid value \"abc\" for flag -size", "bench", "--size", "abc"),
		cmd("vkops: bench: unexpected argument \"extra\"", "bench", "extra"),
		cmd("vkops: select: device: no such device: no device name contains \"nosuch\"", "--device", "nosuch", "select", c, a, b, "-o", "OUT"),
		cmd("vkops: reduce-or: device: no such device: index 99", "--device", "99", "reduce-or", data, "--axes", "0", "-o", "OUT"),
		cmd("vkops: info: no such device: index -1", "--device", "-1", "info"),
		hardCase{env: []string{"VKOPS_DEVICE=nosuch"}, args: []string{"where", c, a, b, "-o", "OUT"}, msg: "vkops: where: device: no such device"},
	)

	add("missing operands",
		cmd("vkops: select: want COND THEN ELSE files, got 0 arguments", "select", "-o", "OUT"),
		cmd("vkops: select: want COND THEN ELSE files, got 1 arguments", "select", c, "-o", "OUT"),
		cmd("vkops: select: want COND THEN ELSE files, got 2 arguments", "select", c, a, "-o", "OUT"),
		cmd("vkops: select: want COND THEN ELSE files, got 4 arguments", "select", c, a, b, b, "-o", "OUT"),
		cmd("vkops: select: -o OUT is required", "select", c, a, b),
		cmd("vkops: select: -o OUT is required", "select", c, a, b, "-o", ""),
		cmd("vkops: where: want COND INPUT OTHER", "where", "-o", "OUT"),
		cmd("vkops: where: want COND INPUT OTHER", "where", c, "-o", "OUT"),
		cmd("vkops: where: want COND INPUT OTHER", "where", c, "1", "-o", "OUT"),
		cmd("vkops: where: want COND INPUT OTHER", "where", c, "1", "0", "2", "-o", "OUT"),
		cmd("vkops: where: -o OUT is required", "where", c, "1", "0"),
		cmd("vkops: reduce-or: want one DATA file, got 0 arguments", "reduce-or", "--axes", "0", "-o", "OUT"),
		cmd("vkops: reduce-or: want one DATA file, got 2 arguments", "reduce-or", data, data, "--axes", "0", "-o", "OUT"),
		cmd("vkops: reduce-and: want one DATA file, got 0 arguments", "reduce-and", "--axes", "0", "-o", "OUT"),
		cmd("vkops: reduce-or: --axes is required", "reduce-or", data, "-o", "OUT"),
		cmd("vkops: reduce-and: -o OUT is required", "reduce-and", data, "--axes", "0"),
		cmd("vkops: reduce-and: -o OUT is required", "reduce-and", data, "--axes", "0", "-o="),
	)

	long := filepath.Join(outDir, strings.Repeat("x", 300)+".npy")
	missingDir := filepath.Join(outDir, "missing-dir", "out.npy")
	for _, o := range []struct{ path, msg string }{
		{missingDir, "-o " + missingDir + ": directory " + filepath.Dir(missingDir) + " does not exist"},
		{filepath.Join(outDir, "a", "b", "out.npy"), "-o " + filepath.Join(outDir, "a", "b", "out.npy") + ": directory " + filepath.Join(outDir, "a", "b") + " does not exist"},
		{filepath.Join(c, "out.npy"), "-o " + filepath.Join(c, "out.npy") + ": " + c + " is not a directory"},
		{filepath.Join(c, "sub", "out.npy"), "-o " + filepath.Join(c, "sub", "out.npy") + ": " + c + " is not a directory"},
		{aDir, "npy: " + aDir + " is not a regular file"},
		{"/dev/null", "npy: /dev/null is not a regular file"},
		{long, "npy: write " + long + ": file name too long"},
	} {
		for _, args := range [][]string{
			{"select", c, a, b, "-o", "OUT"},
			{"where", c, a, "0", "-o", "OUT"},
			{"reduce-or", data, "--axes", "0", "-o", "OUT"},
			{"reduce-and", data, "--axes", "1,2", "--keep-dims", "-o", "OUT"},
			{"less", a, "0", "-o", "OUT"},
			{"is-finite", typed[tensor.F32], "-o", "OUT"},
		} {
			add("unwritable output path", hardCase{args: args, out: o.path, msg: "vkops: " + args[0] + ": " + o.msg})
		}
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(outDir, "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		add("unwritable output path", hardCase{args: []string{"select", c, a, b, "-o", "OUT"}, out: filepath.Join(ro, "out.npy"),
			msg: "vkops: select: npy: write " + filepath.Join(ro, "out.npy") + ": permission denied"})
	}

	for _, p := range []struct{ x, y tensor.DType }{{tensor.I32, tensor.F32}, {tensor.U8, tensor.I8}, {tensor.F32, tensor.F64},
		{tensor.I64, tensor.U64}, {tensor.Bool, tensor.U8}, {tensor.F16, tensor.I16}, {tensor.U16, tensor.I16}, {tensor.U32, tensor.I32}} {
		add("mismatched element types",
			cmd(fmt.Sprintf("vkops: select: then is %v but else is %v", p.x, p.y), "select", c, typed[p.x], typed[p.y], "-o", "OUT"),
			cmd(fmt.Sprintf("vkops: where: input is %v but other is %v", p.y, p.x), "where", c, typed[p.y], typed[p.x], "-o", "OUT"))
	}
	add("mismatched element types",
		cmd("vkops: where: --dtype i8, but "+typed[tensor.U8]+" is u8", "where", c, typed[tensor.U8], "1", "-o", "OUT", "--dtype", "i8"),
		cmd("vkops: where: --dtype f32, but "+typed[tensor.F64]+" is f64", "where", c, "1", typed[tensor.F64], "-o", "OUT", "--dtype", "f32"),
		cmd("vkops: where: --dtype bf16 takes float32 files, "+typed[tensor.F64]+" is f64", "where", c, typed[tensor.F64], "0", "-o", "OUT", "--dtype", "bf16"),
		cmd("vkops: where: --dtype bf16 takes float32 files, "+typed[tensor.F16]+" is f16", "where", c, "0", typed[tensor.F16], "-o", "OUT", "--dtype", "bf16"),
	)

	add("mismatched shapes",
		cmd("vkops: select: then shape [2 3] and else shape [2] do not broadcast (axis -1: 3 vs 2)", "select", c, a, row2, "-o", "OUT"),
		cmd("vkops: select: cond shape [3 5] cannot be broadcast one way to [2 3 4 5] (axis -2: 3 vs 4)", "select", c23x, a2345, a2345, "-o", "OUT"),
		cmd("vkops: select: cond shape [2 3] cannot be broadcast one way to [3] (rank 2 > 1)", "select", c, row3, row3, "-o", "OUT"),
		cmd("vkops: select: broadcast none needs equal shapes: cond [2 3] then [2 3] else [3]", "select", c, a, row3, "-o", "OUT", "--broadcast", "none"),
		cmd("vkops: select: else shape [2 3] cannot be broadcast one way to [3] (rank 2 > 1)", "select", c, row3, a, "-o", "OUT", "--broadcast", "pdpd"),
		cmd("vkops: select: cond shape [2 3] cannot be broadcast one way to [2] (rank 2 > 1)", "select", c, row2, row2, "-o", "OUT", "--broadcast", "pdpd"),
		cmd("vkops: where: cond shape [2 3] and input shape [2] do not broadcast (axis -1: 3 vs 2)", "where", c, row2, "0", "-o", "OUT"),
		cmd("vkops: where: cond shape [2 3], input shape [3] and other shape [2] do not broadcast (axis -1: 3 vs 2)", "where", c, row3, row2, "-o", "OUT"),
		cmd("vkops: select: the broadcast needs 18 dimensions after merging adjacent ones, more than the 8 the kernels support",
			"select", scalarBool, alt1, alt2, "-o", "OUT"),
		cmd("vkops: where: the broadcast needs 18 dimensions", "where", scalarBool, alt1, alt2, "-o", "OUT"),
		cmd("vkops: select: output: shape [0 1099511627776 1099511627776]: element count overflows", "select", scalarBool, wide1, wide2, "-o", "OUT"),
		cmd("vkops: reduce-or: output: shape [1 1125899906842624] of bool: 1125899906842624 elements are too many to address",
			"reduce-or", emptyWide, "--axes", "0", "--keep-dims", "-o", "OUT"),
	)

	for _, x := range []struct{ axes, msg string }{
		{"3", "vkops: reduce-%s: axis 3 is out of range for rank 3 (want -3..2)"},
		{"-4", "vkops: reduce-%s: axis -4 is out of range for rank 3 (want -3..2)"},
		{"0,0", "vkops: reduce-%s: axis 0 repeats axis 0 (after normalising)"},
		{"1,-2", "vkops: reduce-%s: axis -2 repeats axis 1 (after normalising)"},
		{"2,1,0,-1", "vkops: reduce-%s: axis -1 repeats axis 2 (after normalising)"},
		{"2147483648", "vkops: reduce-%s: axis 2147483648 is out of range for rank 3"},
		{"-9223372036854775808", "vkops: reduce-%s: axis -9223372036854775808 is out of range for rank 3"},
		{"x", "vkops: reduce-%s: --axes \"x\": want integers separated by commas"},
		{"1,,2", "vkops: reduce-%s: --axes \"1,,2\": want integers"},
		{",", "vkops: reduce-%s: --axes \",\": want integers"},
		{"1.0", "vkops: reduce-%s: --axes \"1.0\": want integers"},
		{"0x1", "vkops: reduce-%s: --axes \"0x1\": want integers"},
		{"1 2", "vkops: reduce-%s: --axes \"1 2\": want integers"},
		{"99999999999999999999", "vkops: reduce-%s: --axes \"99999999999999999999\": want integers"},
	} {
		for _, op := range []string{"or", "and"} {
			add("bad axes", cmd(fmt.Sprintf(x.msg, op), "reduce-"+op, data, "--axes", x.axes, "-o", "OUT"))
		}
	}
	for _, op := range []string{"or", "and"} {
		add("bad axes",
			cmd("vkops: reduce-"+op+": axis 0 is out of range for rank 0 (a 0-D tensor has no axes)", "reduce-"+op, scalarBool, "--axes", "0", "-o", "OUT"),
			cmd("vkops: reduce-"+op+": axis -1 is out of range for rank 0", "reduce-"+op, scalarBool, "--axes", "-1", "--keep-dims", "-o", "OUT"))
	}

	for _, x := range []struct {
		dt   tensor.DType
		vals []string
	}{
		{tensor.U8, []string{"-1", "256", "1.5", "nan", "inf", "-0.5", "1e3"}},
		{tensor.I8, []string{"128", "-129", "0.25"}},
		{tensor.I16, []string{"nan", "32768", "-inf"}},
		{tensor.U16, []string{"65536", "-1"}},
		{tensor.I32, []string{"2147483648", "0.1", "-2147483649"}},
		{tensor.U32, []string{"4294967296", "-1"}},
		{tensor.I64, []string{"9223372036854775808", "1e19", "nan"}},
		{tensor.U64, []string{"-1", "18446744073709551616", "1e20"}},
		{tensor.Bool, []string{"2", "-1", "0.5"}},
		{tensor.F16, []string{"65520", "1e6", "-70000"}},
	} {
		for _, v := range x.vals {
			add("scalar not representable",
				cmd(fmt.Sprintf("vkops: where: other scalar %s cannot be represented as %v", v, x.dt), "where", c, typed[x.dt], v, "-o", "OUT"))
		}
	}
	for _, x := range []struct{ dt, v string }{{"f32", "1e39"}, {"f32", "-3.5e38"}, {"bf16", "1e39"}, {"f16", "65536"}, {"i8", "300"}, {"u8", "-1"}, {"bool", "2"}} {
		add("scalar not representable",
			cmd(fmt.Sprintf("vkops: where: input scalar %s cannot be represented as %s", x.v, x.dt), "where", c, x.v, "0", "--dtype", x.dt, "-o", "OUT"))
	}

	// Numbers no element type holds, in every place a number goes and
	// beside every type, negative ones included (the flag package would
	// take them for flags); fractions that float64 rounds to integers.
	for _, dt := range []tensor.DType{tensor.Bool, tensor.I8, tensor.U8, tensor.I16, tensor.U16, tensor.I32, tensor.U32,
		tensor.I64, tensor.U64, tensor.F16, tensor.F32, tensor.F64} {
		for _, v := range []string{"1e400", "-1e400", "0x1p1024", "-0x1.8p99999", "1" + strings.Repeat("0", 400)} {
			add("scalar beyond float64, or inexact integer",
				cmd(fmt.Sprintf("vkops: where: other scalar %s cannot be represented as %v", v, dt), "where", c, typed[dt], v, "-o", "OUT"),
				cmd(fmt.Sprintf("vkops: where: input scalar %s cannot be represented as %v", v, dt), "where", c, v, "0", "--dtype", dt.String(), "-o", "OUT"),
				cmd(fmt.Sprintf("vkops: equal: a scalar %s cannot be represented as %v", v, dt), "equal", v, typed[dt], "-o", "OUT"))
		}
		if dt.IsFloat() {
			continue
		}
		for _, v := range []string{"1e-400", "-1e-400", "1.0000000000000000001", "-2.00000000000000000001e0", "0x1.00000000000008p0"} {
			add("scalar beyond float64, or inexact integer",
				cmd(fmt.Sprintf("vkops: where: other scalar %s cannot be represented as %v", v, dt), "where", c, typed[dt], v, "-o", "OUT"),
				cmd(fmt.Sprintf("vkops: less: b scalar %s cannot be represented as %v", v, dt), "less", typed[dt], v, "-o", "OUT"))
		}
	}
	for _, v := range []string{"abc", "1e400x", "0x", "1e", "nan1", "-", "+-1", "1,5", " 1", "infinity!"} {
		add("operand neither a number nor a file",
			cmd(fmt.Sprintf("vkops: where: operand other: %q is neither a number nor an existing file", v), "where", c, a, v, "-o", "OUT"),
			cmd(fmt.Sprintf("vkops: where: operand input: %q is neither a number nor an existing file", v), "where", c, v, a, "-o", "OUT"),
			cmd(fmt.Sprintf("vkops: greater: operand a: %q is neither a number nor an existing file", v), "greater", v, a, "-o", "OUT"))
	}
	// Every place a number may stand: both operands of every binary mask
	// command, beside a file and beside a number.
	for _, name := range sortedCommands() {
		m, ok := maskCommands[name]
		if !ok || m.binary == nil {
			continue
		}
		add("operand neither a number nor a file",
			cmd("vkops: "+name+`: operand a: "abc" is neither a number nor an existing file`, name, "abc", a, "-o", "OUT"),
			cmd("vkops: "+name+`: operand b: "abc" is neither a number nor an existing file`, name, c, "abc", "-o", "OUT"),
			cmd("vkops: "+name+`: operand a: "x.npy" is neither a number nor an existing file`, name, "x.npy", "1", "-o", "OUT"),
			cmd("vkops: "+name+`: operand b: "1x" is neither a number nor an existing file`, name, "0", "1x", "-o", "OUT"))
	}
	add("operand neither a number nor a file",
		cmd(`vkops: where: operand input: "abc" is neither a number nor an existing file`, "where", c, "abc", "0", "-o", "OUT"),
		cmd(`vkops: where: operand other: "abc" is neither a number nor an existing file`, "where", c, "1", "abc", "-o", "OUT"))
	for _, v := range []string{"1", "-1", "-1e400", "-inf", "-nan", "0x10"} {
		add("number where only a file goes",
			cmd("vkops: select: COND must be a .npy file, got the number "+v, "select", v, a, b, "-o", "OUT"),
			cmd("vkops: select: THEN must be a .npy file, got the number "+v, "select", c, v, b, "-o", "OUT"),
			cmd("vkops: where: COND must be a .npy file, got the number "+v, "where", v, a, b, "-o", "OUT"),
			cmd("vkops: reduce-and: DATA must be a .npy file, got the number "+v, "reduce-and", v, "--axes", "0", "-o", "OUT"))
	}
	add("number where only a file goes",
		cmd("vkops: is-finite: A must be a .npy file, got the number -1e400", "is-finite", "-1e400", "-o", "OUT"),
		cmd("vkops: is-finite: A must be a .npy file, got the number -nan", "is-finite", "-nan", "-o", "OUT"))

	for _, dt := range []tensor.DType{tensor.U8, tensor.I8, tensor.I32, tensor.F16, tensor.F32, tensor.F64, tensor.I64} {
		add("cond or data not bool",
			cmd(fmt.Sprintf("vkops: select: cond must be bool, got %v", dt), "select", typed[dt], a, b, "-o", "OUT"),
			cmd(fmt.Sprintf("vkops: where: cond must be bool, got %v", dt), "where", typed[dt], "1", "0", "-o", "OUT"),
			cmd(fmt.Sprintf("vkops: reduce-or: %s: data must be bool, got %v", typed[dt], dt), "reduce-or", typed[dt], "--axes", "0", "-o", "OUT"),
			cmd(fmt.Sprintf("vkops: reduce-and: %s: data must be bool, got %v", typed[dt], dt), "reduce-and", typed[dt], "--axes", "", "-o", "OUT"))
	}

	// Not bad input but the device's failures: exit 1, still one line
	// and nothing written.
	add("device out of memory (exit 1)",
		hardCase{args: []string{"reduce-and", emptyBig, "--axes", "0", "-o", "OUT"}, code: 1, msg: "vkops: reduce-and: device: tensor bool[70368744177664]"},
		hardCase{args: []string{"reduce-or", emptyBig, "--axes", "0", "--keep-dims", "-o", "OUT"}, code: 1, msg: "vkops: reduce-or: device: tensor bool[1 70368744177664]"},
	)
	for _, args := range [][]string{
		{"select", c, a, b, "-o", "OUT"},
		{"where", c, a, "0", "-o", "OUT"},
		{"reduce-or", data, "--axes", "0", "-o", "OUT"},
		{"reduce-and", data, "--axes", "0", "-o", "OUT"},
		{"info"},
		{"tune"},
		{"bench", "--size", "4096", "--runs", "1"},
	} {
		add("no Vulkan driver (exit 1)", hardCase{args: args, env: noDevice, code: 1})
	}

	// An existing output is left as it was when the command fails.
	keep := filepath.Join(outDir, "keep.npy")
	if err := os.WriteFile(keep, []byte("previous contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"select", c, a, row2, "-o", "OUT"},
		{"where", c, typed[tensor.U8], "-1", "-o", "OUT"},
		{"reduce-or", data, "--axes", "7", "-o", "OUT"},
		{"reduce-and", raw("keep-bad.npy", []byte("junk")), "--axes", "0", "-o", "OUT"},
	} {
		add("existing output kept on failure", hardCase{args: args, out: keep})
	}

	total, failed, skipped := 0, 0, 0
	var summary strings.Builder
	for _, cl := range classes {
		var n [hardSkipped + 1]int
		for _, hc := range cl.cases {
			n[hardRun(t, hc, filepath.Join(outDir, "out.npy"), []string{in, outDir})]++
		}
		fmt.Fprintf(&summary, "  %-40s %4d inputs, %d failed%s\n", cl.name, len(cl.cases), n[hardFailed], hardShowSkipped(n[hardSkipped]))
		total += len(cl.cases)
		failed += n[hardFailed]
		skipped += n[hardSkipped]
	}
	t.Logf("hardening table:\n%s  %-40s %4d inputs, %d failed%s", summary.String(), "total", total, failed, hardShowSkipped(skipped))
	hardLogSkipped(t, skipped, total)
	if b, err := os.ReadFile(keep); err != nil || string(b) != "previous contents" {
		t.Errorf("the existing output changed: %q, %v", b, err)
	}
}

// hardShowSkipped is the summary's note of n skipped cases: none where
// every case ran.
func hardShowSkipped(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d skipped (no device)", n)
}

// TestHardeningAcceptedForms checks the .npy forms that look unusual but
// are valid, and that npy converts on read: Fortran order, big-endian
// data, native and not-applicable byte orders, format versions 2.0 and
// 3.0, and Python 2's long suffix. Each must give the result that its
// row-major, little-endian values give, exit 0 and print nothing.
func TestHardeningAcceptedForms(t *testing.T) {
	dir := t.TempDir()
	raw := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// then = [[1 2 3] [4 5 6]] as i32 in several encodings.
	le := func(vs ...int32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	beb := func(vs ...int32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	forms := []struct{ name, path string }{
		{"Fortran order", raw("fortran.npy", hardNpy(1, hardDict("'<i4'", "True", "(2, 3)"), le(1, 4, 2, 5, 3, 6)))},
		{"big-endian", raw("be.npy", hardNpy(1, hardDict("'>i4'", "False", "(2, 3)"), beb(1, 2, 3, 4, 5, 6)))},
		{"big-endian Fortran", raw("be-fortran.npy", hardNpy(1, hardDict("'>i4'", "True", "(2, 3)"), beb(1, 4, 2, 5, 3, 6)))},
		{"native order '='", raw("native.npy", hardNpy(1, hardDict("'=i4'", "False", "(2, 3)"), le(1, 2, 3, 4, 5, 6)))},
		{"version 2.0", raw("v2.npy", hardNpy(2, hardDict("'<i4'", "False", "(2, 3)"), le(1, 2, 3, 4, 5, 6)))},
		{"version 3.0", raw("v3.npy", hardNpy(3, hardDict("'<i4'", "False", "(2, 3)"), le(1, 2, 3, 4, 5, 6)))},
		{"long suffix", raw("long.npy", hardNpy(1, hardDict("'<i4'", "False", "(2L, 3L)"), le(1, 2, 3, 4, 5, 6)))},
	}
	cond := selHost(t, []int{2, 3}, true, false, true, false, true, false)
	els := selHost(t, []int{2, 3}, int32(-1), -2, -3, -4, -5, -6)
	c := writeNpy(t, dir, "c.npy", cond)
	e := writeNpy(t, dir, "e.npy", els)
	// The same bools, Fortran order and '?' type code.
	cf := raw("cond-fortran.npy", hardNpy(1, hardDict("'?'", "True", "(2, 3)"), []byte{1, 0, 0, 1, 1, 0}))
	then := selHost(t, []int{2, 3}, int32(1), 2, 3, 4, 5, 6)
	want, err := cpuref.Select(cond, then, els, "numpy")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.npy")
	for _, f := range forms {
		for _, cp := range []string{c, cf} {
			selSame(t, f.name, selRun(t, out, "select", cp, f.path, e, "-o", out), want)
		}
	}
	// Reductions of a Fortran-order bool file.
	data := selHost(t, []int{2, 3}, true, false, true, false, false, false)
	df := raw("data-fortran.npy", hardNpy(1, hardDict("'|b1'", "True", "(2, 3)"), []byte{1, 0, 0, 0, 1, 0}))
	for _, axes := range []struct {
		arg  string
		axes []int
	}{{"0", []int{0}}, {"1", []int{1}}, {"", nil}} {
		w, err := cpuref.ReduceLogicalOr(data, axes.axes, false)
		if err != nil {
			t.Fatal(err)
		}
		selSame(t, "reduce-or fortran "+axes.arg, selRun(t, out, "reduce-or", df, "--axes", axes.arg, "-o", out), w)
	}
	t.Logf("%d accepted forms checked against cpuref", 2*len(forms)+3)
}

// TestHardeningHelp checks that every command's --help (and -h) prints
// its usage line, an example and its flags on stdout, exits 0 and
// prints nothing on stderr.
func TestHardeningHelp(t *testing.T) {
	for _, name := range sortedCommands() {
		var help string
		for _, flag := range []string{"--help", "-h"} {
			stdout, stderr, code := vkops(t, nil, name, flag)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: vkops "+name) ||
				!strings.Contains(stdout, "\nexample:\n  vkops ") || !strings.Contains(stdout, "\nflags:\n") {
				t.Errorf("vkops %s %s: exit %d, stderr %q, stdout %q; want usage, example and flags", name, flag, code, stderr, stdout)
			}
			help = stdout
		}
		// vkops help NAME is vkops NAME --help.
		if stdout, stderr, code := vkops(t, nil, "help", name); code != 0 || stderr != "" || stdout != help {
			t.Errorf("vkops help %s: exit %d, stderr %q, stdout %q; want what vkops %[1]s --help prints", name, code, stderr, stdout)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		stdout, stderr, code := vkops(t, nil, args...)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: vkops ") {
			t.Errorf("vkops %s: exit %d, stderr %q, stdout %q", args[0], code, stderr, stdout)
		}
		for _, name := range sortedCommands() {
			if !strings.Contains(stdout, "\n  "+name+" ") {
				t.Errorf("vkops %s does not list %s", args[0], name)
			}
		}
	}
}
