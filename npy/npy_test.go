package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/vkops/vkops/tensor"
)

// npyDTypes are the element types .npy can hold: all but bfloat16.
var npyDTypes = []tensor.DType{
	tensor.Bool, tensor.I8, tensor.U8, tensor.I16, tensor.U16, tensor.I32, tensor.U32,
	tensor.I64, tensor.U64, tensor.F16, tensor.F32, tensor.F64,
}

// patternValue is element i of the test pattern, the same formula the
// numpy script below uses: small enough for every type, negative for the
// signed ones, alternating for bool.
func patternValue(dt tensor.DType, i int) int {
	v := (i*37 + 1) % 127
	switch {
	case dt == tensor.Bool:
		return v % 2
	case dt.IsUnsigned():
		return v
	default:
		return v - 63
	}
}

// pattern returns a host tensor of the test pattern.
func pattern(t testing.TB, dt tensor.DType, shape tensor.Shape) *tensor.Host {
	t.Helper()
	h, err := tensor.New(dt, shape)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Len() {
		v := patternValue(dt, i)
		var s tensor.Scalar
		if dt == tensor.Bool {
			s, err = tensor.NewScalar(v != 0, dt)
		} else {
			s, err = tensor.NewScalar(v, dt)
		}
		if err != nil {
			t.Fatal(err)
		}
		copy(h.Data[i*dt.Size():], s.Bytes())
	}
	return h
}

// file assembles an .npy file from a raw header dict, without the padding
// numpy adds, which readers must not depend on.
func file(major byte, dict string, data []byte) []byte {
	b := []byte(magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	b = append(b, dict...)
	return append(b, data...)
}

// readers are the ways a test reads a file: from a reader whose size is
// known, from a stream that delivers one byte at a time, and from disk.
var readers = []struct {
	name string
	read func(t *testing.T, b []byte) (*tensor.Host, error)
}{
	{"sized", func(t *testing.T, b []byte) (*tensor.Host, error) {
		return Read(bytes.NewReader(b))
	}},
	{"stream", func(t *testing.T, b []byte) (*tensor.Host, error) {
		return Read(iotest.OneByteReader(bytes.NewReader(b)))
	}},
	{"file", func(t *testing.T, b []byte) (*tensor.Host, error) {
		path := filepath.Join(t.TempDir(), "a.npy")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return ReadFile(path)
	}},
}

func sameHost(t *testing.T, got, want *tensor.Host) {
	t.Helper()
	if got.DType != want.DType || !got.Shape.Equal(want.Shape) || !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("got %v %v % x, want %v %v % x", got.DType, got.Shape, got.Data, want.DType, want.Shape, want.Data)
	}
}

func TestRoundTrip(t *testing.T) {
	shapes := []tensor.Shape{{}, {0}, {1}, {5}, {2, 3}, {2, 0, 4}, {3, 1, 2, 2}, {300, 7}}
	for _, dt := range npyDTypes {
		for _, shape := range shapes {
			t.Run(fmt.Sprintf("%v%v", dt, shape), func(t *testing.T) {
				want := pattern(t, dt, shape)
				var buf bytes.Buffer
				if err := Write(&buf, want); err != nil {
					t.Fatal(err)
				}
				b := buf.Bytes()
				hdrEnd := bytes.IndexByte(b, '\n') + 1
				if b[6] != 1 || hdrEnd%align != 0 || len(b)-hdrEnd != len(want.Data) {
					t.Fatalf("version %d, data at %d of %d bytes", b[6], hdrEnd, len(b))
				}
				for _, r := range readers {
					got, err := r.read(t, b)
					if err != nil {
						t.Fatalf("%s: %v", r.name, err)
					}
					sameHost(t, got, want)
				}
			})
		}
	}
}

