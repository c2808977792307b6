package main

import (
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/tensor"
)

// parseNumber tells numbers from file names: every spelling of a number,
// signed ones and ones beyond float64's range included, and nothing else.
// Each number's value is exact: shown as its f64 bits where that is exact,
// else as its i64 or u64 conversion ("" where no type holds it).
func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		s    string
		want string // "huge": beyond float64's range; "file": not a number
	}{
		{"42", "42"},
		{"-1", "-1"},
		{"-0x7f", "-127"},
		{"0b101", "5"},
		{"1_000", "1000"},
		{"18446744073709551615", "18446744073709551615"},
		{"-9223372036854775809", "-9223372036854775809"},
		{"-2.5", "-5/2"},
		{"1e-400", "1/" + new(big.Int).Exp(big.NewInt(10), big.NewInt(400), nil).String()},
		{"0x1p-2", "1/4"},
		{"-inf", "-inf"},
		{"+Infinity", "+inf"},
		{"nan", "+nan"},
		{"NaN", "+nan"},
		{"+nan", "+nan"},
		{"-nan", "-nan"},
		{"-NAN", "-nan"},
		{"-0", "-0"},
		{"-0.0", "-0"},
		{"-0e-9999999", "-0"},
		{"1e-9999999", "tiny"},
		{"-0x1p-99999999", "-tiny"},
		{"99999999999999999999", "99999999999999999999"},
		{"0x1_0000_0000_0000_0000", "18446744073709551616"},
		{"010", "10"}, // decimal, as 010.0 and numpy's float('010'), not Go's octal
		{"-0010", "-10"},
		{"0_10", "10"},
		{"09", "9"},
		{"00", "0"},
		{"0o10", "8"},
		{"010_", "file"},
		{"0__1", "file"},
		{"1e400", "huge"},
		{"-1e400", "huge"},
		{"-0x1p2000", "huge"},
		{"0x1" + fmt.Sprintf("%0300d", 0), "huge"},
		{"abc", "file"},
		{"1e400x", "file"},
		{"x.npy", "file"},
		{"", "file"},
		{"-", "file"},
		{"0x", "file"},
		{"+-1", "file"},
		{" 1", "file"},
		{"nan1", "file"},
		{"1/2", "file"},
	} {
		l, ok := parseNumber(c.s)
		if c.want == "file" {
			if ok {
				t.Errorf("parseNumber(%q) = %+v, true; want no number", c.s, l)
			}
			continue
		}
		sign := "+"
		if l.neg {
			sign = "-"
		}
		var got string
		switch {
		case l.huge:
			got = "huge"
		case l.nan:
			got = sign + "nan"
		case l.inf:
			got = sign + "inf"
		case l.r.Sign() == 0:
			got = strings.TrimPrefix(sign, "+") + "0"
		case l.r.Cmp(tinyRat) == 0:
			got = "tiny"
		case new(big.Rat).Neg(l.r).Cmp(tinyRat) == 0:
			got = "-tiny"
		default:
			got = l.r.RatString()
		}
		if !ok || got != c.want {
			t.Errorf("parseNumber(%q) = %s, %v; want %s, true", c.s, got, ok, c.want)
		}
	}
}

