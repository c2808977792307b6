#!/usr/bin/python3
"""Run the cases of `vkops bench` on numpy and PyTorch (CPU, 2 threads).

Each case is timed after a warm-up as the median of several runs; GB/s
counts bytes read plus bytes written, as vkops bench does. numpy has no
out= for where(), so it allocates its output; torch uses out= where it has
one. Prints a table, or one JSON object per line with --json.

    /usr/bin/python3 bench/peers.py [--json] [--elems N] [--runs R]
"""
import argparse
import json
import statistics
import time

import numpy as np

try:
    import torch
except ImportError:  # numpy alone still gives a baseline
    torch = None

DTYPES = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "bool": np.bool_}


def timeit(fn, runs):
    fn()
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def select_cases(n, dtype):
    """(pattern, cond shape, then shape, else shape or None for a scalar)."""
    rows = n // 1024
    return [
        ("same", (n,), (n,), (n,)),
        ("cond-col", (rows, 1), (rows, 1024), (rows, 1024)),
        ("cond-row", (1, 1024), (rows, 1024), (rows, 1024)),
        ("scalar-else", (n,), (n,), None),
        ("general-4d", (16, 1, 64, 1), (16, n // 16 // 64 // 16, 64, 16), (1, n // 16 // 64 // 16, 1, 16)),
    ]


def reduce_cases():
    return [
        ("axis1", (4096, 16384), (1,), False),
        ("axis0", (4096, 16384), (0,), False),
        ("all", (4096, 16384), (0, 1), False),
        ("axes13-keep", (64, 64, 64, 64), (1, 3), True),
    ]


def rand(shape, dtype, rng):
    if dtype == np.bool_:
        return rng.random(shape, dtype=np.float32) < 0.5
    return rng.integers(-100, 100, size=shape).astype(dtype)


def run(args):
    rng = np.random.default_rng(1)
    results = []
    if torch is not None:
        torch.set_num_threads(args.threads)
    for dname in args.dtypes.split(","):
        dt = DTYPES[dname]
        for pattern, cs, ts, es in select_cases(args.elems, dt):
            cond = rng.random(cs, dtype=np.float32) < 0.5
            then = rand(ts, dt, rng)
            other = rand(es, dt, rng) if es is not None else dt(7)
            out_shape = np.broadcast_shapes(cs, ts, es or ())
            nbytes = cond.nbytes + then.nbytes + (other.nbytes if es is not None else 0)
            nbytes += int(np.prod(out_shape)) * np.dtype(dt).itemsize
            t = timeit(lambda: np.where(cond, then, other), args.runs)
            results.append(dict(peer="numpy", op="select", pattern=pattern, dtype=dname,
                                shape=list(out_shape), median_ms=t * 1e3, gbps=nbytes / t / 1e9))
            if torch is not None and dname != "bool":
                tc, tt = torch.from_numpy(cond), torch.from_numpy(then)
                to = torch.from_numpy(other) if es is not None else torch.tensor(7, dtype=tt.dtype)
                out = torch.empty(out_shape, dtype=tt.dtype)
                t = timeit(lambda: torch.where(tc, tt, to, out=out), args.runs)
                results.append(dict(peer="torch", op="select", pattern=pattern, dtype=dname,
                                    shape=list(out_shape), median_ms=t * 1e3, gbps=nbytes / t / 1e9))
    for pattern, shape, axes, keep in reduce_cases():
        data = np.zeros(shape, dtype=np.bool_)
        data.flat[-1] = True  # the worst case for early exits: the only true is last
        nbytes = data.nbytes
        t = timeit(lambda: np.any(data, axis=axes, keepdims=keep), args.runs)
        results.append(dict(peer="numpy", op="reduce-or", pattern=pattern, dtype="bool",
                            shape=list(shape), median_ms=t * 1e3, gbps=nbytes / t / 1e9))
        if torch is not None:
            td = torch.from_numpy(data)
            t = timeit(lambda: torch.any(td, dim=axes[0], keepdim=keep) if len(axes) == 1
                       else td.any() if len(axes) == len(shape)
                       else td.any(dim=axes[1], keepdim=True).any(dim=axes[0], keepdim=keep), args.runs)
            results.append(dict(peer="torch", op="reduce-or", pattern=pattern, dtype="bool",
                                shape=list(shape), median_ms=t * 1e3, gbps=nbytes / t / 1e9))
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--elems", type=int, default=1 << 24, help="elements of the select cases")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--dtypes", default="f32,f16,i8")
    args = p.parse_args()
    results = run(args)
    if args.json:
        for r in results:
            print(json.dumps(r))
        return
    print(f"numpy {np.__version__}, torch {torch.__version__ if torch else 'absent'}, {args.threads} threads")
    print(f"{'peer':6} {'op':10} {'pattern':12} {'dtype':5} {'shape':22} {'ms':>9} {'GB/s':>7}")
    for r in results:
        print(f"{r['peer']:6} {r['op']:10} {r['pattern']:12} {r['dtype']:5} {str(r['shape']):22} "
              f"{r['median_ms']:9.3f} {r['gbps']:7.2f}")


if __name__ == "__main__":
    main()
