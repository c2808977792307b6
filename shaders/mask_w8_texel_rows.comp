#version 450
#extension GL_GOOGLE_include_directive : require
// The blocks-of-whole-rows module (MODE_ROWS, see elementwise.glsl) of:
// Mask ops on 8-byte inputs with texel-buffer loads (see mask.glsl): a
// and b are rgba32ui storage texel buffers.
#define W 8u
#define TEXEL_LOADS
#define ROWS
#include "mask.glsl"
