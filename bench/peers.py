#!/usr/bin/python3
"""Run the cases of `vkops bench` on numpy and PyTorch (CPU, 2 threads).

The cases, shapes and byte counts are those of bench/ops.go: select and
where on --elems elements of each dtype, the mask ops (greater, is-nan,
logical-and) on --elems elements, reduce-or (any) and reduce-and (all) on
[r, 4r] (4 x --elems bools) and on 3-D and 4-D tensors of --elems bools.
Reductions run on the same data as vkops bench: every byte counts (all
false for any, all true for all) but for the -sparse patterns, which hold
one element in 4096 of the other value (early exit); every array is
written before it is timed, since np.zeros maps one shared zero page.
The offload case is bench/offload.go's offload/whole: a select of
--elems float32 from host arrays to a host array, on the same data (a
random cond from a fixed seed, distinct values in then and else), with
numpy's where, torch's on the CPU, and with --cuda torch's from numpy to
the GPU and back.
Each case is timed after a warm-up as the median of several runs; GB/s counts bytes read plus bytes
written, as vkops bench does. numpy has no out= for where(), so it
allocates its output; torch uses out= where it has one. numpy has no
bfloat16, so bf16 runs on torch alone. Prints a table, or one JSON object
per line with --json, naming its peer and the library's version.

With --vkops FILE... (outputs of `vkops bench --json`, one per run),
prints instead a markdown table of each case on vkops, numpy and torch side
by side, with the ratios of their wall times to vkops's (above 1: vkops is
faster); with several runs, each figure is their median and its range.
--peers FILE... gives earlier outputs of this script's --json to use
rather than running the peers again.

    /usr/bin/python3 bench/peers.py [--json] [--elems N] [--runs R] [--ops OPS] [--sweep]
    /usr/bin/python3 bench/peers.py --zoo [--dtypes f32] [--vkops V.json...]
    /usr/bin/python3 bench/peers.py --vkops V1.json [V2.json...] [--peers P1.json...]

--sweep runs the suite at every size from 1024 to --elems in powers of 4;
its --json output, given to `vkops bench --sweep --plot FILE --peers
PEERS.json`, draws numpy and torch beside vkops.

--cuda runs torch on the GPU instead (peer torch-cuda): its operands are
resident there and each timed run ends in torch.cuda.synchronize(), so
that a run counts the kernel, not only its launch.

--interleave VKOPS runs each case on that vkops binary (`vkops bench
--go` for the one case, which also runs the Go loops over the same Go
slices where the case has them: peers go and go-parallel, a Go program's
own alternative) and then on the peers, --rounds times in turn, and
prints the side-by-side table of the medians (--save DIR keeps each
round's JSON for --vkops and --peers). The machine's bandwidth drifts by
up to 2x over seconds to minutes, so only figures taken moments apart
compare: this is the way to judge a ratio.

    /usr/bin/python3 bench/peers.py --interleave bin/vkops [--zoo] [--rounds 3] [--ops OPS] [--save DIR]

--zoo runs the select zoo of bench/zoo.json (`vkops bench --op select
--pattern zoo`) and the reduce zoo of bench/reduce_zoo.json (`vkops bench
--op reduce-or,reduce-and --pattern rzoo`), those of --ops, instead of
the suite; with --vkops (outputs of `vkops bench
--pattern zoo --json`) it prints each pattern beside vkops, with the ratio of
the faster peer's wall time to vkops's, and the worst ratio.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

try:
    import torch
except ImportError:  # numpy alone still gives a baseline
    torch = None

# TORCH is the torch peer's name and device: "torch" on the CPU, or
# "torch-cuda" with --cuda, where each timed run ends in a synchronize.
TORCH, TORCH_DEVICE = "torch", "cpu"

DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": None, "i8": np.int8, "bool": np.bool_}
TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i8": "int8", "bool": "bool"}


def timeit(fn, runs):
    warm = 0.0
    if TORCH_DEVICE == "cuda":
        call = fn

        def fn():
            call()
            torch.cuda.synchronize()
        warm = 0.2  # as vkops bench's GPUWarmup: the GPU's clocks rise first
    fn()
    fn()
    end = time.perf_counter() + warm
    while time.perf_counter() < end:
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def log2(n):
    if n <= 0 or n & (n - 1):
        raise SystemExit(f"--elems {n} is not a power of two")
    return n.bit_length() - 1


def general_4d(n):
    """[a, b, c, d] as bench/ops.go's general4D: factors of two handed out
    in turn to d (up to 16), c (up to 64), a (up to 16) and b."""
    caps, exp, e = [4, 6, 4, 64], [0, 0, 0, 0], log2(n)
    while e > 0:
        for i in range(4):
            if e > 0 and exp[i] < caps[i]:
                exp[i] += 1
                e -= 1
    return (1 << exp[2], 1 << exp[3], 1 << exp[1], 1 << exp[0])


def split(n, rank):
    """n = 2^e elements spread over rank dimensions, as bench/ops.go's split."""
    e = log2(n)
    return tuple((1 << (e // rank)) * (2 if i < e % rank else 1) for i in range(rank))


def select_cases(n):
    """(op, pattern, cond shape, then shape or None, else shape or None);
    None is a scalar operand."""
    rows = n // 1024
    a, b, c, d = general_4d(n)
    return [
        ("select", "same", (n,), (n,), (n,)),
        ("select", "cond-col", (rows, 1), (rows, 1024), (rows, 1024)),
        ("select", "cond-row", (1, 1024), (rows, 1024), (rows, 1024)),
        ("select", "general-4d", (a, 1, c, 1), (a, b, c, d), (1, b, 1, d)),
        ("where", "scalar-else", (n,), (n,), None),
        ("where", "scalars", (n,), None, None),
    ]


def reduce_cases(n):
    """(pattern, shape, axes, keepdims, sparse), as bench/ops.go's Reduce."""
    rows = 1 << (log2(n) // 2)
    flat = (rows, 4 * n // rows)
    cube = split(n, 3)
    return [
        ("axis1", flat, (1,), False, False),
        ("axis0", flat, (0,), False, False),
        ("all", flat, (0, 1), False, False),
        ("axis1-3d", cube, (1,), False, False),
        ("axes02-3d", cube, (0, 2), False, False),
        ("axes13-keep", split(n, 4), (1, 3), True, False),
        ("axis1-sparse", flat, (1,), False, True),
    ]


def reduce_data(shape, identity, sparse, rng):
    """The identity of the fold everywhere, or with sparse one element in
    4096 of the other value; written, so that every page is real memory."""
    data = np.empty(shape, dtype=np.bool_)
    data.fill(identity)
    if sparse:
        data[rng.random(shape, dtype=np.float32) < 1 / 4096] = not identity
    return data


def on_torch(x):
    """x as a torch tensor on the torch peer's device."""
    return torch.from_numpy(x).to(TORCH_DEVICE)


def torch_reduce(fn, td, axes, keep):
    """torch.any or torch.all over axes, one axis at a time where several."""
    if len(axes) == td.dim():
        return fn(td)
    out = td
    for a in sorted(axes, reverse=True):
        out = fn(out, dim=a, keepdim=keep)
    return out


def mask_cases(n):
    """(op, pattern, dtype, a shape, b shape or None) as bench/ops.go's Mask."""
    rows = n // 1024
    return [
        ("greater", "same", "f32", (n,), (n,)),
        ("greater", "bcast-row", "f32", (rows, 1024), (1, 1024)),
        ("is-nan", "same", "f32", (n,), None),
        ("is-nan", "same", "f16", (n,), None),
        ("logical-and", "same", "bool", (n,), (n,)),
    ]


def rand(shape, dtype, rng):
    if dtype == np.bool_:
        return rng.random(shape, dtype=np.float32) < 0.5
    return rng.integers(-100, 100, size=shape).astype(dtype)


def scalar(dname, first):
    if dname == "bool":
        return first
    return 7 if first else 3


def result(peer, op, pattern, dname, shape, t, nbytes):
    version = np.__version__ if peer == "numpy" else torch.__version__
    return dict(peer=peer, version=version, op=op, pattern=pattern, dtype=dname, shape=list(shape), bytes=int(nbytes),
                median_ms=t * 1e3, gbps=nbytes / t / 1e9)


def host_dtypes(dtypes):
    """Each name in the comma-separated dtypes with the numpy type its data
    is made as: bf16's is f32, which torch converts."""
    for dname in dtypes.split(","):
        dt = DTYPES[dname]
        yield dname, np.float32 if dt is None else dt


def select_operands(cs, ts, es, host, rng):
    """Random cond, then and else arrays of those shapes, then or else None
    where its shape is (a scalar operand); 0-D ones stay arrays, not numpy
    scalars."""
    cond = np.asarray(rng.random(cs, dtype=np.float32) < 0.5)
    then = np.asarray(rand(ts, host, rng)) if ts is not None else None
    other = np.asarray(rand(es, host, rng)) if es is not None else None
    return cond, then, other


def time_where(op, pattern, dname, cond, then, other, out_shape, runs):
    """The results of numpy's where (but for bf16, which numpy lacks) and
    torch's over cond, then and else, a None operand being the scalar of
    scalar(); the bytes count those of dtype dname, not of the f32 arrays
    that bf16 is made from."""
    dt = DTYPES[dname]
    size = 2 if dt is None else np.dtype(dt).itemsize
    nbytes = cond.nbytes + sum(x.size * size for x in (then, other) if x is not None)
    nbytes += int(np.prod(out_shape)) * size
    results = []
    if dt is not None:
        a = then if then is not None else dt(scalar(dname, True))
        b = other if other is not None else dt(scalar(dname, False))
        t = timeit(lambda: np.where(cond, a, b), runs)
        results.append(result("numpy", op, pattern, dname, out_shape, t, nbytes))
    if torch is not None:
        tdt = getattr(torch, TORCH_DTYPES[dname])
        tc = on_torch(cond)
        ta = (on_torch(then).to(tdt) if then is not None
              else torch.tensor(scalar(dname, True), dtype=tdt, device=TORCH_DEVICE))
        tb = (on_torch(other).to(tdt) if other is not None
              else torch.tensor(scalar(dname, False), dtype=tdt, device=TORCH_DEVICE))
        out = torch.empty(out_shape, dtype=tdt, device=TORCH_DEVICE)
        t = timeit(lambda: torch.where(tc, ta, tb, out=out), runs)
        results.append(result(TORCH, op, pattern, dname, out_shape, t, nbytes))
    return results


def offload_data(n):
    """The operands of bench/offload.go's offload cases: cond[i] is bit 63
    of splitmix64(i), then[i] = i and else[i] = -(i+1), as float32."""
    z = (np.arange(n, dtype=np.uint64) + np.uint64(1)) * np.uint64(0x9e3779b97f4a7c15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
    z ^= z >> np.uint64(31)
    cond = (z >> np.uint64(63)).astype(np.bool_)
    then = np.arange(n, dtype=np.float32)
    other = -np.arange(1, n + 1, dtype=np.float32)
    return cond, then, other


def time_offload(n, runs):
    """The whole offload of vkops bench's offload/whole: a select of n
    float32 from host arrays to a host array. numpy: np.where; torch on
    the CPU: the same on tensors sharing the arrays' memory; torch-cuda:
    the operands copied from numpy to the GPU, where, and the result
    copied back (.cpu(), which waits for it). The result is checked."""
    cond, then, other = offload_data(n)
    nbytes = cond.nbytes + then.nbytes + other.nbytes + then.nbytes
    want = np.where(cond, then, other)
    results = [result("numpy", "offload", "whole", "f32", (n,), timeit(lambda: np.where(cond, then, other), runs), nbytes)]
    if torch is not None:
        def job():
            c, a, b = (on_torch(x) for x in (cond, then, other))
            return torch.where(c, a, b).cpu().numpy()
        if not np.array_equal(job(), want):
            raise SystemExit(f"{TORCH} offload: wrong result")
        results.append(result(TORCH, "offload", "whole", "f32", (n,), timeit(job, runs), nbytes))
    return results


def chain_shapes(n, masked):
    """The data's and the mask's shapes of bench/chain.go's chains on n
    elements: rows of 4096, and for a masked fill [b, 64, 4096] with a
    mask of [b, 1, 4096]."""
    s = min(n, 4096)
    if not masked:
        return (n // s, s), None
    h = min(64, n // s)
    return (n // (h * s), h, s), (n // (h * s), 1, s)


# CHAINS are bench/chain.go's chains, each on numpy and on torch (x the
# data, m the mask, lib the module), and whether it takes a mask.
CHAINS = {
    "relu": (False, lambda lib, x, m: lib.where(x > 0, x, 0)),
    "clamp": (False, lambda lib, x, m: (lambda lo: lib.where(lo > 1, 1, lo))(lib.where(x < -1, -1, x))),
    "relu-max": (False, lambda lib, x, m: lib.clip(x, 0, None)),
    "clamp-op": (False, lambda lib, x, m: lib.clip(x, -1, 1)),
    "nan-check": (False, lambda lib, x, m: lib.isnan(x).any()),
    "finite-all": (False, lambda lib, x, m: lib.isfinite(x).all()),
    "masked-fill": (True, lambda lib, x, m: lib.where(m, x, -float("inf"))),
}


def chain_cases(n):
    return [("chain", name, d) for d in ("f32", "f16") for name in CHAINS]


def time_chain(pattern, dname, n, runs, compiled):
    """A chain of bench/chain.go on numpy and torch, eagerly, and with
    torch.compile where this torch has it (peer TORCH-compile): random
    normal data written before timing, a random mask. The bytes are
    those of one pass, as vkops counts them."""
    masked, fn = CHAINS[pattern]
    xs, ms = chain_shapes(n, masked)
    rng = np.random.default_rng(33)
    x = rng.standard_normal(xs, dtype=np.float32).astype(DTYPES[dname])
    m = rng.random(ms, dtype=np.float32) < 0.5 if masked else None
    size = x.itemsize
    nbytes = x.nbytes * (1 if pattern in ("nan-check", "finite-all") else 2) + (m.nbytes if masked else 0)
    results = [result("numpy", "chain", pattern, dname, xs, timeit(lambda: fn(np, x, m), runs), nbytes)]
    if torch is None:
        return results
    tx = on_torch(x)
    tm = on_torch(m) if masked else None
    try:
        results.append(result(TORCH, "chain", pattern, dname, xs, timeit(lambda: fn(torch, tx, tm), runs), nbytes))
    except RuntimeError as e:  # torch 1.13 on the CPU has no f16 clamp
        print(f"{TORCH} {pattern} {dname}: {e}", file=sys.stderr)
        return results
    if compiled and hasattr(torch, "compile"):
        try:
            cf = torch.compile(lambda a, b: fn(torch, a, b))
            results.append(result(TORCH + "-compile", "chain", pattern, dname, xs, timeit(lambda: cf(tx, tm), runs), nbytes))
        except Exception as e:  # a torch without a working compiler here
            print(f"torch.compile {pattern}: {e}", file=sys.stderr)
    return results


def wanted(args, op, pattern, dname):
    """Whether the case is one to run: its op is in --ops, and with
    --interleave it is the one case of this call (args.only)."""
    return op in args.ops and (args.only is None or args.only == (op, pattern, dname))


def run(args):
    rng = np.random.default_rng(1)
    results = []
    if torch is not None:
        torch.set_num_threads(args.threads)
    for dname, host in host_dtypes(args.dtypes):
        for op, pattern, cs, ts, es in select_cases(args.elems):
            if not wanted(args, op, pattern, dname):
                continue
            cond, then, other = select_operands(cs, ts, es, host, rng)
            out_shape = np.broadcast_shapes(cs, ts or (), es or ())
            results += time_where(op, pattern, dname, cond, then, other, out_shape, args.runs)
    for op, pattern, dname, a_shape, b_shape in mask_cases(args.elems):
        if not wanted(args, op, pattern, dname):
            continue
        dt = DTYPES[dname]
        a = rand(a_shape, dt, rng)
        if dname != "bool":
            a.flat[::97] = np.nan  # some NaNs, as vkops's random bits have
        b = rand(b_shape, dt, rng) if b_shape is not None else None
        out = np.empty(np.broadcast_shapes(a_shape, b_shape or ()), dtype=np.bool_)
        out.fill(False)
        nbytes = a.nbytes + (b.nbytes if b is not None else 0) + out.nbytes
        np_fn = {"greater": lambda: np.greater(a, b, out=out),
                 "is-nan": lambda: np.isnan(a, out=out),
                 "logical-and": lambda: np.logical_and(a, b, out=out)}[op]
        t = timeit(np_fn, args.runs)
        results.append(result("numpy", op, pattern, dname, out.shape, t, nbytes))
        if torch is not None:
            ta = on_torch(a)
            tb = on_torch(b) if b is not None else None
            tout = on_torch(out)
            # torch.isnan has no out=; it allocates, as a caller's would.
            t_fn = {"greater": lambda: torch.gt(ta, tb, out=tout),
                    "is-nan": lambda: torch.isnan(ta),
                    "logical-and": lambda: torch.logical_and(ta, tb, out=tout)}[op]
            t = timeit(t_fn, args.runs)
            results.append(result(TORCH, op, pattern, dname, out.shape, t, nbytes))
    if wanted(args, "offload", "whole", "f32"):
        results += time_offload(args.elems, args.runs)
    for op, pattern, dname in chain_cases(args.elems):
        if wanted(args, op, pattern, dname) and dname in args.dtypes.split(","):
            results += time_chain(pattern, dname, args.elems, args.runs, args.compile)
    for op in REDUCE_OPS:
        for pattern, shape, axes, keep, sparse in reduce_cases(args.elems):
            if wanted(args, op, pattern, "bool"):
                results += time_reduce(op, pattern, shape, axes, keep, sparse, rng, args.runs)
    return results


# REDUCE_OPS maps each reduction to its numpy function, torch's name for
# it and the identity of its fold.
REDUCE_OPS = {"reduce-or": (np.any, "any", False), "reduce-and": (np.all, "all", True)}


def time_reduce(op, pattern, shape, axes, keep, sparse, rng, runs):
    """numpy's and torch's any or all over axes of a bool array of shape:
    the identity everywhere, or with sparse one element in 4096 of the
    other value."""
    npfn, tfn, identity = REDUCE_OPS[op]
    axes = tuple(axes)
    data = reduce_data(shape, identity, sparse, rng)
    out_elems = int(np.prod([1 if i in axes else s for i, s in enumerate(shape)]))
    nbytes = data.nbytes + out_elems
    t = timeit(lambda: npfn(data, axis=axes, keepdims=keep), runs)
    results = [result("numpy", op, pattern, "bool", shape, t, nbytes)]
    if torch is not None:
        td = on_torch(data)
        fn = getattr(torch, tfn)
        t = timeit(lambda: torch_reduce(fn, td, axes, keep), runs)
        results.append(result(TORCH, op, pattern, "bool", shape, t, nbytes))
    return results


def zoo_patterns(name="zoo.json"):
    """The patterns of bench/zoo.json, or of another of bench's zoos."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name)) as f:
        return json.load(f)


def run_zoo(args):
    """The zoos' patterns on numpy and torch, as bench/zoo.go's and
    bench/reduce_zoo.go's cases: select (numpy and pdpd broadcast alike
    here: pdpd's operands align on the right) or where, a null then or
    else being a scalar; any or all on the data where every byte counts."""
    rng = np.random.default_rng(1)
    results = []
    if torch is not None:
        torch.set_num_threads(args.threads)
    for dname, host in host_dtypes(args.dtypes):
        for p in zoo_patterns():
            if not wanted(args, p["op"], p["name"], dname):
                continue
            cond, then, other = select_operands(p["cond"], p["then"], p["else"], host, rng)
            out_shape = tuple(p["out"])
            results += time_where(p["op"], p["name"], dname, cond, then, other, out_shape, args.runs)
    for p in zoo_patterns("reduce_zoo.json"):
        if wanted(args, p["op"], p["name"], "bool"):
            results += time_reduce(p["op"], p["name"], p["shape"], p["axes"], p["keep"], False, rng, args.runs)
    return results


def suite_cases(args):
    """(op, pattern, dtype) of each case run() or run_zoo() would run, in
    their order."""
    if args.zoo:
        return [(p["op"], p["name"], d) for d, _ in host_dtypes(args.dtypes) for p in zoo_patterns()
                if p["op"] in args.ops] + \
            [(p["op"], p["name"], "bool") for p in zoo_patterns("reduce_zoo.json") if p["op"] in args.ops]
    cases = [(op, pattern, d) for d, _ in host_dtypes(args.dtypes)
             for op, pattern, *_ in select_cases(args.elems) if op in args.ops]
    cases += [(op, pattern, d) for op, pattern, d, *_ in mask_cases(args.elems) if op in args.ops]
    cases += [(op, pattern, "bool") for op in ("reduce-or", "reduce-and") if op in args.ops
              for pattern, *_ in reduce_cases(args.elems)]
    cases += [("offload", "whole", "f32")] if "offload" in args.ops else []
    cases += [c for c in chain_cases(args.elems) if "chain" in args.ops and c[2] in args.dtypes.split(",")]
    return cases


def interleave(args):
    """Each case on vkops, then on the peers, in turn, --rounds times
    (vkops's wall times are its own median of --runs, as are the peers'):
    the machine's bandwidth drifts by 2x over seconds to minutes, so only
    figures taken moments apart compare. Returns the vkops rows and the
    peers' results of each round, as --vkops and --peers read them."""
    vk_runs = [[] for _ in range(args.rounds)]
    peer_runs = [[] for _ in range(args.rounds)]
    size = [] if args.zoo else ["--size", str(args.elems)]
    for case in suite_cases(args):
        op, pattern, dname = case
        for r in range(args.rounds):
            # --go: the Go loops over the same slices (bench/goloop.go), a
            # Go program's own alternative, moments after the case; peers.
            cmd = [args.interleave, "bench", "--op", op, "--pattern", pattern, "--dtype", dname,
                   "--runs", str(args.runs), "--overhead=false", "--json", "--go"] + size
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            rows = [row for line in out.splitlines() if line.strip()
                    for row in [json.loads(line)] if row.get("op") == op and "wall_median_ms" in row]
            vk_runs[r] += [row for row in rows if not row.get("peer")]
            peer_runs[r] += [row for row in rows if row.get("peer")]
            args.only = case
            peer_runs[r] += (run_zoo if args.zoo else run)(args)
            args.only = None
    return vk_runs, peer_runs


def by_case(vkops_runs, peer_runs, key, wanted):
    """The runs grouped by case, key(row) naming it: the peers' median_ms
    by (peer,) + case, the vkops rows that wanted(row) keeps by case, and
    those cases in the order first met."""
    peers = {}
    for run in peer_runs:
        for r in run:
            peers.setdefault((r["peer"],) + key(r), []).append(r["median_ms"])
    vk, order = {}, []
    for run in vkops_runs:
        for r in run:
            if wanted(r):
                if key(r) not in vk:
                    order.append(key(r))
                vk.setdefault(key(r), []).append(r)
    return peers, vk, order


def zoo_side_by_side(vkops_runs, peer_runs):
    """A markdown table of the zoo: vkops's GB/s and fraction of copy, the
    peers' wall times and the ratio of the faster one's to vkops's (above
    1: vkops is faster), then the worst ratio and the geometric means."""
    def key(r):
        return (r["pattern"], r["dtype"])
    peers, vk, order = by_case(vkops_runs, peer_runs, key, lambda r: r.get("pattern", "").startswith(("zoo-", "rzoo-")))
    tp = torch_peer(peer_runs)
    print(f"| pattern | shape | vkops GB/s | of copy | vkops wall ms | numpy ms | {tp} ms | faster peer / vkops |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    ratios, fracs = [], []
    for k in order:
        rs = vk[k]
        r0 = rs[0]
        wall = statistics.median(r["wall_median_ms"] for r in rs)
        gbps = statistics.median(r["gbps"] for r in rs)
        frac = statistics.median(r["fraction_of_copy"] for r in rs)
        cells = [f"{r0['op']}/{k[0]}/{k[1]}", str(r0["shape"]).replace(" ", ""), f"{gbps:.2f}", f"{frac:.2f}", f"{wall:.2f}"]
        best = math.inf
        for peer in ("numpy", tp):
            ms = peers.get((peer,) + k)
            if ms:
                m = statistics.median(ms)
                best = min(best, m)
                cells.append(f"{m:.2f}")
            else:
                cells.append("–")
        ratio = best / wall
        ratios.append((ratio, k))
        fracs.append(frac)
        cells.append(f"{ratio:.2f}")
        print("| " + " | ".join(cells) + " |")
    if ratios:
        worst = min(ratios)
        geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        fgeo = math.exp(sum(math.log(f) for f in fracs) / len(fracs))
        print(f"\nworst faster-peer / vkops: {worst[0]:.2f} ({worst[1][0]}/{worst[1][1]}); geometric mean {geo:.2f}; "
              f"of copy: worst {min(fracs):.2f}, geometric mean {fgeo:.2f}")


def torch_peer(peer_runs):
    """The torch peer's name in peer_runs: torch-cuda where it ran there."""
    return "torch-cuda" if any(r["peer"] == "torch-cuda" for run in peer_runs for r in run) else "torch"


def load(files):
    """JSON lines from each file, grouped by file."""
    out = []
    for name in files:
        with open(name) as f:
            out.append([json.loads(line) for line in f if line.strip()])
    return out


def spread(xs):
    """The median of xs, with its range when there are several."""
    m = statistics.median(xs)
    if len(xs) == 1:
        return f"{m:.2f}", m
    return f"{m:.2f} ({min(xs):.2f}–{max(xs):.2f})", m


def side_by_side(vkops_runs, peer_runs):
    """A markdown table: each vkops case with numpy and torch beside it,
    each the median over the runs given, with its range. The ratios are of
    those medians of wall times, what a caller waits for: vkops's wall time
    includes recording, submitting and waiting, its GPU time does not."""
    def key(r):
        return (r["op"], r["pattern"], r["dtype"], tuple(r["shape"]))
    ops = ("select", "where", "reduce-or", "reduce-and", "greater", "is-nan", "logical-and", "offload")
    peers, vk, order = by_case(vkops_runs, peer_runs, key, lambda r: r.get("op") in ops and "wall_median_ms" in r)
    names = ["numpy", torch_peer(peer_runs)] + go_peers(peer_runs)
    print("| case | vkops gpu ms | vkops wall ms | vkops GB/s | of copy | " + " | ".join(f"{n} ms | {n} / vkops" for n in names) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|---:|" * len(names))
    for k in order:
        rs = vk[k]
        op, pattern, dtype, shape = k
        gpu, _ = spread([r["median_ms"] for r in rs])
        wall, wall_m = spread([r["wall_median_ms"] for r in rs])
        gbps, _ = spread([r["gbps"] for r in rs])
        frac, _ = spread([r["fraction_of_copy"] for r in rs])
        cells = [f"{op}/{pattern}/{dtype}{list(shape)}".replace(", ", " "), gpu, wall, gbps, frac]
        for peer in names:
            cells += peer_cells(peers.get((peer,) + k), wall_m)
        print("| " + " | ".join(cells) + " |")


def go_peers(peer_runs):
    """The Go loops among the peers (bench/goloop.go), in their order."""
    return [n for n in ("go", "go-parallel") if any(r["peer"] == n for run in peer_runs for r in run)]


def peer_cells(ms, base):
    """A peer's two cells: its times' median and range, and that median
    over base; dashes where it ran no case."""
    if not ms:
        return ["–", "–"]
    text, m = spread(ms)
    return [text, f"{m / base:.2f}"]


def chain_side_by_side(vkops_runs, peer_runs):
    """A markdown table of the chains: each fused and unfused on vkops,
    the unfused over the fused (the median of the rounds' ratios, each
    taken in one run), the fused chain from Go slices to Go slices where
    it ran (`slices`), and the peers beside, each over the fused, but the
    Go loops, which run from slices too, over that; wall times, what a
    caller waits for."""
    rounds = []
    for vk in vkops_runs:
        by = {}
        for r in vk:
            if r.get("op") == "chain" and "fused" in r:
                by[(r["pattern"], r["dtype"], "slices" if r.get("slices") else r["fused"])] = r
        rounds.append(by)
    peers = {}
    for run in peer_runs:
        for r in run:
            if r.get("op") == "chain":
                peers.setdefault((r["peer"], r["pattern"], r["dtype"]), []).append(r["median_ms"])
    cases = []
    for by in rounds:
        cases += [(p, d) for (p, d, f) in by if f is True and (p, d) not in cases]
    if not cases:
        return
    gos = go_peers(peer_runs)
    names = sorted({k[0] for k in peers} - set(gos), key=lambda n: (n != "numpy", n)) + gos
    print()
    print("| chain | vkops fused ms | unfused ms | unfused / fused | slices ms | " +
          " | ".join(f"{n} ms | {n} / {'slices' if n in gos else 'fused'}" for n in names) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|---:|" * len(names))
    for p, d in cases:
        def walls(kind):
            return [by[(p, d, kind)]["wall_median_ms"] for by in rounds if (p, d, kind) in by]
        ratios = [by[(p, d, False)]["wall_median_ms"] / by[(p, d, True)]["wall_median_ms"] for by in rounds
                  if (p, d, True) in by and (p, d, False) in by]
        f_text, f_m = spread(walls(True))
        u_text, _ = spread(walls(False))
        r_text, _ = spread(ratios)
        slices = walls("slices")
        s_text, s_m = spread(slices) if slices else ("–", None)
        cells = [f"{p}/{d}", f_text, u_text, r_text, s_text]
        for n in names:
            base = s_m if n in gos else f_m
            cells += peer_cells(peers.get((n, p, d)), base) if base else ["–", "–"]
        print("| " + " | ".join(cells) + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--elems", type=int, default=1 << 24, help="elements of the select and where cases")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--cuda", action="store_true",
                   help="run torch on the GPU (peer torch-cuda), its data resident there, each run synchronized")
    p.add_argument("--dtypes", default="f32,f16,bf16,i8,bool")
    p.add_argument("--ops", default="select,where,greater,is-nan,logical-and,reduce-or,reduce-and,offload,chain",
                   help="comma-separated ops to run")
    p.add_argument("--compile", action="store_true", help="also run the chains with torch.compile, where this torch has it")
    p.add_argument("--zoo", action="store_true", help="run the select and reduce zoos (bench/zoo.json, bench/reduce_zoo.json) instead of the suite")
    p.add_argument("--sweep", action="store_true",
                   help="run the suite at every size from 1024 to --elems in powers of 4, as vkops bench --sweep does")
    p.add_argument("--vkops", metavar="FILE", nargs="+",
                   help="`vkops bench --json` outputs, one per run, to set beside the peers")
    p.add_argument("--peers", metavar="FILE", nargs="+",
                   help="with --vkops, earlier `peers.py --json` outputs, one per run, instead of running now")
    p.add_argument("--interleave", metavar="VKOPS",
                   help="run each case on this vkops binary and on the peers in turn, --rounds times, and print the side-by-side table")
    p.add_argument("--rounds", type=int, default=5, help="with --interleave, the turns each case takes")
    p.add_argument("--save", metavar="DIR",
                   help="with --interleave, also write each round's vkops rows and peers' results as DIR/vkN.json and DIR/peersN.json")
    args = p.parse_args()
    args.only = None
    args.ops = args.ops.split(",")
    if args.cuda:
        if torch is None or not torch.cuda.is_available():
            raise SystemExit("--cuda: torch sees no CUDA device")
        global TORCH, TORCH_DEVICE
        TORCH, TORCH_DEVICE = "torch-cuda", "cuda"
    for d in args.dtypes.split(","):
        if d not in DTYPES:
            raise SystemExit(f"unknown dtype {d!r} (want one of {', '.join(DTYPES)})")
    measure = run_zoo if args.zoo else run
    show = zoo_side_by_side if args.zoo else side_by_side
    if args.interleave:
        vk_runs, peer_runs = interleave(args)
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            for i, (vk, peers) in enumerate(zip(vk_runs, peer_runs), 1):
                for name, rows in ((f"vk{i}.json", vk), (f"peers{i}.json", peers)):
                    with open(os.path.join(args.save, name), "w") as f:
                        f.writelines(json.dumps(r) + "\n" for r in rows)
        show(vk_runs, peer_runs)
        chain_side_by_side(vk_runs, peer_runs)
        return
    if args.vkops:
        vk_runs, peer_runs = load(args.vkops), load(args.peers) if args.peers else [measure(args)]
        # Go loops that `vkops bench --go` printed among its rows are peers.
        peer_runs = [p + [r for r in v if r.get("peer")] for p, v in zip(peer_runs, vk_runs)] + peer_runs[len(vk_runs):]
        vk_runs = [[r for r in v if not r.get("peer")] for v in vk_runs]
        show(vk_runs, peer_runs)
        chain_side_by_side(vk_runs, peer_runs)
        return
    if args.sweep:
        if args.zoo:
            raise SystemExit("--sweep runs the suite, not the zoo")
        results, top, n = [], args.elems, 1024
        while n <= top:
            args.elems = n
            results += measure(args)
            n *= 4
    else:
        results = measure(args)
    if args.json:
        for r in results:
            print(json.dumps(r))
        return
    print(f"numpy {np.__version__}, torch {torch.__version__ if torch else 'absent'} on {TORCH_DEVICE}, {args.threads} threads")
    print(f"{'peer':6} {'op':10} {'pattern':12} {'dtype':5} {'shape':22} {'ms':>9} {'GB/s':>7}")
    for r in results:
        print(f"{r['peer']:6} {r['op']:10} {r['pattern']:12} {r['dtype']:5} {str(r['shape']):22} "
              f"{r['median_ms']:9.3f} {r['gbps']:7.2f}")


if __name__ == "__main__":
    main()
