package vk

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// newTestDevice opens the first device with validation on and fails the
// test on any validation message.
func newTestDevice(t *testing.T) *Device {
	t.Helper()
	in, err := NewInstance(InstanceOptions{Validation: true, OnMessage: func(sev, msg string) {
		t.Errorf("validation %s: %s", sev, msg)
	}})
	if errors.Is(err, ErrNoVulkan) && os.Getenv("CI") == "" {
		t.Skipf("no Vulkan device here (%v); CI never skips", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	infos, err := in.PhysicalDevices()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) == 0 {
		if os.Getenv("CI") == "" {
			t.Skip("no Vulkan device here; CI never skips")
		}
		t.Fatal("no Vulkan device")
	}
	d, err := in.NewDevice(infos[0], DeviceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func TestDescribe(t *testing.T) {
	d := newTestDevice(t)
	info := d.Info
	t.Logf("%s (%s), driver %s %s, API %s, subgroup %d %v, push descriptors %v", info.Name, info.Type, info.DriverName,
		info.DriverInfo, info.APIVersion, info.Features.SubgroupSize, info.Features.SubgroupOps, d.PushDescriptors())
	if info.Limits.MaxStorageBufferRange == 0 || info.Limits.MaxComputeWorkGroupCount[0] == 0 {
		t.Errorf("limits not read: %+v", info.Limits)
	}
	if len(info.Heaps) == 0 || len(info.MemoryTypes) == 0 {
		t.Errorf("no memory heaps or types")
	}
}

func TestFillCopy(t *testing.T) {
	d := newTestDevice(t)
	const n = 1 << 16
	src, err := d.NewBuffer(n, Upload)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Destroy()
	mid, err := d.NewBuffer(n, DeviceLocal)
	if err != nil {
		t.Fatal(err)
	}
	defer mid.Destroy()
	dst, err := d.NewBuffer(n, Readback)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Destroy()
	for i := range src.Mapped() {
		src.Mapped()[i] = byte(i * 7)
	}
	c, err := d.NewCommands(4, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	if err := c.Begin(); err != nil {
		t.Fatal(err)
	}
	c.Timestamp(0)
	c.Copy(mid, 0, src, 0, n)
	c.Barrier()
	c.Fill(mid, 0, 16, 0x01020304)
	c.Barrier()
	c.Copy(dst, 0, mid, 0, n)
	c.Barrier()
	c.Timestamp(1)
	if err := c.Submit(); err != nil {
		t.Fatal(err)
	}
	if done, err := c.Poll(10*time.Second, true); !done || err != nil {
		t.Fatalf("Poll = %v, %v; want true, nil", done, err)
	}
	if err := c.Wait(1e10); err != nil {
		t.Fatal(err)
	}
	if done, err := c.Done(); !done || err != nil {
		t.Fatalf("Done after Wait = %v, %v; want true, nil", done, err)
	}
	got := dst.Mapped()
	for i := range got {
		want := byte(i * 7)
		if i < 16 {
			want = byte(uint32(0x01020304) >> (8 * (i % 4)))
		}
		if got[i] != want {
			t.Fatalf("byte %d = %d, want %d", i, got[i], want)
		}
	}
	ts, err := c.Timestamps(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("copy of %d bytes took %.0f ns on the device", n, ts[1]-ts[0])
}

// A buffer over a Go slice's memory: the device reads what the host
// wrote there and writes where the host reads, with no copy between;
// misaligned memory is refused.
func TestImportBuffer(t *testing.T) {
	d := newTestDevice(t)
	align := d.HostImportAlignment()
	if align == 0 {
		t.Skipf("%s cannot import host memory", d.Info.Name)
	}
	const n = 1 << 16
	// Room to start on a multiple of align, whatever the allocator gives.
	back := make([]byte, 3*n+int(align))
	skip := int(align - uint64(uintptr(unsafe.Pointer(&back[0])))%align)
	if skip == int(align) {
		skip = 0
	}
	host := back[skip : skip+3*n]
	var pin runtime.Pinner
	pin.Pin(&host[0])
	defer pin.Unpin()
	if _, err := d.ImportBuffer(unsafe.Pointer(&host[1]), n, n); err == nil {
		t.Fatal("import of memory off the alignment succeeded")
	}
	src, err := d.ImportBuffer(unsafe.Pointer(&host[0]), n, n-16)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Destroy()
	dst, err := d.ImportBuffer(unsafe.Pointer(&host[2*n]), n, n)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Destroy()
	if &src.Mapped()[0] != &host[0] || len(src.Mapped()) != n-16 {
		t.Fatal("Mapped is not the imported memory")
	}
	for i := range n {
		host[i] = byte(i * 7)
	}
	c, err := d.NewCommands(4, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	if err := c.Begin(); err != nil {
		t.Fatal(err)
	}
	c.Copy(dst, 0, src, 0, n-16)
	c.Barrier()
	if err := c.Submit(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(1e10); err != nil {
		t.Fatal(err)
	}
	for i := range n - 16 {
		if host[2*n+i] != byte(i*7) {
			t.Fatalf("byte %d = %d, want %d", i, host[2*n+i], byte(i*7))
		}
	}
}

// On a discrete GPU's memory types, as NVIDIA lists them, staging goes
// to the host's memory, not to the BAR listed before it, and
// DeviceMapped to the BAR.
func TestMemoryTypeDiscrete(t *testing.T) {
	d := &Device{Info: &DeviceInfo{Type: TypeDiscrete, MemoryTypes: []MemoryType{
		{Heap: 0, DeviceLocal: true},
		{Heap: 0, DeviceLocal: true, HostVisible: true, HostCoherent: true},
		{Heap: 1, HostVisible: true, HostCoherent: true},
		{Heap: 1, HostVisible: true, HostCoherent: true, HostCached: true},
	}}}
	for _, c := range []struct {
		p    Placement
		want int
	}{{DeviceLocal, 0}, {Upload, 2}, {Readback, 3}, {DeviceMapped, 1}} {
		if got := d.memoryType(^uint32(0), c.p, c.p != DeviceLocal); got != c.want {
			t.Errorf("%v: memory type %d, want %d", c.p, got, c.want)
		}
	}
	if d.Unified() || !d.HasDeviceMapped() {
		t.Errorf("Unified %v, HasDeviceMapped %v: want false, true", d.Unified(), d.HasDeviceMapped())
	}
}
