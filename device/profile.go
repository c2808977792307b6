package device

import (
	"fmt"
	"strings"

	"github.com/vkops/vkops/vk"
)

// Profile is the kind of device that ops plan work for: a CPU driver
// such as lavapipe, which wants a few invocations that each do much, or
// a GPU, which wants tens of thousands that each do little. Every
// device-specific choice of the planners follows from it. Open resolves
// it once from Options.Profile, else $VKOPS_PROFILE, else the device's
// type, so that tests on lavapipe can run the plans a GPU would run.
type Profile uint8

const (
	// ProfileCPU is for drivers that run on the host's cores.
	ProfileCPU Profile = iota
	// ProfileGPU is for every other device.
	ProfileGPU
)

// String returns "cpu" or "gpu", as Options.Profile spells them.
func (p Profile) String() string {
	switch p {
	case ProfileCPU:
		return "cpu"
	case ProfileGPU:
		return "gpu"
	}
	return fmt.Sprintf("profile(%d)", uint8(p))
}

// parseProfile resolves Options.Profile for a device of type t.
func parseProfile(name string, t vk.DeviceType) (Profile, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "":
		if t == vk.TypeCPU {
			return ProfileCPU, nil
		}
		return ProfileGPU, nil
	case "cpu":
		return ProfileCPU, nil
	case "gpu":
		return ProfileGPU, nil
	}
	return 0, fmt.Errorf("device: Options.Profile (or $VKOPS_PROFILE) is %q: want cpu, gpu or empty", name)
}

// Profile returns the profile that ops plan for on d.
func (d *Device) Profile() Profile { return d.profile }
