#version 450
#extension GL_GOOGLE_include_directive : require
// The portable mask kernel for 2-byte inputs: storage buffers only (see
// mask.glsl).
#define W 2u
#include "mask.glsl"
