#version 450
// reduce_inner.glsl, portable: storage-buffer loads, nothing optional.
#extension GL_GOOGLE_include_directive : require
#include "reduce_inner.glsl"
