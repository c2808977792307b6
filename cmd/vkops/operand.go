package main

import (
	"errors"
	"flag"
	"io/fs"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/tensor"
)

// numberRule is the --help paragraph on how an argument becomes one of
// operands ("A and B"), which may each be a number or a .npy file.
func numberRule(operands string) string {
	return operands + ` are each a .npy file or a number. An argument that
reads as a number is a number (42, -1, -2.5, 1e-3, 0x10, 0x1p-4, inf, -inf,
nan), even where a file of that name exists: write ./1 for a file named 1.
Anything else is a .npy file. A number must fit the element type it is
given exactly: 1e400 fits none, 300 no i8, 1.5 no integer type.`
}

// number is a number operand as it was written; scalarValue makes it the
// Go value for an element type.
type number string

// readOperand reads an operand that may be a number or a .npy file
// (numberRule): a number as its text, a file as a host tensor converted
// by asType. role names the operand in errors ("b", "other").
func readOperand(name, role, arg string, dt tensor.DType) (any, error) {
	if _, ok := parseNumber(arg); ok {
		return number(arg), nil
	}
	h, err := npy.ReadFile(arg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, badInput("%s: operand %s: %q is neither a number nor an existing file", name, role, arg)
	case err != nil:
		return nil, badInput("%s: %v", name, err)
	}
	return asType(name, arg, h, dt)
}

// readFile reads the .npy file arg, operand what of command name, where
// only a file is taken, so that arg is a path even when it reads as a
// number; a number that names no file is refused as a number.
func readFile(name, what, arg string) (*tensor.Host, error) {
	h, err := npy.ReadFile(arg)
	if err == nil {
		return h, nil
	}
	if _, isNumber := parseNumber(arg); isNumber && errors.Is(err, fs.ErrNotExist) {
		return nil, badInput("%s: %s must be a .npy file, got the number %s", name, what, arg)
	}
	return nil, badInput("%s: %v", name, err)
}

// asType returns h, the file arg, rounded to bfloat16 when dt is BF16
// (which takes float32 files only), else required to be of type dt when
// dt is set.
func asType(name, arg string, h *tensor.Host, dt tensor.DType) (*tensor.Host, error) {
	switch {
	case dt == tensor.BF16 && h.DType != tensor.F32:
		return nil, badInput("%s: --dtype bf16 takes float32 files, %s is %v", name, arg, h.DType)
	case dt == tensor.BF16:
		return toBF16(h), nil
	case dt != tensor.Invalid && h.DType != dt:
		return nil, badInput("%s: --dtype %v, but %s is %v", name, dt, arg, h.DType)
	}
	return h, nil
}

// settleNumbers replaces each number among operands, operand roles[i],
// with its value for the element type of the tensors among them, or dt
// where there is none (scalarValue).
func settleNumbers(name string, roles []string, operands []any, dt tensor.DType) error {
	for _, o := range operands {
		if h, ok := o.(*tensor.Host); ok {
			dt = h.DType
			break
		}
	}
	for i, o := range operands {
		n, ok := o.(number)
		if !ok {
			continue
		}
		v, err := scalarValue(name, roles[i], n, dt)
		if err != nil {
			return err
		}
		operands[i] = v
	}
	return nil
}

// scalarValue returns the Go value of n, operand role, to give ops for
// the element type dt, which then converts it exactly and refuses what dt
// cannot hold (300 for i8, 1.5 for i32, 1e39 for f32). What ops cannot
// see is refused here: a number beyond float64's range (1e400), and, for
// an integer or bool type, a fraction that float64 rounds to an integer
// (1e-400, 1.0000000000000000001). The message is the one ops gives.
func scalarValue(name, role string, n number, dt tensor.DType) (any, error) {
	v, _ := parseNumber(string(n))
	if f, isFloat := v.(float64); isFloat && !dt.IsFloat() {
		v = exactInteger(string(n), f)
	}
	if v == nil {
		return nil, badInput("%s: %s scalar %s cannot be represented as %v", name, role, n, dt)
	}
	return v, nil
}

// exactInteger returns what to give ops, for an integer or bool type, of
// the float literal s that parseNumber reads as f: f where it is s's
// exact value or s is infinite or NaN, for ops to judge (1.5, NaN, 1e20);
// where rounding to float64 changed s, the integer s denotes if int64 or
// uint64 holds it (18446744073709551615.0), else f, too large for every
// integer type; and nil where s is no integer (1e-400,
// 1.0000000000000000001) or has an exponent too large for big.Rat.
func exactInteger(s string, f float64) any {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	r, ok := new(big.Rat).SetString(s)
	switch {
	case !ok: // an exponent too large for big.Rat: 1e-9999999
		return nil
	case r.Cmp(new(big.Rat).SetFloat64(f)) == 0:
		return f
	case !r.IsInt():
		return nil
	case r.Num().IsInt64():
		return r.Num().Int64()
	case r.Num().IsUint64():
		return r.Num().Uint64()
	}
	return f
}

// parseNumber reads a number literal: an integer (decimal, 0x, 0o, 0b,
// underscores between digits) or a float (hexadecimal ones with a p
// exponent), "inf", "nan" and their signed forms included. Integers
// stay integers, so that large ones convert exactly; integers beyond 64
// bits become the nearest float64. It reports whether s is a number at
// all; v is nil for a number beyond float64's range (1e400, -0x1p2000),
// which no element type holds.
func parseNumber(s string) (v any, ok bool) {
	if i, err := strconv.ParseInt(s, 0, 64); err == nil {
		return i, true
	}
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return u, true
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err == nil:
		return f, true
	case errors.Is(err, strconv.ErrRange):
		return nil, true
	}
	if nan, ok := signedNaN(s); ok {
		return nan, true
	}
	if n, isInt := new(big.Int).SetString(s, 0); isInt { // 0x1_0000_0000_0000_0000
		f, _ := new(big.Float).SetInt(n).Float64()
		if math.IsInf(f, 0) {
			return nil, true
		}
		return f, true
	}
	return nil, false
}

// signedNaN reads "+nan" and "-nan", in any case, which ParseFloat does
// not: a NaN with that sign.
func signedNaN(s string) (float64, bool) {
	if len(s) != 4 || !strings.EqualFold(s[1:], "nan") {
		return 0, false
	}
	switch s[0] {
	case '+':
		return math.NaN(), true
	case '-':
		return math.Copysign(math.NaN(), -1), true
	}
	return 0, false
}

// parseNumberArgs is parseFlags for a command whose arguments may be
// negative numbers, which the flag package would take for flags: each
// one, unless it is a flag's value, is an argument.
func parseNumberArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	start := 0
	for i := 0; i <= len(args); i++ {
		if i < len(args) {
			_, isNumber := parseNumber(args[i])
			if !isNumber || !strings.HasPrefix(args[i], "-") || (i > 0 && takesValue(fs, args[i-1])) {
				continue
			}
		}
		p, err := parseFlags(fs, args[start:i])
		if err != nil {
			return nil, err
		}
		pos = append(pos, p...)
		if i < len(args) {
			pos = append(pos, args[i])
		}
		start = i + 1
	}
	return pos, nil
}

// takesValue reports whether arg is a flag of fs that takes the next
// argument as its value ("-o", not "-o=x" nor a bool flag).
func takesValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	if name == arg || strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}
