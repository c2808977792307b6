#version 450
#extension GL_GOOGLE_include_directive : require
// The portable expand kernel: storage buffers only (see expand.glsl).
#include "expand.glsl"
