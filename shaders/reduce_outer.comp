#version 450
// reduce_outer.glsl, portable: storage-buffer loads, nothing optional.
#extension GL_GOOGLE_include_directive : require
#include "reduce_outer.glsl"
