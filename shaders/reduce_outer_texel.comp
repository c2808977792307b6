#version 450
// reduce_outer.glsl reading its input through an rgba32ui texel buffer.
#extension GL_GOOGLE_include_directive : require
#define TEXEL
#include "reduce_outer.glsl"
