// Package core is package device's implementation and the kernel
// author's API beside it: kernels, their arguments and dispatch, the
// pages of a tensor, empty tensors, fills and copies, captured replays,
// host tensors, the device's choices and limits. Package device wraps
// the part a user calls; ops, bench, the command and the tests use the
// rest. The contract (goroutines, Free and memory, Close, errors) is
// package device's.
package core

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vkops/vkops/vk"
)

// Info describes a physical device: its name, type, driver, memory, limits
// and features.
type Info = vk.DeviceInfo

// DriverID is a VkDriverId: which driver runs a device (Info.DriverID).
type DriverID = vk.DriverID

// DriverMesaLLVMpipe is lavapipe's driver ID.
const DriverMesaLLVMpipe = vk.DriverMesaLLVMpipe

// ErrNoDevice reports that no Vulkan loader or device is present.
var ErrNoDevice = vk.ErrNoVulkan

// ErrOutOfMemory reports that the device or host ran out of memory for a
// tensor, after the memory that pending work held was reclaimed; the
// device stays usable.
var ErrOutOfMemory = errors.New("out of device memory")

// ErrClosed reports use of a closed Device, or of a tensor of one,
// including by a call that was waiting when Close began.
var ErrClosed = errors.New("device closed")

// ErrNoSuchDevice reports that Options.Device (or $VKOPS_DEVICE) names no
// device that exists.
var ErrNoSuchDevice = errors.New("no such device")

// ErrFreed reports use of a tensor after Free, including by an op that
// another goroutine's Free overtook.
var ErrFreed = errors.New("use after Free")

// ErrSize reports bytes that do not match a tensor's: a Read or Write
// of a slice whose length is not the tensor's Bytes, or a Copy between
// tensors of different sizes.
var ErrSize = errors.New("size mismatch")

// ErrMisuse reports a call the API does not allow: a nil tensor, or
// tensors of different devices in one call.
var ErrMisuse = errors.New("misuse of the API")

// usageError is a misuse or size error: its message is the whole error,
// and errors.Is matches its sentinel.
type usageError struct {
	msg string
	is  error
}

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == e.is }

func usagef(sentinel error, format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), is: sentinel}
}

// ErrDeviceLost reports that the driver lost the device
// (VK_ERROR_DEVICE_LOST); the Device is unusable from then on.
var ErrDeviceLost = errors.New("device lost")

// Options configure Open. They are package device's Options field for
// field, documented there, which device.Open converts to these.
type Options struct {
	Device       string
	Validation   bool
	OnValidation func(severity, msg string)
	CacheDir     string
	PageSize     uint64
	Staging      bool
	Transfers    string
	Descriptors  string
	Profile      Profile
	Guard        bool
}

func (o *Options) fill() {
	if o.Device == "" {
		o.Device = os.Getenv("VKOPS_DEVICE")
	}
	if o.CacheDir == "" {
		o.CacheDir = os.Getenv("VKOPS_CACHE_DIR")
	}
	if o.Descriptors == "" {
		o.Descriptors = os.Getenv("VKOPS_DESCRIPTORS")
	}
	if o.Transfers == "" {
		o.Transfers = os.Getenv("VKOPS_TRANSFERS")
	}
	if os.Getenv("VKOPS_VALIDATION") == "1" {
		o.Validation = true
	}
	if o.OnValidation == nil {
		o.OnValidation = func(sev, msg string) { fmt.Fprintf(os.Stderr, "vkops: validation %s: %s\n", sev, msg) }
	}
}

// Devices lists the Vulkan devices with a compute queue and the index of
// the one Open would choose with opts.
func Devices(opts Options) ([]*Info, int, error) {
	opts.fill()
	in, err := vk.NewInstance(vk.InstanceOptions{})
	if err != nil {
		return nil, -1, err
	}
	defer in.Close()
	infos, err := in.PhysicalDevices()
	if err != nil {
		return nil, -1, err
	}
	i, err := choose(infos, opts.Device)
	return infos, i, err
}

func choose(infos []*Info, want string) (int, error) {
	if len(infos) == 0 {
		return -1, fmt.Errorf("%w: the Vulkan loader lists no device with a compute queue (Debian: mesa-vulkan-drivers)", ErrNoDevice)
	}
	if want != "" {
		if i, err := strconv.Atoi(want); err == nil {
			if i < 0 || i >= len(infos) {
				return -1, fmt.Errorf("%w: index %d (have 0..%d)", ErrNoSuchDevice, i, len(infos)-1)
			}
			return i, nil
		}
		for i, info := range infos {
			if strings.Contains(strings.ToLower(info.Name), strings.ToLower(want)) {
				return i, nil
			}
		}
		return -1, fmt.Errorf("%w: no device name contains %q", ErrNoSuchDevice, want)
	}
	best := 0
	for i, info := range infos {
		if info.Type > infos[best].Type {
			best = i
		}
	}
	return best, nil
}

