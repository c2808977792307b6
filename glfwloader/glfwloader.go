//go:build glfw

package glfwloader

import (
	"errors"

	"github.com/go-gl/glfw/v3.3/glfw"
	"github.com/vkops/vkops/vk"
)

// Use hands GLFW's vkGetInstanceProcAddr to vkops. Call it after
// glfw.Init and before the first device.Open.
func Use() error {
	if !glfw.VulkanSupported() {
		return errors.New("glfwloader: GLFW found no Vulkan loader")
	}
	return vk.SetLoader(glfw.GetVulkanGetInstanceProcAddress())
}
