#version 450
#extension GL_GOOGLE_include_directive : require
// The blocks-of-whole-rows module (MODE_ROWS, see elementwise.glsl) of:
// Select with texel-buffer loads (see select.glsl): every binding but the
// output is an rgba32ui storage texel buffer.
#define TEXEL_LOADS
#define ROWS
#include "select.glsl"
