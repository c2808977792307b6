// Package vk is the only package of vkops that touches Vulkan: it wraps the
// Go binding github.com/vulkan-go/vulkan (Vulkan 1.0 entry points) and a
// small C shim for the 1.1+ queries. Above it, nothing imports the binding
// or uses cgo.
package vk

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"strings"
	"sync"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// ErrNoVulkan reports that no Vulkan loader or no Vulkan device is present.
var ErrNoVulkan = errors.New("no Vulkan device")

var loader struct {
	once sync.Once
	gipa unsafe.Pointer
	err  error
}

// SetLoader hands vk a vkGetInstanceProcAddr obtained elsewhere (GLFW,
// for an application that already loaded Vulkan). It must come before the
// first NewInstance: once a loader is in use it cannot change, and
// SetLoader reports so.
func SetLoader(getInstanceProcAddr unsafe.Pointer) error {
	set := false
	loader.once.Do(func() {
		set = true
		loader.gipa, loader.err = getInstanceProcAddr, initLoader(getInstanceProcAddr)
	})
	if !set {
		return errors.New("vk: a Vulkan loader is already in use; set it before opening a device")
	}
	return loader.err
}

func load() (unsafe.Pointer, error) {
	loader.once.Do(func() {
		var msg [256]C.char
		p := C.vkops_load(&msg[0])
		if p == nil {
			loader.err = fmt.Errorf("%w: cannot load the Vulkan loader: %s", ErrNoVulkan, C.GoString(&msg[0]))
			return
		}
		loader.gipa, loader.err = p, initLoader(p)
	})
	return loader.gipa, loader.err
}

func initLoader(p unsafe.Pointer) error {
	if p == nil {
		return fmt.Errorf("%w: nil vkGetInstanceProcAddr", ErrNoVulkan)
	}
	vk.SetGetInstanceProcAddr(p)
	if err := vk.Init(); err != nil {
		return fmt.Errorf("%w: %v", ErrNoVulkan, err)
	}
	return nil
}

// Error is a failed Vulkan call: the call's name and its VkResult.
type Error struct {
	Call   string
	Result vk.Result
}

// Error names the call and its VkResult.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Call, resultName(e.Result)) }

// OutOfMemory reports whether the call failed for lack of host or device memory.
func (e *Error) OutOfMemory() bool {
	return e.Result == vk.ErrorOutOfDeviceMemory || e.Result == vk.ErrorOutOfHostMemory
}

// DeviceLost reports whether the call failed with VK_ERROR_DEVICE_LOST.
func (e *Error) DeviceLost() bool { return e.Result == vk.ErrorDeviceLost }

func check(call string, r vk.Result) error {
	if r == vk.Success {
		return nil
	}
	return &Error{Call: call, Result: r}
}

