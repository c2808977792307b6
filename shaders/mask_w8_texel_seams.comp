#version 450
#extension GL_GOOGLE_include_directive : require
// The row-seams module (MODE_SEAMS, see elementwise.glsl) of:
// Mask ops on 8-byte inputs with texel-buffer loads (see mask.glsl): a
// and b are rgba32ui storage texel buffers.
#define W 8u
#define TEXEL_LOADS
#define SEAMS
#include "mask.glsl"