// A number converts to an element type exactly, rounding once, to
// nearest even, into a float type: not first to float64, which for f16,
// bf16 and f32 can make a tie of what is none, and for an integer type
// can make an integer of a fraction or of a value out of range. -0 is -0
// and NaN the canonical quiet NaN of each float type.
func TestLiteralScalar(t *testing.T) {
	for _, c := range []struct {
		s    string
		dt   tensor.DType
		want uint64 // the scalar's bits
	}{
		{"-9223372036854775808", tensor.I64, 1 << 63},
		{"-9223372036854775808.0", tensor.I64, 1 << 63},
		{"9223372036854775807", tensor.I64, math.MaxInt64},
		{"18446744073709551615", tensor.U64, math.MaxUint64},
		{"18446744073709551615.0", tensor.U64, math.MaxUint64},
		{"9007199254740993.0", tensor.I64, 9007199254740993},
		{"0e-9999999", tensor.U8, 0},
		{"-0", tensor.I8, 0},
		{"1.0", tensor.Bool, 1},
		// Double rounding: float64 makes a tie of what is above or below one.
		{"2049.00000000000000001", tensor.F16, 0x6801},  // 2050
		{"2050.99999999999999999", tensor.F16, 0x6801},  // 2050, not 2052
		{"65519.999999999999999", tensor.F16, 0x7bff},   // 65504, below the overflow threshold
		{"1.00390625000000000001", tensor.BF16, 0x3f81}, // 1.0078125
		{"1.0000000596046447753906250001", tensor.F32, 0x3f800001},
		{"1.000000059604644775390625", tensor.F32, 0x3f800000}, // the tie itself, to even
		{"0x1.000001p0", tensor.F32, 0x3f800000},
		{"0x1.0000010000001p0", tensor.F32, 0x3f800001},
		{"5e-324", tensor.F64, 1},
		{"2.4703282292062328e-324", tensor.F64, 1}, // just above half the least subnormal
		{"2.4703282292062327e-324", tensor.F64, 0},
		{"1e-45", tensor.F32, 1},
		{"-1e-9999999", tensor.F16, 0x8000},
		{"0.1", tensor.F64, math.Float64bits(0.1)},
		{"-0", tensor.F64, 1 << 63},
		{"-0", tensor.F32, 1 << 31},
		{"-0.0", tensor.F16, 1 << 15},
		{"-0", tensor.BF16, 1 << 15},
		{"+0", tensor.F32, 0},
		{"nan", tensor.F64, 0x7ff8000000000000},
		{"-nan", tensor.F64, 0xfff8000000000000},
		{"nan", tensor.F32, 0x7fc00000},
		{"-NaN", tensor.F32, 0xffc00000},
		{"nan", tensor.F16, 0x7e00},
		{"nan", tensor.BF16, 0x7fc0},
		{"-inf", tensor.F16, 0xfc00},
	} {
		l, _ := parseNumber(c.s)
		if s, ok := l.scalar(c.dt); !ok || s.Bits != c.want {
			t.Errorf("%s as %v = %#x, %v; want %#x", c.s, c.dt, s.Bits, ok, c.want)
		}
	}
	for _, c := range []struct {
		s  string
		dt tensor.DType
	}{
		{"-9223372036854775809", tensor.I64},
		{"-9223372036854776832", tensor.I64},
		{"-9223372036854775809.0", tensor.I64},
		{"9223372036854775808", tensor.I64},
		{"18446744073709551616", tensor.U64},
		{"1.8446744073709551616e19", tensor.U64},
		{"1e-400", tensor.I32},
		{"1.0000000000000000001", tensor.I32},
		{"1e-9999999", tensor.U8},
		{"2", tensor.Bool},
		{"nan", tensor.I32},
		{"-inf", tensor.I64},
		{"65520", tensor.F16}, // the overflow threshold rounds to 65536
		{"1e39", tensor.F32},
		{"1e400", tensor.F64},
	} {
		l, _ := parseNumber(c.s)
		if s, ok := l.scalar(c.dt); ok {
			t.Errorf("%s as %v = %#x; want not representable", c.s, c.dt, s.Bits)
		}
	}
}

