// Package tensor holds the host-side facts about tensors that every other
// package shares: element types, shapes, numpy broadcasting and host
// buffers. It knows nothing about devices.
package tensor

import (
	"fmt"
	"strings"
)

// DType is an element type.
type DType uint8

// The element types of the ops (docs/specs.md#element-types).
const (
	Invalid DType = iota
	Bool
	I8
	U8
	I16
	U16
	I32
	U32
	I64
	U64
	F16
	BF16
	F32
	F64
)

var dtypeInfo = [...]struct {
	name string
	size int
}{
	Invalid: {"invalid", 0},
	Bool:    {"bool", 1},
	I8:      {"i8", 1},
	U8:      {"u8", 1},
	I16:     {"i16", 2},
	U16:     {"u16", 2},
	I32:     {"i32", 4},
	U32:     {"u32", 4},
	I64:     {"i64", 8},
	U64:     {"u64", 8},
	F16:     {"f16", 2},
	BF16:    {"bf16", 2},
	F32:     {"f32", 4},
	F64:     {"f64", 8},
}

// DTypes lists every valid element type, narrowest first within each kind.
var DTypes = []DType{Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64}

// String returns the short name: "bool", "i8", ..., "f64".
func (d DType) String() string {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size returns the size of one element in bytes, 0 for an invalid type.
func (d DType) Size() int {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].size
	}
	return 0
}

// Valid reports whether d is one of DTypes.
func (d DType) Valid() bool { return d > Invalid && int(d) < len(dtypeInfo) }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == F16 || d == BF16 || d == F32 || d == F64 }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool { return d == I8 || d == I16 || d == I32 || d == I64 }

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d == U8 || d == U16 || d == U32 || d == U64 }

// ParseDType accepts the short names ("f32") and the usual long ones
// ("float32", "int8", "uint16", "bfloat16", "float16", "half").
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "bool", "b1":
		return Bool, nil
	case "i8", "int8":
		return I8, nil
	case "u8", "uint8":
		return U8, nil
	case "i16", "int16":
		return I16, nil
	case "u16", "uint16":
		return U16, nil
	case "i32", "int32":
		return I32, nil
	case "u32", "uint32":
		return U32, nil
	case "i64", "int64":
		return I64, nil
	case "u64", "uint64":
		return U64, nil
	case "f16", "float16", "half":
		return F16, nil
	case "bf16", "bfloat16":
		return BF16, nil
	case "f32", "float32", "float":
		return F32, nil
	case "f64", "float64", "double":
		return F64, nil
	}
	return Invalid, fmt.Errorf("unknown element type %q (want one of bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64)", s)
}
