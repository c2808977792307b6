#version 450
#extension GL_GOOGLE_include_directive : require
// The portable mask kernel for 4-byte inputs: storage buffers only (see
// mask.glsl).
#define W 4u
#include "mask.glsl"