func TestGolden(t *testing.T) {
	// The headers as the format spec and numpy.save make them: the dict,
	// room for the first dimension to grow to 21 digits, then spaces and a
	// newline up to a multiple of 64 bytes counted from the file's start.
	tests := []struct {
		name string
		h    *tensor.Host
		want string
	}{
		{
			"f32 2x3",
			&tensor.Host{DType: tensor.F32, Shape: tensor.Shape{2, 3}, Data: []byte{
				0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0, 0x80, 0x40, 0, 0, 0xa0, 0x40}},
			"\x93NUMPY\x01\x00\x76\x00" + // magic, 1.0, header length 118
				"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + // 59 bytes
				strings.Repeat(" ", 20) + // growth room: 21 - len("2")
				strings.Repeat(" ", 38) + // 10+59+20+38+1 = 128
				"\n" +
				"\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40",
		},
		{
			"bool 3",
			&tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{3}, Data: []byte{1, 0, 1}},
			"\x93NUMPY\x01\x00\x76\x00" +
				"{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }" + // 57 bytes
				strings.Repeat(" ", 20) +
				strings.Repeat(" ", 40) +
				"\n" +
				"\x01\x00\x01",
		},
		{
			"i64 scalar",
			&tensor.Host{DType: tensor.I64, Shape: tensor.Shape{}, Data: []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
			"\x93NUMPY\x01\x00\x76\x00" +
				"{'descr': '<i8', 'fortran_order': False, 'shape': (), }" + // 55 bytes, no growth room for 0-D
				strings.Repeat(" ", 62) +
				"\n" +
				"\xfe\xff\xff\xff\xff\xff\xff\xff",
		},
		{
			"u8 empty",
			&tensor.Host{DType: tensor.U8, Shape: tensor.Shape{0}, Data: nil},
			"\x93NUMPY\x01\x00\x76\x00" +
				"{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }" +
				strings.Repeat(" ", 20) +
				strings.Repeat(" ", 40) +
				"\n",
		},
		{
			"f16 1",
			&tensor.Host{DType: tensor.F16, Shape: tensor.Shape{1}, Data: []byte{0x00, 0x3e}},
			"\x93NUMPY\x01\x00\x76\x00" +
				"{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }" +
				strings.Repeat(" ", 60) +
				"\n" +
				"\x00\x3e",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tt.h); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
			got, err := Read(strings.NewReader(tt.want))
			if err != nil {
				t.Fatal(err)
			}
			sameHost(t, got, tt.h)
		})
	}
}

func TestDescrOf(t *testing.T) {
	want := map[tensor.DType]string{
		tensor.Bool: "|b1", tensor.I8: "|i1", tensor.U8: "|u1",
		tensor.I16: "<i2", tensor.U16: "<u2", tensor.I32: "<i4", tensor.U32: "<u4",
		tensor.I64: "<i8", tensor.U64: "<u8", tensor.F16: "<f2", tensor.F32: "<f4", tensor.F64: "<f8",
	}
	for _, dt := range tensor.DTypes {
		got, err := DescrOf(dt)
		if dt == tensor.BF16 {
			if err == nil || !strings.Contains(err.Error(), "bfloat16") {
				t.Errorf("DescrOf(bf16) = %q, %v; want a bfloat16 error", got, err)
			}
			continue
		}
		if err != nil || got != want[dt] {
			t.Errorf("DescrOf(%v) = %q, %v; want %q", dt, got, err, want[dt])
		}
	}
	if _, err := DescrOf(tensor.Invalid); err == nil || !strings.HasPrefix(err.Error(), "npy: ") {
		t.Errorf("DescrOf(invalid) error = %v", err)
	}
}

