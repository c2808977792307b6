#version 450
#extension GL_GOOGLE_include_directive : require
// The portable mask kernel for 8-byte inputs: storage buffers only (see
// mask.glsl).
#define W 8u
#include "mask.glsl"