// Device is an open Vulkan device.
type Device struct {
	info    *Info
	inst    *vk.Instance
	dev     *vk.Device
	unified bool
	// direct: tensors live in device-local memory that the host maps
	// and writes, but never reads (Options.Transfers "direct").
	direct bool
	// importing: uploads and downloads of whole pages import the
	// caller's memory (Options.Transfers "import").
	importing bool
	profile   Profile
	pageSize  uint64
	cacheDir  string
	texels    [TexelRGBA8UI + 1]bool // by BindingKind: HasTexels

	mu        sync.Mutex
	closed    bool
	lost      error
	pool      *pool
	stream    stream
	staging   staging
	pipelines map[pipelineKey]*vk.Pipeline
	asked     map[pipelineKey]struct{} // by Fresh: pipelines not built when asked for
	cache     *vk.PipelineCache
	newPipes  int
	binds     [vk.MaxSetBindings]vk.Binding // Dispatch's scratch
	rooms     []tensorRoom                  // newTensor's blocks: what is left of them
	block     []Tensor
	collected atomic.Int64 // tensors freed by their finalizers, unreachable
	capture   *Replay      // Capture's, while it runs
	// hostIdle is signalled when a host copy of a tensor's bytes ends
	// (Tensor.beginHost).
	hostIdle *sync.Cond
	// calls counts the calls in progress that use the device (enter);
	// Close waits on quiet until none is left, and closes shut when done.
	calls int
	quiet *sync.Cond
	shut  chan struct{}

	choices      map[string]string
	choicesDirty bool

	validation struct {
		sync.Mutex
		count int
	}
}

// Open opens a device.
func Open(opts Options) (*Device, error) {
	opts.fill()
	// A bad option is the caller's mistake whatever devices exist, so it
	// is reported before the loader is asked for any.
	var mode vk.DescriptorMode
	switch opts.Descriptors {
	case "":
	case "push":
		mode = vk.DescriptorsPush
	case "sets":
		mode = vk.DescriptorsSets
	default:
		return nil, fmt.Errorf("device: Options.Descriptors (or $VKOPS_DESCRIPTORS) is %q: want push, sets or empty", opts.Descriptors)
	}
	switch opts.Transfers {
	case "", "staged", "direct", "import":
	default:
		return nil, fmt.Errorf("device: Options.Transfers (or $VKOPS_TRANSFERS) is %q: want staged, direct, import or empty", opts.Transfers)
	}
	if _, err := resolveProfile(opts.Profile, vk.TypeCPU); err != nil {
		return nil, err
	}
	d := &Device{pipelines: map[pipelineKey]*vk.Pipeline{}, shut: make(chan struct{})}
	d.hostIdle, d.quiet = sync.NewCond(&d.mu), sync.NewCond(&d.mu)
	d.cacheDir = cacheDir(opts.CacheDir)
	if err := useMesaCache(d.cacheDir); err != nil {
		return nil, err
	}
	onMsg := opts.OnValidation
	in, err := vk.NewInstance(vk.InstanceOptions{Validation: opts.Validation, OnMessage: func(sev, msg string) {
		d.validation.Lock()
		d.validation.count++
		d.validation.Unlock()
		onMsg(sev, msg)
	}})
	if err != nil {
		return nil, fmt.Errorf("device: %w", err)
	}
	infos, err := in.PhysicalDevices()
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("device: %w", err)
	}
	i, err := choose(infos, opts.Device)
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("device: %w", err)
	}
	if d.profile, err = resolveProfile(opts.Profile, infos[i].Type); err != nil {
		in.Close()
		return nil, err
	}
	dev, err := in.NewDevice(infos[i], vk.DeviceOptions{Descriptors: mode})
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("device: %s: %w", infos[i].Name, err)
	}
	d.info, d.inst, d.dev = infos[i], in, dev
	d.unified = dev.Unified() && !opts.Staging
	d.direct = !d.unified && opts.Transfers == "direct" && dev.HasDeviceMapped()
	d.importing = !d.unified && opts.Transfers == "import" && dev.HostImportAlignment() > 0
	d.pageSize = pageSize(infos[i], opts.PageSize)
	d.findTexels()
	d.pool = newPool(dev)
	if d.direct {
		d.pool.placement = vk.DeviceMapped
	}
	d.pool.guard = opts.Guard
	d.stream.init(d)
	d.loadChoices()
	d.cache, err = d.loadPipelineCache()
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("device: %w", err)
	}
	return d, nil
}

