#version 450
// reduce_inner.glsl with texel-buffer loads, and subgroupOr before the
// atomics of split rows.
#extension GL_GOOGLE_include_directive : require
#define TEXEL
#define SUBGROUP
#include "reduce_inner.glsl"
