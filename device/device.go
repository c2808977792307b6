// Package device opens a Vulkan device, keeps tensors resident on it, and
// records the work of ops into batches that it submits and waits for.
//
// # Goroutines
//
// A Device and its Tensors are safe for concurrent use by many
// goroutines: ops, transfers, Wait, Sync, Free and Close may be called
// from any of them. Calls take the device in turn, and each op reads
// what the calls before it wrote; the order of two calls on different
// goroutines is the caller's to set, when one writes what the other
// uses. An ops.Expr is not safe for concurrent use: one per goroutine.
//
// # Free and memory
//
// Free returns a tensor's memory to the device's pool once the work
// recorded before it that uses the tensor has finished, so an op still
// pending reads what it was given. An op called while another goroutine
// frees one of its tensors either runs on it, having taken it first, or
// returns an error that matches ErrFreed. A tensor that becomes
// unreachable without Free, such as the mask in
// ops.Where(must(ops.Greater(x, 0)), x, y), is freed the same way once
// the garbage collector finds it (a tensor of under 4 KiB once the 63
// made beside it are unreachable too); Free is the fast path, which
// gives the memory back at once rather than at a later collection. Memory in the
// pool serves the next tensor of its size. Where the heap is full, a new
// tensor first waits for the pending work that holds freed tensors'
// memory, then runs the garbage collector for unreachable tensors (the
// Go heap grows too little for it to run by itself while the device's
// heap fills), then takes back the pool's unused memory; only then is it
// ErrOutOfMemory, whose message says what holds the heap: live tensors,
// freed tensors that unfinished work still uses, free slots of the pool.
//
// # Close
//
// Close lets the calls in progress finish (or return ErrClosed where
// they would wait past it), submits the work recorded so far and waits
// for it, then frees every tensor's memory and Vulkan object. Every call
// after Close, on the device or its tensors, returns ErrClosed, and Free
// does nothing; a second Close returns once the first has finished.
// Read what you need before Close: a closed device's tensors hold
// nothing.
//
// # Errors
//
// Errors match these with errors.Is: ErrClosed (the device was closed),
// ErrFreed (a tensor was freed), ErrOutOfMemory (the heap or the host is
// full; the device stays usable), ErrDeviceLost (the driver lost the
// device; it is unusable), ErrMisuse (a nil device or tensor, tensors
// of two devices, a shape no tensor has, a slice or result of another
// element type, memory that a copy would read while writing it),
// ErrSize (a slice or bytes that do not match a tensor's shape),
// ErrNoDevice and ErrNoSuchDevice (Open found no device, or not the one
// asked for). After any of them but ErrDeviceLost, the device and every
// tensor not freed work as before, and a call that failed changed none
// of its inputs. Once a device is closed or lost, every use of its
// tensors, freed ones too, reports that. The accessors that describe a
// nil Device or Tensor (String, Info, Shape, Len...) answer as for no
// device and no elements.
package device

import "github.com/vkops/vkops/internal/core"

// Errors, as the package's doc says when each is returned; match them
// with errors.Is.
var (
	// ErrNoDevice reports that no Vulkan loader or device is present.
	ErrNoDevice = core.ErrNoDevice
	// ErrNoSuchDevice reports that Options.Device (or $VKOPS_DEVICE)
	// names no device that exists.
	ErrNoSuchDevice = core.ErrNoSuchDevice
	// ErrOutOfMemory reports that the device or host ran out of memory
	// for a tensor, after the memory that pending work held was
	// reclaimed; the device stays usable.
	ErrOutOfMemory = core.ErrOutOfMemory
	// ErrClosed reports use of a closed Device, or of a tensor of one,
	// including by a call that was waiting when Close began.
	ErrClosed = core.ErrClosed
	// ErrFreed reports use of a tensor after Free, including by an op
	// that another goroutine's Free overtook.
	ErrFreed = core.ErrFreed
	// ErrDeviceLost reports that the driver lost the device
	// (VK_ERROR_DEVICE_LOST); the Device is unusable from then on.
	ErrDeviceLost = core.ErrDeviceLost
	// ErrMisuse reports a call the API does not allow: a nil device or
	// tensor, or tensors of different devices in one call.
	ErrMisuse = core.ErrMisuse
	// ErrSize reports a slice whose length does not match a tensor's.
	ErrSize = core.ErrSize
)