func TestReadDescr(t *testing.T) {
	tests := []struct {
		descr string
		data  []byte // as stored
		dt    tensor.DType
		want  []byte // little-endian
	}{
		{"<i4", []byte{1, 2, 3, 4}, tensor.I32, []byte{1, 2, 3, 4}},
		{"=i4", []byte{1, 2, 3, 4}, tensor.I32, []byte{1, 2, 3, 4}},
		{"|i4", []byte{1, 2, 3, 4}, tensor.I32, []byte{1, 2, 3, 4}},
		{"i4", []byte{1, 2, 3, 4}, tensor.I32, []byte{1, 2, 3, 4}},
		{">i4", []byte{1, 2, 3, 4}, tensor.I32, []byte{4, 3, 2, 1}},
		{">u4", []byte{1, 2, 3, 4}, tensor.U32, []byte{4, 3, 2, 1}},
		{">i2", []byte{1, 2, 3, 4}, tensor.I16, []byte{2, 1, 4, 3}},
		{">u2", []byte{1, 2, 3, 4}, tensor.U16, []byte{2, 1, 4, 3}},
		{">i8", []byte{1, 2, 3, 4, 5, 6, 7, 8}, tensor.I64, []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		{">u8", []byte{1, 2, 3, 4, 5, 6, 7, 8}, tensor.U64, []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		{">f2", []byte{0x3c, 0x00}, tensor.F16, []byte{0x00, 0x3c}},
		{">f4", []byte{0x3f, 0x80, 0, 0}, tensor.F32, []byte{0, 0, 0x80, 0x3f}},
		{">f8", []byte{0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, tensor.F64, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"<f2", []byte{0x00, 0x3c}, tensor.F16, []byte{0x00, 0x3c}},
		{"<f8", []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, tensor.F64, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{"|i1", []byte{0xff, 1}, tensor.I8, []byte{0xff, 1}},
		{">i1", []byte{0xff, 1}, tensor.I8, []byte{0xff, 1}},
		{"|u1", []byte{0xff, 1}, tensor.U8, []byte{0xff, 1}},
		{"<u1", []byte{0xff, 1}, tensor.U8, []byte{0xff, 1}},
		{"u1", []byte{0xff, 1}, tensor.U8, []byte{0xff, 1}},
		// Any nonzero byte is True, and tensors hold it as 1.
		{"|b1", []byte{0, 1, 2, 255}, tensor.Bool, []byte{0, 1, 1, 1}},
		{">b1", []byte{0, 7}, tensor.Bool, []byte{0, 1}},
		{"?", []byte{0, 7}, tensor.Bool, []byte{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.descr, func(t *testing.T) {
			n := len(tt.data) / tt.dt.Size()
			b := file(1, fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", tt.descr, n), tt.data)
			want := &tensor.Host{DType: tt.dt, Shape: tensor.Shape{n}, Data: tt.want}
			for _, r := range readers {
				got, err := r.read(t, b)
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				sameHost(t, got, want)
			}
		})
	}
}

// fortranData lays out a tensor whose row-major element k has value k in
// column-major order, as u16 in the given byte order.
func fortranData(shape tensor.Shape, order binary.AppendByteOrder) []byte {
	n := shape.NumElements()
	strides := shape.Strides()
	out := make([]byte, 0, 2*n)
	for j := range n {
		// j is the column-major position: the first axis varies fastest.
		c, rest := 0, j
		for a, d := range shape {
			c += rest % d * strides[a]
			rest /= d
		}
		out = order.AppendUint16(out, uint16(c))
	}
	return out
}

func TestFortranOrder(t *testing.T) {
	shapes := []tensor.Shape{{}, {0}, {5}, {2, 3}, {3, 2}, {2, 3, 4}, {0, 3}, {3, 1, 2}, {1, 4}, {2, 2, 2, 3}}
	for _, shape := range shapes {
		for _, order := range []struct {
			prefix string
			bo     binary.AppendByteOrder
		}{{"<", binary.LittleEndian}, {">", binary.BigEndian}} {
			t.Run(fmt.Sprintf("%s%v", order.prefix, shape), func(t *testing.T) {
				dict := fmt.Sprintf("{'descr': '%su2', 'fortran_order': True, 'shape': %s, }", order.prefix, pyTuple(shape))
				b := file(1, dict, fortranData(shape, order.bo))
				want := &tensor.Host{DType: tensor.U16, Shape: shape, Data: []byte{}}
				for k := range shape.NumElements() {
					want.Data = binary.LittleEndian.AppendUint16(want.Data, uint16(k))
				}
				for _, r := range readers {
					got, err := r.read(t, b)
					if err != nil {
						t.Fatalf("%s: %v", r.name, err)
					}
					sameHost(t, got, want)
				}
			})
		}
	}
	// The 2x3 case spelled out, in case fortranData shares a mistake with
	// the reader.
	b := file(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }", []byte{0, 3, 1, 4, 2, 5})
	got, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	sameHost(t, got, &tensor.Host{DType: tensor.U8, Shape: tensor.Shape{2, 3}, Data: []byte{0, 1, 2, 3, 4, 5}})
}

func pyTuple(s tensor.Shape) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func TestHeaderForms(t *testing.T) {
	data := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}
	want := &tensor.Host{DType: tensor.F32, Shape: tensor.Shape{2}, Data: data}
	tests := []struct {
		name  string
		major byte
		dict  string
	}{
		{"numpy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" + strings.Repeat(" ", 60) + "\n"},
		{"double quotes", 1, `{"descr": "<f4", "fortran_order": False, "shape": (2,)}`},
		{"other order, no spaces", 1, "{'shape':(2,),'fortran_order':False,'descr':'<f4'}"},
		{"whitespace", 1, "  {\n\t'descr' : '<f4' ,\r\n 'fortran_order':False,'shape':( 2 , ) , }\n\n"},
		{"python 2 long", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }"},
		{"plus sign", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (+2,), }"},
		{"escaped descr", 1, `{'descr': '\x3cf4', 'fortran_order': False, 'shape': (2,), }`},
		{"parenthesised values", 1, "{'descr': ('<f4'), 'fortran_order': (False), 'shape': ( (2,) ), }"},
		{"version 2.0", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"},
		{"version 3.0", 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range readers {
				got, err := r.read(t, file(tt.major, tt.dict, data))
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				sameHost(t, got, want)
			}
		})
	}
}

// hdr builds a version 1.0 file from a dict and data.
func hdr(dict string, data ...byte) []byte { return file(1, dict, data) }

// f4dict is a valid dict with one part replaced.
func f4dict(descr, fortran, shape string) string {
	return fmt.Sprintf("{'descr': %s, 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape)
}

func TestReadErrors(t *testing.T) {
	valid := hdr(f4dict("'<f4'", "False", "(1,)"), 0, 0, 0, 0)
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		// Preamble.
		{"empty", nil, "empty input"},
		{"bad magic", []byte("NUMPY\x01\x00\x10\x00{}"), "not a .npy file"},
		{"bad magic short", []byte("\x93NUX"), "not a .npy file"},
		{"text file", []byte("hello, world\n"), "not a .npy file"},
		{"magic cut", []byte("\x93NUM"), "preamble truncated: want 8 bytes, got 4"},
		{"version cut", []byte("\x93NUMPY\x01"), "preamble truncated: want 8 bytes, got 7"},
		{"version 4.0", file(4, "{}", nil), "unsupported format version 4.0"},
		{"version 0.0", file(0, "{}", nil), "unsupported format version 0.0"},
		{"version 1.1", append([]byte("\x93NUMPY\x01\x01"), valid[8:]...), "unsupported format version 1.1"},
		{"length cut v1", []byte("\x93NUMPY\x01\x00\x10"), "preamble truncated: want 10 bytes, got 9"},
		{"length cut v2", []byte("\x93NUMPY\x02\x00\x10\x00"), "preamble truncated: want 12 bytes, got 10"},
		// Header length and text.
		{"header beyond file", append([]byte("\x93NUMPY\x01\x00\xff\xff"), "{'descr'"...), "header truncated: want 65535 bytes, got 8"},
		{"huge header v2", append([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"), "{'descr'"...), "header truncated: want 4294967295 bytes, got 8"},
		{"header cuts dict", valid[:30], "header truncated"},
		{"empty header", hdr(""), "not a dict"},
		{"list header", hdr("[1, 2]"), "not a dict"},
		{"unterminated dict", hdr("{'descr': '<f4', "), "unexpected end"},
		{"unterminated string", hdr("{'descr: '<f4'}"), "want ':'"},
		{"string runs to end", hdr("{'descr"), "unterminated string"},
		{"newline in string", hdr("{'de\nscr': 1}"), "unterminated string"},
		{"missing colon", hdr("{'descr' '<f4'}"), "want ':'"},
		{"missing comma", hdr("{'descr': '<f4' 'shape': (1,)}"), "want ',' or '}'"},
		{"lone comma", hdr("{,}"), "dict key is not a string"},
		{"double comma", hdr("{'descr': '<f4',, }"), "dict key is not a string"},
		{"int key", hdr("{1: 2}"), "dict key is not a string"},
		{"text after dict", hdr(f4dict("'<f4'", "False", "(1,)") + " x"), "text after the dict"},
		{"two dicts", hdr(f4dict("'<f4'", "False", "(1,)") + "{}"), "text after the dict"},
		{"float", hdr(f4dict("'<f4'", "False", "(1.5,)")), "not an integer"},
		{"hex", hdr(f4dict("'<f4'", "False", "(0x10,)")), "not an integer"},
		{"name", hdr(f4dict("float32", "False", "(1,)")), `name "float32" is not a literal`},
		{"bad char", hdr(f4dict("'<f4'", "False", "(1,)*2")), "want ',' or '}'"},
		{"lone minus", hdr(f4dict("'<f4'", "False", "(-,)")), "want a number"},
		{"unclosed tuple", hdr("{'shape': (1, 2}"), "want ',' or ')'"},
		{"deep nesting", hdr("{'descr': " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}"), "nested more than"},
		{"bad hex escape", hdr(`{'descr': '\xZZ'}`), "bad \\x escape"},
		{"v3 not utf-8", file(3, f4dict("'<f4\xff'", "False", "(1,)"), []byte{0, 0, 0, 0}), "not valid UTF-8"},
		// Keys.
		{"no keys", hdr("{}"), `missing key "descr"`},
		{"no descr", hdr("{'fortran_order': False, 'shape': (1,)}"), `missing key "descr"`},
		{"no fortran_order", hdr("{'descr': '<f4', 'shape': (1,)}"), `missing key "fortran_order"`},
		{"no shape", hdr("{'descr': '<f4', 'fortran_order': False}"), `missing key "shape"`},
		{"extra key", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'foo': 1}"), `unexpected key "foo"`},
		{"repeated key", hdr("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"), `repeats key "descr"`},
		// Values.
		{"fortran_order 0", hdr(f4dict("'<f4'", "0", "(1,)")), "'fortran_order' is not True or False"},
		{"fortran_order string", hdr(f4dict("'<f4'", "'False'", "(1,)")), "'fortran_order' is not True or False"},
		{"fortran_order None", hdr(f4dict("'<f4'", "None", "(1,)")), "'fortran_order' is not True or False"},
		{"shape list", hdr(f4dict("'<f4'", "False", "[1]")), "'shape' is not a tuple of integers"},
		{"shape int", hdr(f4dict("'<f4'", "False", "1")), "'shape' is not a tuple of integers"},
		{"shape parenthesised int", hdr(f4dict("'<f4'", "False", "(1)")), "'shape' is not a tuple of integers"},
		{"shape of strings", hdr(f4dict("'<f4'", "False", "('1',)")), "'shape' is not a tuple of integers"},
		{"shape of tuples", hdr(f4dict("'<f4'", "False", "((1,),)")), "'shape' is not a tuple of integers"},
		{"shape of bools", hdr(f4dict("'<f4'", "False", "(True,)")), "'shape' is not a tuple of integers"},
		{"negative dimension", hdr(f4dict("'<f4'", "False", "(-1,)")), "negative dimension (-1)"},
		{"negative later dimension", hdr(f4dict("'<f4'", "False", "(2, - 3)")), "negative dimension (-3)"},
		{"dimension out of range", hdr(f4dict("'<f4'", "False", "(99999999999999999999,)")), "dimension 99999999999999999999 is out of range"},
		{"element count overflows", hdr(f4dict("'<f4'", "False", "(4294967296, 4294967296)")), "overflows"},
		{"byte count overflows", hdr(f4dict("'<f8'", "False", "(4611686018427387904,)")), "too large to address"},
		// Element types.
		{"object", hdr(f4dict("'|O'", "False", "(1,)")), `unsupported dtype "|O" (Python object)`},
		{"unicode", hdr(f4dict("'<U5'", "False", "(1,)")), `unsupported dtype "<U5" (unicode string)`},
		{"bytes", hdr(f4dict("'|S3'", "False", "(1,)")), `unsupported dtype "|S3" (byte string)`},
		{"complex", hdr(f4dict("'<c8'", "False", "(1,)")), `unsupported dtype "<c8" (complex)`},
		{"datetime", hdr(f4dict("'<M8[ns]'", "False", "(1,)")), `unsupported dtype "<M8[ns]" (datetime)`},
		{"timedelta", hdr(f4dict("'<m8[s]'", "False", "(1,)")), `unsupported dtype "<m8[s]" (timedelta)`},
		{"void", hdr(f4dict("'|V4'", "False", "(1,)")), `unsupported dtype "|V4" (void (raw bytes))`},
		{"float128", hdr(f4dict("'<f16'", "False", "(1,)")), `unsupported dtype "<f16" (float of that size)`},
		{"int128", hdr(f4dict("'<i16'", "False", "(1,)")), `unsupported dtype "<i16" (integer of that size)`},
		{"type name", hdr(f4dict("'float32'", "False", "(1,)")), `unsupported dtype "float32" (float of that size)`},
		{"empty descr", hdr(f4dict("''", "False", "(1,)")), `unsupported dtype "" (unknown type)`},
		{"structured", hdr(f4dict("[('a', '<i4'), ('b', '<f8', (2,))]", "False", "(1,)")), `unsupported structured dtype "[('a', '<i4'), ('b', '<f8', (2,))]"`},
		{"subarray", hdr(f4dict("('<i4', (2,))", "False", "(1,)")), `unsupported subarray dtype "('<i4', (2,))"`},
		{"descr int", hdr(f4dict("5", "False", "(1,)")), "'descr' is not a dtype"},
		{"descr dict", hdr(f4dict("{'names': ['a'], 'formats': ['<i4']}", "False", "(1,)")), "'descr' is not a dtype"},
		// Data.
		{"data truncated", hdr(f4dict("'<f4'", "False", "(3,)"), 1, 2, 3, 4, 5, 6, 7, 8), "npy: data truncated: want 12 bytes, got 8"},
		{"no data", hdr(f4dict("'<f4'", "False", "()")), "npy: data truncated: want 4 bytes, got 0"},
		{"huge shape", hdr(f4dict("'<f8'", "False", "(1099511627776,)"), 1, 2, 3), "npy: data truncated: want 8796093022208 bytes, got 3"},
		{"huge 2-d shape", hdr(f4dict("'|u1'", "True", "(1048576, 1048576)"), 1, 2, 3), "npy: data truncated: want 1099511627776 bytes, got 3"},
		{"trailing bytes", append(valid, 0), "trailing bytes after the 4 bytes of array data"},
		{"trailing after empty", hdr(f4dict("'<f4'", "False", "(0,)"), 9), "trailing bytes after the 0 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range readers {
				h, err := r.read(t, tt.in)
				if err == nil {
					t.Fatalf("%s: got %v %v, want an error", r.name, h.DType, h.Shape)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "npy: ") || !strings.Contains(msg, tt.want) {
					t.Fatalf("%s: error %q, want one containing %q", r.name, msg, tt.want)
				}
			}
		})
	}
}

// errReader fails after its bytes.
type errReader struct {
	b   []byte
	err error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, r.err
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestReadIOError(t *testing.T) {
	boom := errors.New("boom")
	var buf bytes.Buffer
	if err := Write(&buf, pattern(t, tensor.F32, tensor.Shape{4})); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for _, cut := range []int{0, 5, 9, 60, len(b) - 1, len(b)} {
		_, err := Read(&errReader{b: b[:cut], err: boom})
		if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "npy: ") {
			t.Errorf("cut at %d: error %v, want npy: ... boom", cut, err)
		}
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "nope.npy"))
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "npy: ") {
		t.Fatalf("error %v", err)
	}
}

// TestReadAllocation checks that a header's claims cost nothing until the
// bytes behind them arrive.
func TestReadAllocation(t *testing.T) {
	inputs := map[string][]byte{
		"huge header": append([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"), "{'descr'"...),
		"huge shape":  hdr(f4dict("'<f8'", "False", "(1099511627776,)"), 1, 2, 3),
		"huge 2-d":    hdr(f4dict("'<f8'", "True", "(1048576, 1048576)"), 1, 2, 3),
	}
	for name, in := range inputs {
		for _, r := range []struct {
			name string
			r    func() io.Reader
		}{
			{"sized", func() io.Reader { return bytes.NewReader(in) }},
			{"stream", func() io.Reader { return struct{ io.Reader }{bytes.NewReader(in)} }},
		} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Read(r.r())
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("%s %s: no error", name, r.name)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
				t.Errorf("%s %s: allocated %d bytes for a %d-byte input", name, r.name, n, len(in))
			}
		}
	}
}

func TestBoolWrite(t *testing.T) {
	h := &tensor.Host{DType: tensor.Bool, Shape: tensor.Shape{5000}, Data: make([]byte, 5000)}
	for i := range h.Data {
		h.Data[i] = byte(i % 3 * 100) // 0, 100, 200: not normalised
	}
	var buf bytes.Buffer
	if err := Write(&buf, h); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()[bytes.IndexByte(buf.Bytes(), '\n')+1:]
	for i, b := range data {
		if want := byte(min(1, i%3)); b != want {
			t.Fatalf("byte %d is %d, want %d", i, b, want)
		}
	}
	if h.Data[1] != 100 {
		t.Fatal("Write changed the tensor")
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name string
		h    *tensor.Host
		w    io.Writer
		want string
	}{
		{"bf16", &tensor.Host{DType: tensor.BF16, Shape: tensor.Shape{1}, Data: []byte{0, 0}}, io.Discard, "bfloat16 cannot be stored"},
		{"nil", nil, io.Discard, "nil tensor"},
		{"invalid dtype", &tensor.Host{DType: tensor.Invalid, Shape: tensor.Shape{1}, Data: []byte{0}}, io.Discard, "no .npy type"},
		{"short data", &tensor.Host{DType: tensor.F32, Shape: tensor.Shape{2}, Data: []byte{0, 0, 0, 0}}, io.Discard, "holds 4 bytes, want 8"},
		{"negative dimension", &tensor.Host{DType: tensor.U8, Shape: tensor.Shape{-1}}, io.Discard, "negative"},
		{"writer fails", pattern(t, tensor.F32, tensor.Shape{2}), errWriter{}, "writing header: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Write(tt.w, tt.h)
			if err == nil || !strings.HasPrefix(err.Error(), "npy: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestWriteVersion2(t *testing.T) {
	// A rank-r shape of ones takes 3 bytes a dimension; find where the
	// header outgrows version 1.0's 16-bit length.
	prev := byte(1)
	for _, rank := range []int{21000, 21800, 21810, 21820, 21830, 21840, 21850, 22000, 30000} {
		shape := make(tensor.Shape, rank)
		for i := range shape {
			shape[i] = 1
		}
		h := &tensor.Host{DType: tensor.U8, Shape: shape, Data: []byte{7}}
		var buf bytes.Buffer
		if err := Write(&buf, h); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		major := b[6]
		var hlen, pre int
		if major == 1 {
			hlen, pre = int(binary.LittleEndian.Uint16(b[8:])), 10
		} else {
			hlen, pre = int(binary.LittleEndian.Uint32(b[8:])), 12
		}
		if major < prev || (pre+hlen)%align != 0 || b[pre+hlen-1] != '\n' || len(b) != pre+hlen+1 {
			t.Fatalf("rank %d: version %d, header %d bytes, file %d", rank, major, hlen, len(b))
		}
		if major == 1 && pre+hlen > 0xffff+pre {
			t.Fatalf("rank %d: version 1.0 header of %d bytes", rank, hlen)
		}
		prev = major
		got, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		sameHost(t, got, h)
	}
	if prev != 2 {
		t.Fatal("never switched to version 2.0")
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.npy")
	want := pattern(t, tensor.I16, tensor.Shape{3, 4})
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameHost(t, got, want)
	if fi, err := os.Stat(path); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Fatalf("stat: %v, %v", fi.Mode(), err)
	}
	old, _ := os.ReadFile(path)

	// A failed write leaves the old file alone and nothing beside it.
	bf := &tensor.Host{DType: tensor.BF16, Shape: tensor.Shape{1}, Data: []byte{0, 0}}
	if err := WriteFile(path, bf); err == nil || !strings.Contains(err.Error(), "bfloat16") {
		t.Fatalf("bf16 error %v", err)
	}
	short := &tensor.Host{DType: tensor.F32, Shape: tensor.Shape{2}, Data: []byte{0}}
	if err := WriteFile(path, short); err == nil {
		t.Fatal("short data: no error")
	}
	if err := WriteFile(filepath.Join(dir, "b.npy"), bf); err == nil {
		t.Fatal("bf16 new file: no error")
	}
	if err := WriteFile(filepath.Join(dir, "missing", "c.npy"), want); err == nil || !strings.HasPrefix(err.Error(), "npy: ") {
		t.Fatalf("missing dir: error %v", err)
	}
	if err := WriteFile(dir, want); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory: error %v", err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, old) {
		t.Fatal("failed write changed the file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("directory holds %v", ents)
	}

	// Replacing a file keeps its mode.
	if runtime.GOOS != "windows" {
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(path, pattern(t, tensor.U8, tensor.Shape{2})); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("after replace: %v, %v", fi.Mode(), err)
		}
	}
}

// WriteFile through a symbolic link writes the file the link names, which
// keeps its mode, and leaves the link a link: relative and absolute
// links, a link to a link, and a dangling link, whose target is created.
func TestWriteFileSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SKIP: symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		links  [][2]string // link name in dir, its target, made in order
		target string      // the file written, in dir
		exists bool        // the target exists before, with mode 0600
	}{
		{"relative", [][2]string{{"r.npy", "sub/r-target.npy"}}, "sub/r-target.npy", true},
		{"absolute", [][2]string{{"a.npy", filepath.Join(sub, "a-target.npy")}}, "sub/a-target.npy", true},
		{"chain", [][2]string{{"c2.npy", "sub/c-target.npy"}, {"c1.npy", "c2.npy"}}, "sub/c-target.npy", true},
		{"dotdot", [][2]string{{"sub/d.npy", "../d-target.npy"}}, "d-target.npy", true},
		{"dangling", [][2]string{{"n.npy", "sub/n-target.npy"}}, "sub/n-target.npy", false},
	} {
		target := filepath.Join(dir, c.target)
		if c.exists {
			if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range c.links {
			if err := os.Symlink(l[1], filepath.Join(dir, l[0])); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(dir, c.links[len(c.links)-1][0])
		want := pattern(t, tensor.I32, tensor.Shape{2, 3})
		if err := WriteFile(link, want); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for _, l := range c.links {
			if fi, err := os.Lstat(filepath.Join(dir, l[0])); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s: %s is no longer a link (%v)", c.name, l[0], err)
			}
		}
		got, err := ReadFile(target)
		if err != nil {
			t.Errorf("%s: the target: %v", c.name, err)
			continue
		}
		sameHost(t, got, want)
		wantMode := os.FileMode(0o644)
		if c.exists {
			wantMode = 0o600
		}
		if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != wantMode {
			t.Errorf("%s: the target's mode %v, %v; want %v", c.name, fi.Mode(), err, wantMode)
		}
	}
	// A loop of links is an error, and changes nothing.
	loop := filepath.Join(dir, "loop.npy")
	if err := os.Symlink("loop.npy", loop); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(loop, pattern(t, tensor.U8, tensor.Shape{1})); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("a loop of links: error %v; want one matching ELOOP", err)
	}
	if fi, err := os.Lstat(loop); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the looping link is no longer a link (%v)", err)
	}
}

// TestWriteFileErrors checks that a write that fails names the path it
// was given and why, never the temporary file (issue 40), wraps the
// system's error and leaves nothing behind; and that a name too long to
// repeat in full in the temporary file's name is written all the same.
func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	h := pattern(t, tensor.U8, tensor.Shape{2})
	file := filepath.Join(dir, "f.npy")
	if err := WriteFile(file, h); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, strings.Repeat("x", 300)+".npy")
	cases := []struct {
		path, reason string // reason "" is the system's, whatever its words
		is           error
	}{
		{filepath.Join(dir, "missing", "o.npy"), "directory " + filepath.Join(dir, "missing") + " does not exist", fs.ErrNotExist},
		{filepath.Join(dir, "a", "b", "o.npy"), "directory " + filepath.Join(dir, "a", "b") + " does not exist", fs.ErrNotExist},
		{filepath.Join(file, "o.npy"), file + " is not a directory", nil},
		{filepath.Join(file, "sub", "o.npy"), file + " is not a directory", nil},
		{long, "", nil},
	}
	if runtime.GOOS != "windows" && os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "read-only")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			path, reason string
			is           error
		}{filepath.Join(ro, "o.npy"), "", fs.ErrPermission})
	}
	before, _ := os.ReadDir(dir)
	for _, c := range cases {
		err := WriteFile(c.path, h)
		if err == nil {
			t.Errorf("%s: no error", c.path)
			continue
		}
		want := "npy: write " + c.path + ": " + c.reason
		if c.reason != "" && err.Error() != want || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error %q, want %q", err, want)
		}
		if strings.Contains(err.Error(), ".tmp") {
			t.Errorf("error %q names the temporary file", err)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("error %q is not %v", err, c.is)
		}
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("directory holds %v, want %v", after, before)
	}

	// 253 bytes: the name fits, ".NAME.tmp123456789" would not; its
	// first 200 bytes end mid-rune.
	fits := filepath.Join(dir, "x"+strings.Repeat("\u00e9", 124)+".npy")
	if err := WriteFile(fits, h); err != nil {
		t.Fatalf("a 253-byte name: %v", err)
	}
	got, err := ReadFile(fits)
	if err != nil {
		t.Fatal(err)
	}
	sameHost(t, got, h)
}

