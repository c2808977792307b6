package core_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vkops/vkops/cpuref"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/internal/core"
	"github.com/vkops/vkops/internal/devtest"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// TestFailedOpLeavesInputs fails the batch that holds an op's work, as a
// driver that runs out of memory at submission would: the op's output
// reports core.ErrOutOfMemory, its inputs keep their bytes, nothing
// leaks, and the same op succeeds next time. Losing the device instead
// makes every later use report core.ErrDeviceLost, and Close still
// releases everything. (It lives here because FailNextSubmit, in export_test.go, is
// visible only to package device's tests.)
func TestFailedOpLeavesInputs(t *testing.T) {
	// The portable kernels: measuring the variants of each op on first
	// use would take most of the test's time, and they fail alike.
	t.Setenv("VKOPS_VARIANT", "portable")
	for _, staging := range []bool{false, true} {
		t.Run(fmt.Sprintf("staging=%v", staging), func(t *testing.T) {
			d := devtest.OpenCore(t, core.Options{PageSize: 4096, Staging: staging})
			cond := randomHost(t, tensor.Bool, tensor.Shape{40, 1, 30}, 1)
			then := randomHost(t, tensor.I32, tensor.Shape{40, 5, 30}, 2)
			els := randomHost(t, tensor.I32, tensor.Shape{5, 1}, 3)
			data := randomHost(t, tensor.Bool, tensor.Shape{50, 40, 60}, 4)
			hosts := []*tensor.Host{cond, then, els, data}
			var ins []*core.Tensor
			for _, h := range hosts {
				x, err := d.Upload(h)
				if err != nil {
					t.Fatal(err)
				}
				defer x.Free()
				ins = append(ins, x)
			}
			// With staging, uploads are batches of their own: let them
			// complete, so that the failing batch holds the op alone.
			if err := d.Sync(); err != nil {
				t.Fatal(err)
			}
			intact := func(after string) {
				t.Helper()
				for i, x := range ins {
					got, err := x.Download()
					if err != nil || !bytes.Equal(got.Data, hosts[i].Data) {
						t.Fatalf("after %s: input %v: %v (changed: %v)", after, x, err, err == nil)
					}
				}
			}
			for _, c := range []struct {
				name string
				run  func() (*core.Tensor, error)
				want func() (*tensor.Host, error)
			}{
				{"select", func() (*core.Tensor, error) {
					return bridge.Result(ops.Select(bridge.UserTensor(ins[0]), bridge.UserTensor(ins[1]), bridge.UserTensor(ins[2])))
				},
					func() (*tensor.Host, error) { return cpuref.Select(cond, then, els, "numpy") }},
				{"where", func() (*core.Tensor, error) { return bridge.Result(ops.Where(bridge.UserTensor(ins[0]), 7, ins[2])) },
					func() (*tensor.Host, error) {
						s, _ := tensor.NewScalar(7, tensor.I32)
						return cpuref.Where(cond, cpuref.Operand{S: &s}, cpuref.Operand{T: els})
					}},
				// Two passes, with a temporary between them.
				{"reduce over two axes", func() (*core.Tensor, error) {
					return bridge.Result(ops.ReduceLogicalOr(bridge.UserTensor(ins[3]), []int{0, 2}))
				},
					func() (*tensor.Host, error) { return cpuref.ReduceLogicalOr(data, []int{0, 2}, false) }},
				{"reduce over one axis", func() (*core.Tensor, error) {
					return bridge.Result(ops.ReduceLogicalAnd(bridge.UserTensor(ins[3]), []int{1}))
				},
					func() (*tensor.Host, error) { return cpuref.ReduceLogicalAnd(data, []int{1}, false) }},
			} {
				// The first run measures the kernel variants and builds the
				// pipelines, so that the failing run records the op alone.
				y, err := c.run()
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				y.Free()
				if err := d.Sync(); err != nil {
					t.Fatal(err)
				}
				// With staging, downloads keep their staging buffers for
				// reuse: count them in before the failure.
				intact(c.name)
				live := d.LiveObjects()

				y, err = c.run()
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				d.FailNextSubmit(false)
				if _, err := y.Download(); !errors.Is(err, core.ErrOutOfMemory) {
					t.Fatalf("%s: the output of a failed batch: %v, want ErrOutOfMemory", c.name, err)
				}
				y.Free()
				intact(c.name + " in a failed batch")
				if err := d.Sync(); err != nil {
					t.Fatalf("%s: Sync after a failed batch: %v", c.name, err)
				}
				if got := d.LiveObjects(); got > live {
					t.Errorf("%s: %d live Vulkan objects after the failed batch, %d before", c.name, got, live)
				}

				y, err = c.run()
				if err != nil {
					t.Fatalf("%s after a failed batch: %v", c.name, err)
				}
				got, err := y.Download()
				y.Free()
				if err != nil {
					t.Fatalf("%s after a failed batch: %v", c.name, err)
				}
				want, err := c.want()
				if err != nil {
					t.Fatal(err)
				}
				if !got.Shape.Equal(want.Shape) || !bytes.Equal(got.Data, want.Data) {
					t.Fatalf("%s after a failed batch: the result differs from cpuref", c.name)
				}
			}

			// A lost device: the op's output, every input, new tensors and
			// new ops all report it; Close still releases every object.
			y, err := ops.Select(bridge.UserTensor(ins[0]), bridge.UserTensor(ins[1]), bridge.UserTensor(ins[2]))
			if err != nil {
				t.Fatal(err)
			}
			d.FailNextSubmit(true)
			if _, err := bridge.Tensor(y).Download(); !errors.Is(err, core.ErrDeviceLost) {
				t.Fatalf("the output of a lost batch: %v, want ErrDeviceLost", err)
			}
			if _, err := ins[1].Download(); !errors.Is(err, core.ErrDeviceLost) {
				t.Errorf("an input after the loss: %v, want ErrDeviceLost", err)
			}
			if _, err := ops.ReduceLogicalOr(bridge.UserTensor(ins[3]), []int{0}); !errors.Is(err, core.ErrDeviceLost) {
				t.Errorf("an op after the loss: %v, want ErrDeviceLost", err)
			}
			if _, err := d.Upload(cond); !errors.Is(err, core.ErrDeviceLost) {
				t.Errorf("an upload after the loss: %v, want ErrDeviceLost", err)
			}
			y.Free()
			if err := d.Close(); err != nil {
				t.Errorf("Close of a lost device: %v", err)
			}
			if live := d.LiveObjects(); live != 0 {
				t.Errorf("%d Vulkan objects live after closing a lost device", live)
			}
		})
	}
}

// TestGuardCatchesOverrun writes past a tensor's last page as a kernel
// writing past its binding would; Close of a guarded device reports it,
// for small (slab) and large (dedicated buffer) tensors alike.
func TestGuardCatchesOverrun(t *testing.T) {
	for _, n := range []int{3, 100, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			d, err := core.Open(core.Options{CacheDir: "-", Guard: true})
			devtest.SkipIfMissing(t, err)
			if err != nil {
				t.Fatal(err)
			}
			x, err := d.Empty(tensor.F32, tensor.Shape{n})
			if err != nil {
				d.Close()
				t.Fatal(err)
			}
			if !x.ScribblePastEnd() {
				x.Free()
				d.Close()
				t.Skipf("SKIP: %s stages its memory, and only mapped memory has guard bytes", d.Info().Name)
			}
			x.Free()
			if err := d.Close(); err == nil || !strings.Contains(err.Error(), "past the end") {
				t.Errorf("Close after an overrun: %v, want an error about writes past the end", err)
			}
		})
	}
}