// Options configure Open. The zero value picks the best device.
type Options struct {
	// Device chooses a device by index (as `vkops info` lists them) or by
	// a case-insensitive substring of its name. Empty means $VKOPS_DEVICE,
	// and when that is unset too, the best device: discrete GPU, then
	// integrated, virtual, CPU (lavapipe).
	Device string
	// Validation enables the Khronos validation layer; also turned on by
	// VKOPS_VALIDATION=1.
	Validation bool
	// OnValidation receives each validation message. When nil, messages
	// are written to os.Stderr.
	OnValidation func(severity, msg string)
	// CacheDir holds the pipeline cache between runs. Empty means
	// $VKOPS_CACHE_DIR, then os.UserCacheDir()/vkops; "-" disables it.
	CacheDir string
	// PageSize, when nonzero, caps the bytes a tensor keeps in one buffer
	// binding, below the device's own limit; a power of two of at least
	// 4096. Tests use it to exercise tensors that span several pages.
	PageSize uint64
	// Staging, when set, moves data through staging buffers and copy
	// commands even where the device's memory is host-visible, as on
	// discrete GPUs; tests use it to exercise that path on lavapipe.
	Staging bool
	// Transfers chooses how uploads and downloads move bytes where the
	// host does not map tensors (discrete GPUs, or Staging):
	//
	//	staged  through staging buffers kept for reuse, in chunks of a
	//	        few MiB, the host filling (or emptying) one while the
	//	        device copies the one before
	//	direct  uploads write straight into device-local memory that the
	//	        host can map (a GPU's BAR), where the device has it;
	//	        downloads are staged, since reading that memory crosses
	//	        the bus uncached
	//	import  the device copies from and to the caller's own pages,
	//	        imported as device memory (VK_EXT_external_memory_host),
	//	        where they lie on whole pages; staged otherwise
	//
	// Empty means $VKOPS_TRANSFERS, and when that is unset too, staged.
	Transfers string
	// Descriptors chooses how dispatches bind their buffers: "push"
	// pushes them into the command buffer where the device has
	// VK_KHR_push_descriptor, "sets" writes a descriptor set for each.
	// Empty means $VKOPS_DESCRIPTORS, and when that is unset too, what
	// the driver does best: push, except on lavapipe (see
	// vk.DescriptorsAuto).
	Descriptors string
	// Profile chooses the plans ops make: ProfileCPU for a driver that
	// runs on the host's cores, ProfileGPU for any other. ProfileAuto
	// means $VKOPS_PROFILE ("cpu" or "gpu"), and when that is unset too,
	// the device's own kind. Tests set it to run a GPU's plans on
	// lavapipe.
	Profile Profile
	// Guard follows every tensor page with bytes of a known pattern and
	// checks them when the page is freed; Close reports any that a kernel
	// overwrote. Tests set it; it costs a little host work per allocation
	// and works where memory is host-visible.
	Guard bool
}

// Profile is the kind of device that ops plan work for: a CPU driver
// such as lavapipe, which wants a few invocations that each do much, or
// a GPU, which wants tens of thousands that each do little.
type Profile = core.Profile

// The profiles.
const (
	ProfileAuto = core.ProfileAuto // in Options: $VKOPS_PROFILE, else the device's kind
	ProfileCPU  = core.ProfileCPU  // drivers that run on the host's cores
	ProfileGPU  = core.ProfileGPU  // every other device
)

// Info describes a device: its name, type, driver, memory and limits.
type Info = core.Info

// Devices lists the Vulkan devices with a compute queue and the index of
// the one Open would choose with opts.
func Devices(opts Options) ([]*Info, int, error) { return core.Devices(core.Options(opts)) }

// A Device is an open Vulkan device. It is safe for concurrent use.
type Device core.Device

// Open opens the device that opts choose.
func Open(opts Options) (*Device, error) {
	d, err := core.Open(core.Options(opts))
	return (*Device)(d), err
}

func (d *Device) core() *core.Device { return (*core.Device)(d) }

// Close waits for the calls in progress, submits the work recorded so
// far and waits for it, and releases every tensor's memory. It is
// idempotent and safe to call from several goroutines: each returns once
// the device is closed.
func (d *Device) Close() error { return d.core().Close() }

// Sync submits all recorded work and waits for it to complete.
func (d *Device) Sync() error { return d.core().Sync() }

// Err reports why the device cannot take work: nil, ErrClosed, or
// ErrDeviceLost.
func (d *Device) Err() error { return d.core().Err() }

// Info describes the device.
func (d *Device) Info() *Info { return d.core().Info() }

// Profile returns the profile that ops plan for on d: ProfileCPU or
// ProfileGPU.
func (d *Device) Profile() Profile { return d.core().Profile() }

// String names the device.
func (d *Device) String() string { return d.core().String() }