// pageSize is the largest power of two that one binding may cover and one
// allocation may hold, capped at 1 GiB so that byte offsets inside a page
// fit comfortably in 32 bits, and at the caller's cap.
func pageSize(info *Info, capSize uint64) uint64 {
	lim := min(uint64(info.Limits.MaxStorageBufferRange), info.Limits.MaxMemoryAllocationSize, 1<<30)
	if capSize >= 4096 {
		lim = min(lim, capSize)
	}
	p := uint64(1)
	for p*2 <= lim {
		p *= 2
	}
	return p
}

// Info describes the open device.
func (d *Device) Info() *Info {
	if d == nil {
		return nil
	}
	return d.info
}

// PushDescriptors reports whether dispatches push their bindings into
// the command buffer (VK_KHR_push_descriptor) rather than write a
// descriptor set each (Options.Descriptors).
func (d *Device) PushDescriptors() bool { return d.dev.PushDescriptors() }

// Unified reports whether tensors live in host-visible memory that the
// device reads directly, so uploads and downloads are plain copies.
func (d *Device) Unified() bool { return d.unified }

// Transfers names how uploads and downloads move bytes on this device:
// "mapped" where the host maps tensors (Unified), else what
// Options.Transfers chose and the device can do: "staged", "direct" or
// "import".
func (d *Device) Transfers() string {
	switch {
	case d.unified:
		return "mapped"
	case d.direct:
		return "direct"
	case d.importing:
		return "import"
	}
	return "staged"
}

// CanWrap reports whether Wrap can make tensors over a Go slice's memory
// on this device (VK_EXT_external_memory_host), and the alignment that
// the slice's address must have.
func (d *Device) CanWrap() (bool, uint64) {
	a := d.dev.HostImportAlignment()
	return a > 0, a
}

// PageSize returns the most bytes of a tensor that one buffer binding
// covers; larger tensors span several pages.
func (d *Device) PageSize() uint64 { return d.pageSize }

// ValidationMessages returns how many messages the validation layer has
// reported since Open.
func (d *Device) ValidationMessages() int {
	d.validation.Lock()
	defer d.validation.Unlock()
	return d.validation.count
}

// LiveBytes returns the bytes of the device's heap that live tensors
// hold, as the out-of-memory report counts them.
func (d *Device) LiveBytes() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	live, _ := d.heapUse()
	return live
}

// LiveObjects returns the number of Vulkan objects the device holds now:
// buffers, memory, pipelines, pools. Leak tests watch it.
func (d *Device) LiveObjects() int64 { return d.dev.Live() }

// IsCPU reports whether the device runs on the host's processor, as
// lavapipe does: its kernels want work spread over a few invocations,
// a GPU's over tens of thousands.
func (d *Device) IsCPU() bool { return d.info.Type == vk.TypeCPU }

