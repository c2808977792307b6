// Package cpuref holds plain CPU implementations of the operations in
// docs/specs.md, written to be the test oracle for the GPU kernels rather
// than to be fast.
//
// Every function checks its inputs in full and returns an error, never a
// panic, for anything the spec rejects. The loops are deliberately naive:
// for each element they compute its multi-index and map it to each
// operand's linear index through tensor.BroadcastStrides, so that the
// code can be checked against the spec by reading it. There are no
// goroutines and no fast paths.
//
// Select and Where move raw element bytes: they never convert, so NaN
// payloads, negative zeros and every other bit pattern come through
// unchanged, bools included. Bool tensors hold one byte per element; any
// nonzero byte is read as true, and the bools this package computes (the
// mask ops, the reductions) are 0 or 1.
//
// The mask ops (docs/specs.md#mask-ops) read elements as the values they
// are: f16, bf16 and f32 widen exactly to float64 and compare with Go's
// operators, which follow IEEE 754; integers compare as int64 or uint64.
package cpuref
