package main

import (
	"errors"
	"math"

	"github.com/vkops/vkops/device"
	"github.com/vkops/vkops/internal/bridge"
	"github.com/vkops/vkops/npy"
	"github.com/vkops/vkops/ops"
	"github.com/vkops/vkops/tensor"
)

// runSelect is `vkops select COND THEN ELSE -o OUT [--broadcast numpy|none|pdpd] [--dtype bf16]`.
func runSelect(e *env, args []string) error {
	const name = "select"
	fs := newFlags(e, name, "select COND THEN ELSE -o OUT [--broadcast numpy|none|pdpd] [--dtype bf16]",
		"vkops select mask.npy a.npy b.npy -o out.npy --broadcast pdpd")
	mode := fs.String("broadcast", "numpy", "auto_broadcast: numpy, none or pdpd")
	dtArg := fs.String("dtype", "", "bf16: round float32 THEN and ELSE to bfloat16, select, and write float32 "+
		"holding the bfloat16 values (default: the files' own type)")
	outPath := fs.String("o", "", "the output .npy file")
	pos, err := parseNumberArgs(fs, args) // "-1" is a file name here, not a flag
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 3:
		return badInput("%s: want COND THEN ELSE files, got %d arguments", name, len(pos))
	case *outPath == "":
		return badInput("%s: -o OUT is required", name)
	}
	if err := checkOutputDir(name, "-o", *outPath); err != nil {
		return err
	}
	b, err := parseBroadcast(name, *mode)
	if err != nil {
		return err
	}
	bf16 := false
	if *dtArg != "" {
		dt, err := tensor.ParseDType(*dtArg)
		if err != nil {
			return badInput("%s: --dtype: %v", name, err)
		}
		if dt != tensor.BF16 {
			return badInput("%s: --dtype %v: select takes its type from THEN and ELSE; only bf16, which .npy files cannot hold, is given so", name, dt)
		}
		bf16 = true
	}
	var hosts [3]*tensor.Host
	roles := [3]string{"COND", "THEN", "ELSE"}
	for i, p := range pos {
		if hosts[i], err = readFile(name, roles[i], p); err != nil {
			return err
		}
		switch {
		case i == 0 || !bf16:
		case hosts[i].DType != tensor.F32:
			return badInput("%s: --dtype bf16 takes float32 files, %s is %v", name, p, hosts[i].DType)
		default:
			hosts[i] = toBF16(hosts[i])
		}
	}

	return runOnDevice(e, name, []any{hosts[0], hosts[1], hosts[2]}, func(x []any) (*device.Tensor, error) {
		return ops.Select(x[0].(*device.Tensor), x[1].(*device.Tensor), x[2].(*device.Tensor), ops.WithBroadcast(b))
	}, *outPath, bf16)
}

// runWhere is `vkops where COND INPUT OTHER -o OUT [--dtype T]`.
func runWhere(e *env, args []string) error {
	const name = "where"
	fs := newFlags(e, name, "where COND INPUT OTHER -o OUT [--dtype T]",
		"vkops where mask.npy x.npy -1 -o out.npy", numberRule("INPUT and OTHER")+
			"\nA number beside a file takes its type; two numbers take --dtype.")
	dtArg := fs.String("dtype", "", "element type of INPUT and OTHER when both are numbers (default f32); "+
		"bf16 rounds float32 files to bfloat16 and writes float32 holding the bfloat16 values")
	outPath := fs.String("o", "", "the output .npy file")
	pos, err := parseNumberArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 3:
		return badInput("%s: want COND INPUT OTHER (INPUT and OTHER: .npy files or numbers), got %d arguments", name, len(pos))
	case *outPath == "":
		return badInput("%s: -o OUT is required", name)
	}
	if err := checkOutputDir(name, "-o", *outPath); err != nil {
		return err
	}
	dt := tensor.Invalid
	if *dtArg != "" {
		if dt, err = tensor.ParseDType(*dtArg); err != nil {
			return badInput("%s: --dtype: %v", name, err)
		}
	}
	cond, err := readFile(name, "COND", pos[0])
	if err != nil {
		return err
	}
	// INPUT and OTHER: a number, else a file, then rounded for bf16.
	roles := []string{"input", "other"}
	operands := make([]any, 2)
	for i, arg := range pos[1:] {
		if operands[i], err = readOperand(name, roles[i], arg, dt); err != nil {
			return err
		}
	}
	// Numbers beside a tensor take its type; two numbers take --dtype.
	scalarType := dt
	if scalarType == tensor.Invalid {
		scalarType = tensor.F32
	}
	if err := settleNumbers(name, roles, operands, scalarType); err != nil {
		return err
	}

	return runOnDevice(e, name, []any{cond, operands[0], operands[1]}, func(x []any) (*device.Tensor, error) {
		return ops.Where(x[0].(*device.Tensor), x[1], x[2])
	}, *outPath, dt == tensor.BF16)
}