func resultName(r vk.Result) string {
	switch r {
	case vk.ErrorOutOfHostMemory:
		return "VK_ERROR_OUT_OF_HOST_MEMORY"
	case vk.ErrorOutOfDeviceMemory:
		return "VK_ERROR_OUT_OF_DEVICE_MEMORY"
	case vk.ErrorInitializationFailed:
		return "VK_ERROR_INITIALIZATION_FAILED"
	case vk.ErrorDeviceLost:
		return "VK_ERROR_DEVICE_LOST"
	case vk.ErrorLayerNotPresent:
		return "VK_ERROR_LAYER_NOT_PRESENT"
	case vk.ErrorExtensionNotPresent:
		return "VK_ERROR_EXTENSION_NOT_PRESENT"
	case vk.ErrorFeatureNotPresent:
		return "VK_ERROR_FEATURE_NOT_PRESENT"
	case vk.ErrorIncompatibleDriver:
		return "VK_ERROR_INCOMPATIBLE_DRIVER"
	case vk.ErrorTooManyObjects:
		return "VK_ERROR_TOO_MANY_OBJECTS"
	case vk.ErrorFragmentedPool:
		return "VK_ERROR_FRAGMENTED_POOL"
	case vk.Timeout:
		return "VK_TIMEOUT"
	case vk.NotReady:
		return "VK_NOT_READY"
	case vk.Incomplete:
		return "VK_INCOMPLETE"
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

// InstanceOptions configure NewInstance.
type InstanceOptions struct {
	// Validation enables VK_LAYER_KHRONOS_validation and reports each of
	// its warnings and errors to OnMessage.
	Validation bool
	// OnMessage receives validation messages; it may be called from any
	// goroutine that is inside a Vulkan call.
	OnMessage func(severity, msg string)
}

// Instance is a Vulkan instance.
type Instance struct {
	h         vk.Instance
	gipa      unsafe.Pointer
	messenger C.VkDebugUtilsMessengerEXT
	handle    cgo.Handle
}

const validationLayer = "VK_LAYER_KHRONOS_validation"

// NewInstance creates a Vulkan 1.1 instance. It returns an error wrapping
// ErrNoVulkan when the loader is missing or reports no driver, and an error
// naming the layer when validation is asked for but not installed.
func NewInstance(opts InstanceOptions) (*Instance, error) {
	gipa, err := load()
	if err != nil {
		return nil, err
	}
	var layers, exts []string
	if opts.Validation {
		if !hasLayer(gipa, validationLayer) {
			return nil, fmt.Errorf("validation asked for but %s is not installed (Debian: vulkan-validationlayers)", validationLayer)
		}
		layers = append(layers, validationLayer+"\x00")
		exts = append(exts, "VK_EXT_debug_utils\x00")
	}
	app := &vk.ApplicationInfo{
		SType:            vk.StructureTypeApplicationInfo,
		PApplicationName: "vkops\x00",
		PEngineName:      "vkops\x00",
		ApiVersion:       vk.MakeVersion(1, 1, 0),
	}
	ci := &vk.InstanceCreateInfo{
		SType:                   vk.StructureTypeInstanceCreateInfo,
		PApplicationInfo:        app,
		EnabledLayerCount:       uint32(len(layers)),
		PpEnabledLayerNames:     layers,
		EnabledExtensionCount:   uint32(len(exts)),
		PpEnabledExtensionNames: exts,
	}
	var h vk.Instance
	r := vk.CreateInstance(ci, nil, &h)
	ci.Free()
	app.Free()
	if r == vk.ErrorIncompatibleDriver {
		return nil, fmt.Errorf("%w: the Vulkan loader found no driver (Debian: mesa-vulkan-drivers)", ErrNoVulkan)
	}
	if err := check("vkCreateInstance", r); err != nil {
		return nil, err
	}
	// The loader unloads the driver when the last instance is destroyed and
	// loads it again for the next. NVIDIA's driver takes static TLS at
	// each load, which glibc runs out of after a few dozen cycles
	// ("cannot allocate memory in static TLS block": no driver found).
	// Loaded once, it stays, and a device opens without relinking it.
	C.vkops_pin_loaded()
	if err := vk.InitInstance(h); err != nil {
		vk.DestroyInstance(h, nil)
		return nil, fmt.Errorf("vk: %v", err)
	}
	in := &Instance{h: h, gipa: gipa}
	if opts.Validation {
		on := opts.OnMessage
		if on == nil {
			on = func(string, string) {}
		}
		in.handle = cgo.NewHandle(on)
		r := vk.Result(C.vkops_create_messenger(gipa, C.VkInstance(unsafe.Pointer(h)), C.uintptr_t(in.handle), &in.messenger))
		if err := check("vkCreateDebugUtilsMessengerEXT", r); err != nil {
			in.handle.Delete()
			vk.DestroyInstance(h, nil)
			return nil, err
		}
	}
	return in, nil
}

func hasLayer(gipa unsafe.Pointer, name string) bool {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.vkops_has_instance_layer(gipa, cname) != 0
}

//export vkopsGoDebugMessage
func vkopsGoDebugMessage(handle C.uintptr_t, severity C.int, msg *C.char) {
	on := cgo.Handle(handle).Value().(func(string, string))
	sev := "warning"
	if severity >= C.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT {
		sev = "error"
	}
	on(sev, C.GoString(msg))
}

// Close destroys the instance. Every device made from it must be closed first.
func (in *Instance) Close() {
	if in == nil || in.h == nil {
		return
	}
	if in.messenger != nil {
		C.vkops_destroy_messenger(in.gipa, C.VkInstance(unsafe.Pointer(in.h)), in.messenger)
		in.handle.Delete()
	}
	vk.DestroyInstance(in.h, nil)
	in.h = nil
}

func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// pin keeps Go memory that a create-info points to in place for the
// duration of a call, as cgocheck2 demands.
func pin(p *runtime.Pinner, ptrs ...any) {
	for _, x := range ptrs {
		p.Pin(x)
	}
}

// Timeout reports whether a wait ran out of time (VK_TIMEOUT).
func (e *Error) Timeout() bool { return e.Result == vk.Timeout }

// Fault returns the error a failed call would: VK_ERROR_DEVICE_LOST when
// lost is set, else VK_ERROR_OUT_OF_DEVICE_MEMORY. Fault-injection tests
// use it to exercise what follows such failures.
func Fault(call string, lost bool) *Error {
	if lost {
		return &Error{Call: call, Result: vk.ErrorDeviceLost}
	}
	return &Error{Call: call, Result: vk.ErrorOutOfDeviceMemory}
}
