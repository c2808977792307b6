#version 450
#include "compare.glsl"
