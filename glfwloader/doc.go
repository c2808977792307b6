// Package glfwloader lets an application that already uses GLFW hand
// GLFW's Vulkan loader to vkops, so both share one loader. It is built
// only with the build tag glfw (go build -tags glfw); the default build
// of vkops never imports GLFW.
//
// GLFW cannot initialise without a display: this is for programs that
// own a window, not for headless compute, where vkops loads
// libvulkan.so.1 itself.
package glfwloader
