#version 450
#extension GL_GOOGLE_include_directive : require
// The portable select kernel: storage buffers only (see select.glsl).
#include "select.glsl"