// findNumpy returns a Python interpreter that has numpy, or "".
func findNumpy() string {
	candidates := []string{"/usr/bin/python3"}
	for _, name := range []string{"python3", "python"} {
		if p, err := exec.LookPath(name); err == nil {
			candidates = append(candidates, p)
		}
	}
	for _, py := range candidates {
		if exec.Command(py, "-c", "import numpy").Run() == nil {
			return py
		}
	}
	return ""
}

// numpyScript loads each ours_*.npy and saves it again as resaved_*.npy,
// then writes the pattern of each spec entry in every layout numpy has.
const numpyScript = `
import glob, json, os, sys
import numpy as np
from numpy.lib import format as fmt

d = sys.argv[1]
for p in sorted(glob.glob(os.path.join(d, 'ours_*.npy'))):
    a = np.load(p, allow_pickle=False)
    np.save(p.replace('ours_', 'resaved_'), a)
for s in json.load(open(os.path.join(d, 'spec.json'))):
    dt = np.dtype(s['descr'])
    shape = tuple(s['shape'])
    v = (np.arange(int(np.prod(shape)), dtype=np.int64) * 37 + 1) % 127
    if dt.kind == 'b':
        a = (v % 2).astype(dt)
    elif dt.kind == 'u':
        a = v.astype(dt)
    else:
        a = (v - 63).astype(dt)
    a = a.reshape(shape)
    base = os.path.join(d, 'np_' + s['name'])
    np.save(base + '_le.npy', a)
    np.save(base + '_be.npy', a.astype(dt.newbyteorder('>')))
    # asfortranarray makes a 0-D array 1-D; a 0-D array has one layout.
    fortran = np.asfortranarray if a.ndim else np.asarray
    np.save(base + '_f.npy', fortran(a))
    np.save(base + '_fbe.npy', fortran(a.astype(dt.newbyteorder('>'))))
    for major in (2, 3):
        with open(base + '_v%d.npy' % major, 'wb') as f:
            fmt.write_array(f, a, version=(major, 0))
`

