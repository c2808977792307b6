#version 450
#extension GL_GOOGLE_include_directive : require
// Mask ops with texel-buffer loads (see mask.glsl): a and b are rgba32ui
// storage texel buffers.
#define TEXEL_LOADS
#include "mask.glsl"
