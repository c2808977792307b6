#version 450
#extension GL_GOOGLE_include_directive : require
// Select with texel-buffer loads (see select.glsl): every binding but the
// output is an rgba32ui storage texel buffer.
#define TEXEL_LOADS
#include "select.glsl"
