package core

import (
	"fmt"
	"os"
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
	// ProfileAuto, in Options, means $VKOPS_PROFILE, else the device's
	// own kind. A Device's Profile is never ProfileAuto.
	ProfileAuto Profile = iota
	// ProfileCPU is for drivers that run on the host's cores.
	ProfileCPU
	// ProfileGPU is for every other device.
	ProfileGPU
)

// String returns "auto", "cpu" or "gpu", as $VKOPS_PROFILE spells them.
func (p Profile) String() string {
	switch p {
	case ProfileAuto:
		return "auto"
	case ProfileCPU:
		return "cpu"
	case ProfileGPU:
		return "gpu"
	}
	return fmt.Sprintf("profile(%d)", uint8(p))
}

// resolveProfile resolves Options.Profile for a device of type t: where
// it is ProfileAuto, $VKOPS_PROFILE, then t.
func resolveProfile(p Profile, t vk.DeviceType) (Profile, error) {
	if p == ProfileAuto {
		var err error
		if p, err = parseProfile(os.Getenv("VKOPS_PROFILE")); err != nil {
			return 0, err
		}
	}
	switch {
	case p == ProfileCPU || p == ProfileGPU:
		return p, nil
	case p != ProfileAuto:
		return 0, fmt.Errorf("device: Options.Profile is %v: want ProfileAuto, ProfileCPU or ProfileGPU", p)
	case t == vk.TypeCPU:
		return ProfileCPU, nil
	}
	return ProfileGPU, nil
}

// parseProfile reads $VKOPS_PROFILE.
func parseProfile(name string) (Profile, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "auto":
		return ProfileAuto, nil
	case "cpu":
		return ProfileCPU, nil
	case "gpu":
		return ProfileGPU, nil
	}
	return 0, fmt.Errorf("device: $VKOPS_PROFILE is %q: want cpu, gpu, auto or empty", name)
}

// Profile returns the profile that ops plan for on d.
func (d *Device) Profile() Profile {
	if d == nil {
		return ProfileAuto // no device has it
	}
	return d.profile
}
