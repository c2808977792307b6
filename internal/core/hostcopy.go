package core

import (
	"runtime"
	"sync"

	"github.com/vkops/vkops/tensor"
)

// minCopyPart is the fewest bytes a copy hands to another goroutine:
// waking a worker costs a few microseconds, a copy of 1 MiB about 50.
// Where one core cannot saturate memory, as on the hosts of GPUs, that
// pays; on lavapipe's 2-vCPU machine two goroutines copied 64 MiB in
// 3.3 ms, as one did (20 GB/s), and in 1.65x the speed in an earlier
// measurement.
const minCopyPart = 1 << 20

// boolBlock is how much of a bool download is copied before its bytes
// are made canonical, while they are still in the CPU's caches.
const boolBlock = 64 << 10

// copyJob is a part of a copy that a worker does.
type copyJob struct {
	dst, src []byte
	bools    bool
	done     *sync.WaitGroup
}

// copyWorkers are goroutines that copy parts of large copies. They are
// started on first need and kept, so that a copy allocates nothing.
var copyWorkers struct {
	sync.Mutex
	n    int
	jobs chan copyJob
}

// waitGroups hands out the WaitGroups that copies wait on.
var waitGroups = sync.Pool{New: func() any { return new(sync.WaitGroup) }}

// hostCopy copies src into dst, which are equally long, over up to
// GOMAXPROCS goroutines, the caller's one of them. With bools, each byte
// of dst is made 0 or 1 (tensor.CanonicalBools) as it is copied.
func hostCopy(dst, src []byte, bools bool) {
	parts := min(runtime.GOMAXPROCS(0), len(src)/minCopyPart)
	if parts <= 1 {
		copyPart(dst, src, bools)
		return
	}
	startWorkers(parts - 1)
	wg := waitGroups.Get().(*sync.WaitGroup)
	// Parts end on 64-byte boundaries, so that no cache line is written
	// by two goroutines.
	step := (len(src)/parts + 63) &^ 63
	for lo := step; lo < len(src); lo += step {
		hi := min(lo+step, len(src))
		wg.Add(1)
		copyWorkers.jobs <- copyJob{dst: dst[lo:hi], src: src[lo:hi], bools: bools, done: wg}
	}
	copyPart(dst[:step], src[:step], bools)
	wg.Wait()
	waitGroups.Put(wg)
}

func copyPart(dst, src []byte, bools bool) {
	if !bools {
		copy(dst, src)
		return
	}
	for len(src) > 0 {
		n := copy(dst[:min(len(dst), boolBlock)], src)
		tensor.CanonicalBools(dst[:n])
		dst, src = dst[n:], src[n:]
	}
}

// startWorkers makes sure at least n copy workers run.
func startWorkers(n int) {
	copyWorkers.Lock()
	defer copyWorkers.Unlock()
	if copyWorkers.jobs == nil {
		copyWorkers.jobs = make(chan copyJob, runtime.NumCPU())
	}
	for ; copyWorkers.n < n; copyWorkers.n++ {
		go func() {
			for j := range copyWorkers.jobs {
				copyPart(j.dst, j.src, j.bools)
				j.done.Done()
			}
		}()
	}
}