// A clamp bound converts as ops.Clamp converts a number, ceil for min
// and floor for max into an integer type, from the exact value.
func TestLiteralBoundScalar(t *testing.T) {
	for _, c := range []struct {
		s    string
		dt   tensor.DType
		min  bool
		want uint64 // the scalar's bits
	}{
		{"1e-400", tensor.I32, true, 1},
		{"1e-400", tensor.I32, false, 0},
		{"-1e-400", tensor.I32, true, 0},
		{"-1e-400", tensor.I32, false, math.MaxUint32},
		{"1e-9999999", tensor.I8, true, 1},
		{"-1e-9999999", tensor.I8, false, 0xff},
		{"2.9999999999999999999", tensor.I32, false, 2},
		{"2.0000000000000000001", tensor.I32, true, 3},
		{"-1.5", tensor.I32, true, math.MaxUint32},
		{"2.5", tensor.U8, false, 2},
		{"-0.5", tensor.U8, true, 0},
		{"9007199254740993.0", tensor.I64, true, 9007199254740993},
		{"18446744073709551615.0", tensor.U64, false, math.MaxUint64},
		{"18446744073709551614.5", tensor.U64, true, math.MaxUint64},
		{"1e-400", tensor.F32, true, 0},
		{"2049.00000000000000001", tensor.F16, false, 0x6801},
	} {
		l, _ := parseNumber(c.s)
		if s, ok := l.boundScalar(c.dt, c.min); !ok || s.Bits != c.want {
			t.Errorf("bound %s (min %v) as %v = %#x, %v; want %#x", c.s, c.min, c.dt, s.Bits, ok, c.want)
		}
	}
	for _, c := range []struct {
		s   string
		dt  tensor.DType
		min bool
	}{
		{"18446744073709551615.5", tensor.U64, true},
		{"-0.5", tensor.U8, false},
		{"-9223372036854775809", tensor.I64, true},
		{"nan", tensor.I32, true},
		{"inf", tensor.I32, false},
		{"0.5", tensor.Bool, true}, // no rounding into bool, as ops.Clamp
	} {
		l, _ := parseNumber(c.s)
		if s, ok := l.boundScalar(c.dt, c.min); ok {
			t.Errorf("bound %s (min %v) as %v = %#x; want not representable", c.s, c.min, c.dt, s.Bits)
		}
	}
}