// TestNumpy checks files both ways against numpy itself, when a Python
// with numpy is at hand: numpy must load ours and save them again byte for
// byte, and we must read what numpy writes in every layout.
func TestNumpy(t *testing.T) {
	py := findNumpy()
	if py == "" {
		t.Skip("no python3 with numpy")
	}
	dir := t.TempDir()
	shapes := []tensor.Shape{{}, {0}, {5}, {2, 3}, {2, 3, 4}, {3, 0, 2}, {4, 1, 3}}
	type spec struct {
		Name  string `json:"name"`
		Descr string `json:"descr"`
		Shape []int  `json:"shape"`
	}
	var specs []spec
	for _, dt := range npyDTypes {
		descr, err := DescrOf(dt)
		if err != nil {
			t.Fatal(err)
		}
		for i, shape := range shapes {
			name := fmt.Sprintf("%v_%d", dt, i)
			if err := WriteFile(filepath.Join(dir, "ours_"+name+".npy"), pattern(t, dt, shape)); err != nil {
				t.Fatal(err)
			}
			specs = append(specs, spec{name, descr, append([]int{}, shape...)})
		}
	}
	js, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spec.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, "-c", numpyScript, dir).CombinedOutput(); err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}

	files := 0
	for _, dt := range npyDTypes {
		for i, shape := range shapes {
			name := fmt.Sprintf("%v_%d", dt, i)
			ours, err := os.ReadFile(filepath.Join(dir, "ours_"+name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := os.ReadFile(filepath.Join(dir, "resaved_"+name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, theirs) {
				t.Errorf("%s: numpy saves\n%q\nwe wrote\n%q", name, theirs, ours)
			}
			want := pattern(t, dt, shape)
			for _, layout := range []string{"le", "be", "f", "fbe", "v2", "v3"} {
				got, err := ReadFile(filepath.Join(dir, "np_"+name+"_"+layout+".npy"))
				if err != nil {
					t.Fatalf("%s %s: %v", name, layout, err)
				}
				if got.DType != want.DType || !got.Shape.Equal(want.Shape) || !bytes.Equal(got.Data, want.Data) {
					t.Errorf("%s %s: got %v %v % x, want %v", name, layout, got.DType, got.Shape, got.Data, want.Shape)
				}
				files++
			}
		}
	}
	t.Logf("%s: numpy re-saved %d of our files identically; we read %d of its", py, len(specs), files)
}
