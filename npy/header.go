package npy

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vkops/vkops/tensor"
)

// header is what an .npy header dict says about the array that follows.
type header struct {
	dtype   tensor.DType
	swap    bool // the data is big-endian and must be byte-swapped
	fortran bool
	shape   tensor.Shape
}

// The header dict is a Python literal that numpy reads with
// ast.literal_eval. Rather than building a tree of Python values (whose
// nodes would cost far more memory than the bytes that describe them, and
// the reader must stay within a small multiple of its input), the parser
// checks the syntax of each value and remembers where it lies; the three
// values numpy defines are then decoded from their spans.

// maxDepth bounds nesting of tuples, lists and dicts. Real headers nest a
// few levels at most (structured dtypes); the bound keeps a hostile header
// from recursing deeply.
const maxDepth = 32

// kind is the Python type of a literal.
type kind uint8

const (
	kindStr kind = iota + 1
	kindInt
	kindBool
	kindNone
	kindTuple
	kindList
	kindDict
)

// span is where a value lies in the header, and its type.
type span struct {
	kind       kind
	start, end int
	set        bool
}

type parser struct {
	b   []byte
	pos int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("npy: malformed header at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

// space skips what Python's tokenizer skips between the tokens of a
// bracketed expression.
func (p *parser) space() {
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	if p.pos < len(p.b) {
		return p.b[p.pos]
	}
	return 0
}

// parseHeader decodes the header dict of an .npy file.
func parseHeader(b []byte) (*header, error) {
	p := &parser{b: b}
	var keys headerKeys
	if err := p.headerDict(&keys); err != nil {
		return nil, err
	}
	return keys.decode(b)
}

// headerKeys are where the values of a header's three keys lie.
type headerKeys struct{ descr, fortran, shape span }

// headerDict reads the header's dict, the whole of p, into k: each of
// its three keys once, and no other.
func (p *parser) headerDict(k *headerKeys) error {
	p.space()
	if p.peek() != '{' {
		return p.errorf("not a dict")
	}
	p.pos++
	p.space()
	if p.peek() == '}' {
		p.pos++
	} else {
		for more := true; more; {
			var err error
			if more, err = p.entry(k); err != nil {
				return err
			}
		}
	}
	p.space()
	if p.pos != len(p.b) {
		return p.errorf("text after the dict")
	}
	for _, s := range []struct {
		name string
		s    span
	}{{"descr", k.descr}, {"fortran_order", k.fortran}, {"shape", k.shape}} {
		if !s.s.set {
			return fmt.Errorf("npy: header is missing key %q", s.name)
		}
	}
	return nil
}

// entry reads one key and its value into k, and the ',' or '}' after
// them; more reports a ',' not followed by '}'.
func (p *parser) entry(k *headerKeys) (more bool, err error) {
	if p.pos >= len(p.b) {
		return false, p.errorf("unexpected end")
	}
	if c := p.peek(); c != '\'' && c != '"' {
		return false, p.errorf("dict key is not a string")
	}
	key, err := p.str()
	if err != nil {
		return false, err
	}
	p.space()
	if p.peek() != ':' {
		return false, p.errorf("want ':' after key %s", excerpt([]byte(key)))
	}
	p.pos++
	p.space()
	start := p.pos
	kind, err := p.value(1)
	if err != nil {
		return false, err
	}
	dst, err := k.slot(key)
	if err != nil {
		return false, err
	}
	*dst = span{kind: kind, start: start, end: p.pos, set: true}
	p.space()
	switch p.peek() {
	case ',':
		p.pos++
		p.space()
		if p.peek() == '}' {
			p.pos++
			return false, nil
		}
		return true, nil
	case '}':
		p.pos++
		return false, nil
	}
	return false, p.errorf("want ',' or '}' after the value of %q", key) // a known key
}

// slot returns where the value of key goes.
func (k *headerKeys) slot(key string) (*span, error) {
	var dst *span
	switch key {
	case "descr":
		dst = &k.descr
	case "fortran_order":
		dst = &k.fortran
	case "shape":
		dst = &k.shape
	default:
		return nil, fmt.Errorf("npy: header has unexpected key %s", excerpt([]byte(key)))
	}
	if dst.set {
		// Python would keep the last value; numpy never writes a key
		// twice, so a repeat means the file is not what it claims.
		return nil, fmt.Errorf("npy: header repeats key %q", key)
	}
	return dst, nil
}

// decode decodes the values of k's keys, found in b.
func (k *headerKeys) decode(b []byte) (*header, error) {
	h := new(header)
	var err error
	if h.dtype, h.swap, err = decodeDescr(b, k.descr); err != nil {
		return nil, err
	}
	f := k.fortran
	switch text := unparen(b[f.start:f.end]); {
	case f.kind == kindBool && string(text) == "True":
		h.fortran = true
	case f.kind == kindBool && string(text) == "False":
	default:
		return nil, fmt.Errorf("npy: header 'fortran_order' is not True or False: %s", excerpt(b[f.start:f.end]))
	}
	if h.shape, err = decodeShape(b[k.shape.start:k.shape.end], k.shape.kind); err != nil {
		return nil, err
	}
	return h, nil
}

// value checks the syntax of one literal at p.pos and returns its type;
// a parenthesised value without a comma has the type of what it holds, as
// in Python.
func (p *parser) value(depth int) (kind, error) {
	if depth > maxDepth {
		return 0, p.errorf("nested more than %d deep", maxDepth)
	}
	switch c := p.peek(); {
	case c == '\'' || c == '"':
		_, err := p.str()
		return kindStr, err
	case c == '-' || c == '+' || isDigit(c):
		_, err := p.int()
		return kindInt, err
	case c == '(' || c == '[':
		return p.seq(depth)
	case c == '{':
		return kindDict, p.dict(depth)
	case isLetter(c):
		start := p.pos
		for p.pos < len(p.b) && (isLetter(p.b[p.pos]) || isDigit(p.b[p.pos])) {
			p.pos++
		}
		switch id := string(p.b[start:p.pos]); id {
		case "True", "False":
			return kindBool, nil
		case "None":
			return kindNone, nil
		default:
			p.pos = start
			return 0, p.errorf("name %q is not a literal", id)
		}
	case p.pos >= len(p.b):
		return 0, p.errorf("unexpected end")
	default:
		return 0, p.errorf("unexpected %q", c)
	}
}

// seq checks a tuple or list.
func (p *parser) seq(depth int) (kind, error) {
	open := p.b[p.pos]
	closer, k := byte(')'), kindTuple
	if open == '[' {
		closer, k = ']', kindList
	}
	p.pos++
	n, comma := 0, false
	var inner kind
	for {
		p.space()
		if p.peek() == closer {
			p.pos++
			break
		}
		var err error
		if inner, err = p.value(depth + 1); err != nil {
			return 0, err
		}
		n++
		p.space()
		if p.peek() == ',' {
			p.pos++
			comma = true
			continue
		}
		if p.peek() != closer {
			return 0, p.errorf("want ',' or %q", closer)
		}
		p.pos++
		break
	}
	if k == kindTuple && n == 1 && !comma {
		return inner, nil // (x) is x, not a tuple
	}
	return k, nil
}

// dict checks a dict nested in a value.
func (p *parser) dict(depth int) error {
	p.pos++
	for {
		p.space()
		if p.peek() == '}' {
			p.pos++
			return nil
		}
		if _, err := p.value(depth + 1); err != nil {
			return err
		}
		p.space()
		if p.peek() != ':' {
			return p.errorf("want ':' in dict")
		}
		p.pos++
		p.space()
		if _, err := p.value(depth + 1); err != nil {
			return err
		}
		p.space()
		switch p.peek() {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return nil
		default:
			return p.errorf("want ',' or '}' in dict")
		}
	}
}

// int checks an integer literal and returns it, sign included, without
// Python 2's long suffix (numpy still reads headers with "3L").
func (p *parser) int() (string, error) {
	start := p.pos
	var sb strings.Builder
	if c := p.peek(); c == '-' || c == '+' {
		sb.WriteByte(c)
		p.pos++
		p.space() // "- 3" is a unary minus applied to 3
	}
	digits := p.pos
	for p.pos < len(p.b) && isDigit(p.b[p.pos]) {
		p.pos++
	}
	if p.pos == digits {
		p.pos = start
		return "", p.errorf("want a number")
	}
	sb.Write(p.b[digits:p.pos])
	if c := p.peek(); c == 'L' || c == 'l' {
		p.pos++
	}
	if c := p.peek(); isLetter(c) || isDigit(c) || c == '.' {
		p.pos = start
		return "", p.errorf("number is not an integer")
	}
	return sb.String(), nil
}

// str checks a quoted string and returns its value. Only the escapes that
// matter for telling what a string says are decoded; an unknown escape
// stays as written, as Python leaves it.
func (p *parser) str() (string, error) {
	start := p.pos
	q := p.b[p.pos]
	p.pos++
	var sb strings.Builder
	for {
		if p.pos >= len(p.b) || p.b[p.pos] == '\n' {
			p.pos = start
			return "", p.errorf("unterminated string")
		}
		c := p.b[p.pos]
		p.pos++
		switch {
		case c == q:
			return sb.String(), nil
		case c != '\\':
			sb.WriteByte(c)
			continue
		}
		if p.pos >= len(p.b) {
			p.pos = start
			return "", p.errorf("unterminated string")
		}
		e := p.b[p.pos]
		p.pos++
		switch e {
		case '\n': // line continuation
		case '\\', '\'', '"':
			sb.WriteByte(e)
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for i := 0; i < 2 && p.pos < len(p.b) && p.b[p.pos] >= '0' && p.b[p.pos] <= '7'; i++ {
				v = v*8 + int(p.b[p.pos]-'0')
				p.pos++
			}
			sb.WriteRune(rune(v))
		case 'x':
			if p.pos+2 > len(p.b) {
				p.pos = start
				return "", p.errorf("truncated \\x escape")
			}
			v, err := strconv.ParseUint(string(p.b[p.pos:p.pos+2]), 16, 8)
			if err != nil {
				return "", p.errorf("bad \\x escape")
			}
			p.pos += 2
			sb.WriteRune(rune(v))
		default:
			sb.WriteByte('\\')
			sb.WriteByte(e)
		}
	}
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' }

// unparen strips the parentheses around a scalar literal's text: for
// Python, ('<f4') is just '<f4'.
func unparen(b []byte) []byte {
	b = bytes.TrimSpace(b)
	for len(b) >= 2 && b[0] == '(' && b[len(b)-1] == ')' {
		b = bytes.TrimSpace(b[1 : len(b)-1])
	}
	return b
}

// decodeShape decodes the value of 'shape', a tuple of integers. Its span
// has already been checked as a literal, so only its form matters here.
func decodeShape(b []byte, k kind) (tensor.Shape, error) {
	bad := func() error {
		return fmt.Errorf("npy: header 'shape' is not a tuple of integers: %s", excerpt(b))
	}
	b = bytes.TrimSpace(b)
	if k != kindTuple || len(b) < 2 || b[0] != '(' {
		return nil, bad()
	}
	// Strip redundant parentheses: ((2, 3)) is the tuple (2, 3), while
	// ((2, 3),) is a tuple of tuples.
	for {
		inner := bytes.TrimSpace(b[1 : len(b)-1])
		p := &parser{b: inner}
		if len(inner) == 0 || inner[0] != '(' {
			break
		}
		if k, err := p.value(1); err != nil || k != kindTuple || p.pos != len(inner) {
			break
		}
		b = inner
	}
	// Every dimension takes at least two bytes ("1,"), so this bounds the
	// allocation by the header's size, not by anything it claims.
	shape := make(tensor.Shape, 0, bytes.Count(b, []byte{','})+1)
	p := &parser{b: b, pos: 1}
	for {
		p.space()
		if p.peek() == ')' {
			break
		}
		if c := p.peek(); c != '-' && c != '+' && !isDigit(c) {
			return nil, bad()
		}
		s, err := p.int()
		if err != nil {
			return nil, bad()
		}
		d, err := strconv.ParseInt(s, 10, strconv.IntSize)
		if err != nil {
			return nil, fmt.Errorf("npy: shape dimension %s is out of range", s)
		}
		if d < 0 {
			return nil, fmt.Errorf("npy: shape has a negative dimension (%d)", d)
		}
		shape = append(shape, int(d))
		p.space()
		if p.peek() == ',' {
			p.pos++
		}
	}
	if err := shape.Validate(); err != nil {
		return nil, fmt.Errorf("npy: %w", err)
	}
	return shape, nil
}

// The element types .npy files carry, by numpy's type code without the
// byte-order character.
var codes = []struct {
	code string
	dt   tensor.DType
}{
	{"b1", tensor.Bool},
	{"i1", tensor.I8},
	{"u1", tensor.U8},
	{"i2", tensor.I16},
	{"u2", tensor.U16},
	{"i4", tensor.I32},
	{"u4", tensor.U32},
	{"i8", tensor.I64},
	{"u8", tensor.U64},
	{"f2", tensor.F16},
	{"f4", tensor.F32},
	{"f8", tensor.F64},
}

// DescrOf returns the numpy type descriptor that numpy itself writes for
// dt: "|b1", "|i1", "|u1", "<i2", ..., "<f8". BF16 has no numpy
// descriptor, so it is an error, as is an invalid type.
func DescrOf(dt tensor.DType) (string, error) {
	if dt == tensor.BF16 {
		return "", fmt.Errorf("npy: bfloat16 cannot be stored in .npy (numpy has no bfloat16); convert to f32 first")
	}
	for _, c := range codes {
		if c.dt == dt {
			if dt.Size() == 1 {
				return "|" + c.code, nil
			}
			return "<" + c.code, nil
		}
	}
	return "", fmt.Errorf("npy: no .npy type for element type %v", dt)
}

// decodeDescr decodes the value of 'descr'. numpy writes a string for a
// plain dtype, a list for a structured one and a tuple for a subarray.
func decodeDescr(b []byte, s span) (tensor.DType, bool, error) {
	text := b[s.start:s.end]
	switch s.kind {
	case kindStr:
	case kindList:
		return 0, false, fmt.Errorf("npy: unsupported structured dtype %s", excerpt(text))
	case kindTuple:
		return 0, false, fmt.Errorf("npy: unsupported subarray dtype %s", excerpt(text))
	default:
		return 0, false, fmt.Errorf("npy: header 'descr' is not a dtype: %s", excerpt(text))
	}
	p := &parser{b: unparen(text)}
	d, err := p.str()
	if err != nil {
		return 0, false, err
	}
	dt, swap, err := parseDescr(d)
	return dt, swap, err
}

// parseDescr decodes a dtype string such as "<f4". '<' is little-endian
// and '>' big-endian; '=' (native) and '|' (not applicable) mean the
// reader's own order in numpy, and every host this package serves is
// little-endian.
func parseDescr(d string) (dt tensor.DType, swap bool, err error) {
	code := d
	if code != "" && strings.IndexByte("<>=|", code[0]) >= 0 {
		swap = code[0] == '>'
		code = code[1:]
	}
	if code == "?" { // numpy's one-character code for bool
		code = "b1"
	}
	for _, c := range codes {
		if c.code == code {
			return c.dt, swap && c.dt.Size() > 1, nil
		}
	}
	what := "unknown type"
	if code != "" {
		switch code[0] {
		case 'U':
			what = "unicode string"
		case 'S', 'a':
			what = "byte string"
		case 'O':
			what = "Python object"
		case 'V':
			what = "void (raw bytes)"
		case 'c':
			what = "complex"
		case 'M':
			what = "datetime"
		case 'm':
			what = "timedelta"
		case 'f':
			what = "float of that size"
		case 'i', 'u':
			what = "integer of that size"
		}
	}
	return 0, false, fmt.Errorf("npy: unsupported dtype %s (%s)", excerpt([]byte(d)), what)
}

// excerpt quotes at most a line's worth of header text for an error.
func excerpt(b []byte) string {
	const limit = 60
	if len(b) > limit {
		return strconv.Quote(string(b[:limit])) + "..."
	}
	return strconv.Quote(string(b))
}

// validHeaderText reports whether a version 3.0 header is UTF-8, which is
// what that version promises (1.0 and 2.0 are latin-1, where any byte is).
func validHeaderText(b []byte, major byte) bool {
	return major < 3 || utf8.Valid(b)
}

// growthAxisMaxDigits is numpy's GROWTH_AXIS_MAX_DIGITS: numpy leaves room
// after the dict for the outermost dimension to grow to 21 digits, so that
// appending rows can rewrite the header in place.
const growthAxisMaxDigits = 21

// align is numpy's ARRAY_ALIGN: the data starts on a 64-byte boundary.
const align = 64

// formatHeader returns the preamble and header numpy writes for a C-order
// array: the magic, the version, the header length and the padded dict.
func formatHeader(descr string, shape tensor.Shape) ([]byte, error) {
	var dict strings.Builder
	dict.WriteString("{'descr': '")
	dict.WriteString(descr)
	dict.WriteString("', 'fortran_order': False, 'shape': (")
	for i, d := range shape {
		if i > 0 {
			dict.WriteString(", ")
		}
		dict.WriteString(strconv.Itoa(d))
	}
	if len(shape) == 1 {
		dict.WriteByte(',') // Python's repr of a 1-tuple
	}
	dict.WriteString("), }")
	if len(shape) > 0 {
		dict.WriteString(strings.Repeat(" ", max(0, growthAxisMaxDigits-len(strconv.Itoa(shape[0])))))
	}
	// numpy tries version 1.0 first and moves to 2.0 only when the header
	// length no longer fits its 16-bit field.
	hlen := dict.Len() + 1 // the final '\n'
	major, lenSize := byte(1), 2
	total := hlen + align - (len(magic)+2+lenSize+hlen)%align
	if total > 0xffff {
		major, lenSize = 2, 4
		total = hlen + align - (len(magic)+2+lenSize+hlen)%align
		if uint64(total) > 0xffffffff {
			return nil, fmt.Errorf("npy: header for shape of rank %d is too long", len(shape))
		}
	}
	out := make([]byte, 0, len(magic)+2+lenSize+total)
	out = append(out, magic...)
	out = append(out, major, 0)
	for i := range lenSize {
		out = append(out, byte(total>>(8*i)))
	}
	out = append(out, dict.String()...)
	for len(out) < cap(out)-1 {
		out = append(out, ' ')
	}
	return append(out, '\n'), nil
}
