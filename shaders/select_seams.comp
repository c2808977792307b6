#version 450
#extension GL_GOOGLE_include_directive : require
// The row-seams module (MODE_SEAMS, see elementwise.glsl) of:
// The portable select kernel: storage buffers only (see select.glsl).
#define SEAMS
#include "select.glsl"
