#version 450
#extension GL_GOOGLE_include_directive : require
// The portable mask kernel: storage buffers only (see mask.glsl).
#include "mask.glsl"
