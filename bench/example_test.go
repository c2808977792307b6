package bench_test

import (
	"fmt"

	"github.com/vkops/vkops/bench"
	"github.com/vkops/vkops/device"
)

// Run times a case on a device: here the device's own copy of 1 MiB,
// the baseline that ops' bandwidth is compared with. Timings vary from
// run to run, so this prints what does not.
func ExampleRun() {
	d, err := device.Open(device.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	c := bench.Copy(1 << 20)
	r, err := bench.Run(d, c, bench.Options{Warmup: 1, Runs: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name())
	fmt.Println(r.Op, r.Bytes, "bytes moved per run")
	fmt.Println("timed:", r.MedianMS > 0 && r.WallMS > 0 && r.GBps > 0)
	// Output:
	// copy/-/u8[1048576]
	// copy 2097152 bytes moved per run
	// timed: true
}
