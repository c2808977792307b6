#version 450
#extension GL_GOOGLE_include_directive : require
// The blocks-of-whole-rows module (MODE_ROWS, see elementwise.glsl) of:
// The portable select kernel: storage buffers only (see select.glsl).
#define ROWS
#include "select.glsl"