// The rule of the --help: where a number may stand, an argument that
// reads as one is a number even when a file of that name exists, and
// ./NAME names the file; where only a file goes, the argument is a path.
func TestNumberOperandFileNames(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	writeNpy(t, dir, "c.npy", selHost(t, []int{3}, true, false, true))
	writeNpy(t, dir, "x.npy", selHost(t, []int{3}, float32(7), 8, 9))
	writeNpy(t, dir, "1", selHost(t, []int{3}, float32(5), float32(math.NaN()), 6))
	writeNpy(t, dir, "-1", selHost(t, []int{3}, float32(-5), -6, -7))
	for _, c := range []struct {
		args []string
		want *tensor.Host
	}{
		{[]string{"where", "c.npy", "1", "x.npy"}, selHost(t, []int{3}, float32(1), 8, 1)},
		{[]string{"where", "c.npy", "./1", "x.npy"}, selHost(t, []int{3}, float32(5), 8, 6)},
		{[]string{"where", "c.npy", "x.npy", "-1"}, selHost(t, []int{3}, float32(7), -1, 9)},
		{[]string{"where", "c.npy", "x.npy", "./-1"}, selHost(t, []int{3}, float32(7), -6, 9)},
		{[]string{"less", "1", "x.npy"}, selHost(t, []int{3}, true, true, true)},
		{[]string{"less", "./1", "x.npy"}, selHost(t, []int{3}, true, false, true)},
		{[]string{"greater", "-1", "./-1"}, selHost(t, []int{3}, true, true, true)},
		{[]string{"equal", "./-1", "-6"}, selHost(t, []int{3}, false, true, false)},
		{[]string{"is-nan", "1"}, selHost(t, []int{3}, false, true, false)},
		{[]string{"select", "c.npy", "-1", "x.npy"}, selHost(t, []int{3}, float32(-5), 8, -7)},
	} {
		args := append(c.args, "-o", out)
		stdout, stderr, code := vkopsIn(t, dir, nil, args...)
		if err := missingDevice(code, stderr); err != nil {
			t.Skip(devtest.SkipLine(err))
		}
		if code != 0 || stdout != "" || stderr != "" {
			t.Errorf("vkops %q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
			continue
		}
		got, err := npy.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(out); err != nil {
			t.Fatal(err)
		}
		selSame(t, fmt.Sprint(c.args), got, c.want)
	}
}

// Numbers on the command line convert exactly, as TestLiteralScalar
// and TestLiteralBoundScalar show, in every op that takes them: where's
// two numbers of --dtype and clamp's bounds; what a type cannot hold is
// refused in a message that quotes the number as typed.
func TestScalarCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.npy")
	c := writeNpy(t, dir, "c.npy", selHost(t, []int{1}, true))
	for _, x := range []struct {
		dt, s string
		want  *tensor.Host
	}{
		{"f16", "2049.00000000000000001", selHost(t, []int{1}, tensor.Float16(0x6801))},
		{"f16", "65519.999999999999999", selHost(t, []int{1}, tensor.Float16(0x7bff))},
		{"bf16", "1.00390625000000000001", selHost(t, []int{1}, float32(1.0078125))}, // written as float32
		{"f32", "1.0000000596046447753906250001", selHost(t, []int{1}, math.Float32frombits(0x3f800001))},
		{"f32", "-0", selHost(t, []int{1}, float32(math.Copysign(0, -1)))},
		{"f64", "-0", selHost(t, []int{1}, math.Copysign(0, -1))},
		{"f64", "nan", selHost(t, []int{1}, math.Float64frombits(0x7ff8000000000000))},
		{"i64", "-9223372036854775808", selHost(t, []int{1}, int64(math.MinInt64))},
		{"u64", "18446744073709551615", selHost(t, []int{1}, uint64(math.MaxUint64))},
	} {
		args := []string{"where", c, x.s, "0", "--dtype", x.dt, "-o", out}
		selSame(t, strings.Join(args, " "), selRun(t, out, args...), x.want)
	}

	i32 := writeNpy(t, dir, "i32.npy", selHost(t, []int{4}, int32(-5), 0, 2, 5))
	i64 := writeNpy(t, dir, "i64.npy", selHost(t, []int{2}, int64(0), math.MaxInt64))
	u64 := writeNpy(t, dir, "u64.npy", selHost(t, []int{2}, uint64(0), math.MaxUint64))
	for _, x := range []struct {
		args []string
		want *tensor.Host
	}{
		{[]string{i32, "--min", "1e-400", "--max", "9"}, selHost(t, []int{4}, int32(1), 1, 2, 5)},
		{[]string{i32, "--min", "-9", "--max", "2.9999999999999999999"}, selHost(t, []int{4}, int32(-5), 0, 2, 2)},
		{[]string{i64, "--min", "9007199254740993.0", "--max", "9007199254740993.0"},
			selHost(t, []int{2}, int64(9007199254740993), 9007199254740993)},
		{[]string{u64, "--min", "1", "--max", "18446744073709551615.0"}, selHost(t, []int{2}, uint64(1), math.MaxUint64)},
	} {
		args := append([]string{"clamp"}, append(x.args, "-o", out)...)
		selSame(t, strings.Join(args, " "), selRun(t, out, args...), x.want)
	}

	var cases []hardCase
	for _, x := range []struct{ dt, s string }{
		{"i64", "-9223372036854775809"},
		{"i64", "-9223372036854776832"},
		{"u64", "18446744073709551616"},
		{"f16", "65520.0000000000000001"},
	} {
		cases = append(cases, hardCase{
			args: []string{"where", c, x.s, "0", "--dtype", x.dt, "-o", "OUT"},
			msg:  fmt.Sprintf("vkops: where: input scalar %s cannot be represented as %s", x.s, x.dt)})
	}
	cases = append(cases, hardCase{
		args: []string{"clamp", i64, "--min", "-9223372036854775809", "--max", "0", "-o", "OUT"},
		msg:  "vkops: clamp: min scalar -9223372036854775809 cannot be represented as i64"})
	hardRunAll(t, cases, out, nil)
}
