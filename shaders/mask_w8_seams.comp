#version 450
#extension GL_GOOGLE_include_directive : require
// The row-seams module (MODE_SEAMS, see elementwise.glsl) of:
// The portable mask kernel for 8-byte inputs: storage buffers only (see
// mask.glsl).
#define W 8u
#define SEAMS
#include "mask.glsl"
