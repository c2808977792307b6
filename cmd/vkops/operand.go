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
Anything else is a .npy file. A number converts to the element type it is
given from its exact value: into an integer type it must be an integer in
range (300 is no i8, 1.5 no integer type), into a float type it rounds to
nearest even (0.1), and 1e400 fits none. 010 is ten, not octal.`
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

// scalarValue returns n, operand role, as a scalar of the element type
// dt, which ops then uses bit for bit. The conversion is exact, from the
// literal's exact value (parseNumber), with one rounding, to nearest
// even, into a float type; what dt cannot hold is refused, in a message
// that quotes n as written: 1e400 for every type, 300 for i8, 1.5 and
// 1e-400 for an integer type, 65520 for f16.
func scalarValue(name, role string, n number, dt tensor.DType) (any, error) {
	l, _ := parseNumber(string(n))
	s, ok := l.scalar(dt)
	if !ok {
		return nil, badInput("%s: %s scalar %s cannot be represented as %v", name, role, n, dt)
	}
	return s, nil
}

// A literal is the exact value of a number argument: a rational, an
// infinity or a NaN, with the sign it was written with, which a zero
// keeps in a float type (-0).
type literal struct {
	r        *big.Rat // the value, where finite and not huge
	neg      bool     // written with a leading '-'
	inf, nan bool
	huge     bool // beyond float64's range (1e400): no type holds it
}

// canonicalNaN is the quiet NaN with no payload, 0x7ff8000000000000,
// which tensor.NewScalar narrows to each float type's canonical NaN;
// math.NaN's has a payload bit.
var canonicalNaN = math.Float64frombits(0x7ff8 << 48)

// scalar returns l as a scalar of type dt, rounded to nearest even into
// a float type, and whether dt holds it: into an integer or bool type
// only an integer in range converts.
func (l literal) scalar(dt tensor.DType) (tensor.Scalar, bool) {
	var v any
	switch {
	case l.huge:
		return tensor.Scalar{}, false
	case l.nan:
		v = math.Copysign(canonicalNaN, sign(l.neg))
	case l.inf:
		v = math.Inf(int(sign(l.neg)))
	case dt.IsFloat():
		v = l.float64For(dt)
	case !l.r.IsInt():
		return tensor.Scalar{}, false
	case l.r.Num().IsInt64():
		v = l.r.Num().Int64()
	case l.r.Num().IsUint64():
		v = l.r.Num().Uint64()
	default:
		return tensor.Scalar{}, false
	}
	s, err := tensor.NewScalar(v, dt)
	return s, err == nil
}

// float64For returns the finite l as the float64 from which
// tensor.NewScalar rounds to the float type dt correctly: for f64, l
// rounded to nearest even; for the narrower types, l rounded to odd,
// whose sticky last bit keeps the second rounding, to at most 24 bits,
// from going wrong at a tie the first one made (2049.00000000000000001
// is no f16 tie; float64 alone rounds it to 2049, which is). A value
// below float64's normal range rounds to ±0 in those types either way.
func (l literal) float64For(dt tensor.DType) float64 {
	if l.r.Sign() == 0 {
		return math.Copysign(0, sign(l.neg))
	}
	prec := uint(53)
	if dt == tensor.F64 {
		prec = 64 // rounded to odd at 64 bits, Float64 then rounds once, subnormals included
	}
	f := new(big.Float).SetPrec(prec).SetMode(big.ToZero).SetRat(l.r)
	if f.Acc() != big.Exact {
		// Round to odd: the truncated significand with its last bit set.
		m := new(big.Float)
		exp := f.MantExp(m)
		i, _ := m.SetMantExp(m, int(prec)).Int(nil)
		neg := i.Sign() < 0
		i.Abs(i).SetBit(i, 0, 1)
		if neg {
			i.Neg(i)
		}
		f.SetInt(i).SetMantExp(f, exp-int(prec))
	}
	v, _ := f.Float64()
	return v
}

// boundScalar is scalar for a bound of clamp, as ops.Clamp converts a
// plain number: into an integer type a fractional min rounds up to the
// next integer and a fractional max down (Clamp-1), from the literal's
// exact value (1e-400 is a fraction, 2.9999999999999999999 is below 3).
func (l literal) boundScalar(dt tensor.DType, min bool) (tensor.Scalar, bool) {
	if l.r == nil || dt.IsFloat() || dt == tensor.Bool || l.r.IsInt() {
		return l.scalar(dt)
	}
	q := new(big.Int).Div(l.r.Num(), l.r.Denom()) // Euclidean, so floor: the denominator is positive
	if min {
		q.Add(q, big.NewInt(1))
	}
	return literal{r: new(big.Rat).SetInt(q)}.scalar(dt)
}

// sign returns -1 for neg, else 1.
func sign(neg bool) float64 {
	if neg {
		return -1
	}
	return 1
}

// tinyRat stands for a literal whose exponent is beyond big.Rat's
// (1e-9999999), which is nonzero but far below every type's least
// subnormal: it converts as that literal does, to ±0 in a float type, to
// no integer, and as a clamp bound to 1 or 0 (min), 0 or -1 (max).
var tinyRat = new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 2000))

// parseNumber reads a number literal exactly: an integer (decimal, 0x,
// 0o, 0b, underscores between digits) or a float (hexadecimal ones with
// a p exponent), "inf", "nan" and their signed forms included. It
// reports whether s is a number at all; a number beyond float64's range
// (1e400, -0x1p2000) is huge, and no element type holds it.
func parseNumber(s string) (l literal, ok bool) {
	l.neg = strings.HasPrefix(s, "-")
	if n, isInt := parseInteger(s); isInt { // 42, -0x7f, 0x1_0000_0000_0000_0000, 010
		l.r = new(big.Rat).SetInt(n)
		f, _ := l.r.Float64()
		l.huge = math.IsInf(f, 0)
		return l, true
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		l.huge = true
		return l, true
	case err != nil:
		l.nan = signedNaN(s)
		return l, l.nan
	case math.IsNaN(f):
		l.nan = true
		return l, true
	case math.IsInf(f, 0):
		l.inf = true
		return l, true
	}
	r, isRat := new(big.Rat).SetString(s)
	switch {
	case isRat:
		l.r = r
	case zeroDigits(s):
		l.r = new(big.Rat)
	default: // 1e-9999999: ParseFloat reads 0, and the digits say it is not
		l.r = new(big.Rat).Set(tinyRat)
		if l.neg {
			l.r.Neg(l.r)
		}
	}
	return l, true
}

// parseInteger reads an integer literal as Go's syntax does, but for a
// leading 0 before a digit, which Go reads as octal and numpy and
// Python's float() as decimal, as 010.0 is here: 010 is ten.
func parseInteger(s string) (*big.Int, bool) {
	digits := strings.TrimLeft(s, "+-")
	if len(digits) < 2 || digits[0] != '0' || !strings.ContainsRune("0123456789_", rune(digits[1])) {
		return new(big.Int).SetString(s, 0)
	}
	// Underscores stand between digits only, as in Go.
	if strings.HasSuffix(digits, "_") || strings.Contains(digits, "__") {
		return nil, false
	}
	return new(big.Int).SetString(s[:len(s)-len(digits)]+strings.ReplaceAll(digits, "_", ""), 10)
}

// zeroDigits reports whether the float literal s has only zeros before
// its exponent (0e-9999999, -0x0.0p-99999999).
func zeroDigits(s string) bool {
	m, exp := strings.TrimLeft(s, "+-"), "eE"
	if len(m) > 1 && m[0] == '0' && (m[1] == 'x' || m[1] == 'X') {
		m, exp = m[2:], "pP"
	}
	if i := strings.IndexAny(m, exp); i >= 0 {
		m = m[:i]
	}
	return strings.Trim(m, "0._") == ""
}

// signedNaN reports whether s is "+nan" or "-nan", in any case, which
// ParseFloat does not read.
func signedNaN(s string) bool {
	return len(s) == 4 && (s[0] == '+' || s[0] == '-') && strings.EqualFold(s[1:], "nan")
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