// Err reports why the device cannot take work: nil, ErrClosed, or
// ErrDeviceLost; ErrMisuse for a nil device.
func (d *Device) Err() error {
	if err := d.check(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.usable()
}

// check reports a nil device, which every call that uses one reports
// rather than panic.
func (d *Device) check() error {
	switch {
	case d == nil:
		return usagef(ErrMisuse, "device: nil device")
	case d.shut == nil:
		return usagef(ErrMisuse, "device: a Device that Open did not return")
	}
	return nil
}

// usable reports why the device cannot take work; d.mu must be held.
func (d *Device) usable() error {
	if d.closed {
		return ErrClosed
	}
	return d.lost
}

// enter begins a call that uses the device, or reports why none can
// begin; d.mu must be held, and leave must end the call. A call may
// release d.mu while it waits for a batch or copies bytes: Close waits
// until every call begun has left before it destroys anything, so a
// call finds the device's objects there whenever it holds d.mu.
func (d *Device) enter() error {
	if err := d.usable(); err != nil {
		return err
	}
	d.calls++
	return nil
}

// leave ends a call that enter began; d.mu must be held.
func (d *Device) leave() {
	d.calls--
	if d.calls == 0 && d.closed {
		d.quiet.Broadcast()
	}
}

// Close shuts the device down. Calls begun before it (ops, transfers,
// waits, on any goroutine) finish first, or return ErrClosed where they
// would wait past it; every call after it returns ErrClosed. Close then
// submits the work recorded so far and waits for it, saves the pipeline
// cache, and releases every Vulkan object and every tensor's memory.
// Close is idempotent and safe to call from several goroutines: each
// returns once the device is closed.
func (d *Device) Close() error {
	if err := d.check(); err != nil {
		return err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		<-d.shut
		return nil
	}
	defer close(d.shut)
	defer d.mu.Unlock()
	d.closed = true
	for d.calls > 0 {
		d.quiet.Wait()
	}
	var errs []error
	if d.lost == nil {
		errs = append(errs, d.stream.drain())
	}
	if d.dev != nil {
		_ = d.dev.WaitIdle()
		errs = append(errs, d.savePipelineCache())
		d.saveChoices()
		d.stream.destroy()
		d.destroyStaging()
		for _, p := range d.pipelines {
			p.Destroy()
		}
		d.pipelines = nil
		d.cache.Destroy()
		errs = append(errs, d.pool.guardErr)
		d.pool.destroy()
		d.dev.Close()
	}
	d.inst.Close()
	return errors.Join(errs...)
}

// String names the device.
func (d *Device) String() string {
	if d.check() != nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s (%s, %s)", d.info.Name, d.info.TypeName, d.info.DriverName)
}

// WriteInfo writes a human-readable description of info to w.
func WriteInfo(w io.Writer, info *Info) {
	fmt.Fprintf(w, "  name:        %s\n", info.Name)
	fmt.Fprintf(w, "  type:        %s, vendor %s, device 0x%x\n", info.TypeName, info.Vendor(), info.DeviceID)
	fmt.Fprintf(w, "  driver:      %s %s\n", info.DriverName, info.DriverInfo)
	fmt.Fprintf(w, "  api:         %s, uuid %s\n", info.APIVersion, info.UUID)
	for i, h := range info.Heaps {
		local := ""
		if h.DeviceLocal {
			local = " device-local"
		}
		fmt.Fprintf(w, "  heap %d:      %s%s\n", i, humanBytes(h.Size), local)
	}
	for i, t := range info.MemoryTypes {
		var flags []string
		for _, f := range []struct {
			on   bool
			name string
		}{{t.DeviceLocal, "device-local"}, {t.HostVisible, "host-visible"}, {t.HostCoherent, "coherent"}, {t.HostCached, "cached"}} {
			if f.on {
				flags = append(flags, f.name)
			}
		}
		fmt.Fprintf(w, "  memtype %d:   heap %d %s\n", i, t.Heap, strings.Join(flags, " "))
	}
	l := info.Limits
	fmt.Fprintf(w, "  limits:      maxStorageBufferRange %s, maxMemoryAllocationSize %s, maxTexelBufferElements %d\n",
		humanBytes(uint64(l.MaxStorageBufferRange)), humanBytes(l.MaxMemoryAllocationSize), l.MaxTexelBufferElements)
	fmt.Fprintf(w, "               maxComputeWorkGroupCount %v, maxComputeWorkGroupSize %v, maxComputeWorkGroupInvocations %d\n",
		l.MaxComputeWorkGroupCount, l.MaxComputeWorkGroupSize, l.MaxComputeWorkGroupInvocations)
	fmt.Fprintf(w, "               maxComputeSharedMemorySize %s, maxPushConstantsSize %d, minStorageBufferOffsetAlignment %d, nonCoherentAtomSize %d\n",
		humanBytes(uint64(l.MaxComputeSharedMemorySize)), l.MaxPushConstantsSize, l.MinStorageBufferOffsetAlignment, l.NonCoherentAtomSize)
	fmt.Fprintf(w, "               timestampPeriod %g ns\n", l.TimestampPeriod)
	f := info.Features
	var feats []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.ShaderInt64, "shaderInt64"}, {f.ShaderFloat64, "shaderFloat64"}, {f.ShaderInt16, "shaderInt16"},
		{f.ShaderInt8, "shaderInt8"}, {f.ShaderFloat16, "shaderFloat16"},
		{f.StorageBuffer8BitAccess, "storageBuffer8BitAccess"}, {f.StorageBuffer16BitAccess, "storageBuffer16BitAccess"}} {
		if x.on {
			feats = append(feats, x.name)
		}
	}
	if f.HostImport {
		feats = append(feats, fmt.Sprintf("hostImport (%d-byte alignment)", l.MinImportedHostPointerAlignment))
	}
	fmt.Fprintf(w, "  features:    %s\n", strings.Join(feats, " "))
	ops := slices.Clone(f.SubgroupOps)
	fmt.Fprintf(w, "  subgroups:   size %d, compute %v, ops %s\n", f.SubgroupSize, f.SubgroupCompute, strings.Join(ops, " "))
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.4g KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
