#version 450
#extension GL_GOOGLE_include_directive : require
// The row-seams module (MODE_SEAMS, see elementwise.glsl) of:
// Select with texel-buffer loads (see select.glsl): every binding but the
// output is an rgba32ui storage texel buffer.
#define TEXEL_LOADS
#define SEAMS
#include "select.glsl"
