#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// The row-seams module (MODE_SEAMS, see elementwise.glsl) of:
// Select with texel-buffer loads and 64-bit stores (see select.glsl):
// needs rgba32ui storage texel buffers and shaderInt64.
#define TEXEL_LOADS
#define STORE64
#define SEAMS
#include "select.glsl"