// parseBroadcast reads the --broadcast flag: numpy, none or pdpd.
func parseBroadcast(name, mode string) (ops.Broadcast, error) {
	switch mode {
	case "numpy":
		return ops.BroadcastNumpy, nil
	case "none":
		return ops.BroadcastNone, nil
	case "pdpd":
		return ops.BroadcastPDPD, nil
	}
	return 0, badInput("%s: unknown --broadcast %q (want numpy, none or pdpd)", name, mode)
}

// toBF16 rounds a float32 tensor to bfloat16, to nearest even.
func toBF16(h *tensor.Host) *tensor.Host {
	out := &tensor.Host{DType: tensor.BF16, Shape: h.Shape, Data: make([]byte, len(h.Data)/2)}
	for i := range h.Len() {
		b := h.Data[4*i : 4*i+4]
		v := tensor.BF16FromFloat32(math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24))
		out.Data[2*i], out.Data[2*i+1] = byte(v), byte(v>>8)
	}
	return out
}

// fromBF16 widens a bfloat16 tensor to float32, exactly.
func fromBF16(h *tensor.Host) *tensor.Host {
	out := &tensor.Host{DType: tensor.F32, Shape: h.Shape, Data: make([]byte, 2*len(h.Data))}
	for i := range h.Len() {
		out.Data[4*i+2], out.Data[4*i+3] = h.Data[2*i], h.Data[2*i+1]
	}
	return out
}

// opError makes an op's rejection of its inputs bad input (exit status 2);
// any other error is the device's (1).
func opError(err error) error {
	if errors.Is(err, ops.ErrInvalid) {
		return badInput("%v", err)
	}
	return err
}

// runOnDevice opens the device, puts each host tensor among operands on
// it in its place, runs op on them and writes op's result to path as
// download does; op's rejection of its inputs is bad input (opError). The
// tensors are freed and the device closed on return.
func runOnDevice(e *env, name string, operands []any, op func(operands []any) (*device.Tensor, error), path string, widen bool) error {
	d, err := e.open()
	if err != nil {
		return err
	}
	defer d.Close()
	for i, o := range operands {
		if h, ok := o.(*tensor.Host); ok {
			t, err := bridge.Upload(d, h)
			if err != nil {
				return err
			}
			defer t.Free()
			operands[i] = t
		}
	}
	y, err := op(operands)
	if err != nil {
		return opError(err)
	}
	defer y.Free()
	return download(name, y, path, widen)
}

// download writes the result to path, as float32 when it is bfloat16 and
// widen is set; npy.WriteFile leaves no partial file behind.
func download(name string, y *device.Tensor, path string, widen bool) error {
	h, err := bridge.Tensor(y).Download()
	if err != nil {
		return err
	}
	if widen {
		h = fromBF16(h)
	}
	if err := npy.WriteFile(path, h); err != nil {
		return badInput("%s: %v", name, err)
	}
	return nil
}
