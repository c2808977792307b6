#version 450
#define TRIVIAL
#include "compare.glsl"
