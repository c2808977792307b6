#!/usr/bin/python3
"""Compare builds of vkops on the same cases, run in turn.

usage: bench/ab.py [--rounds R] [--stat min_ms|median_ms|wall_median_ms] A B [C ...] -- BENCH ARGS

Each round runs `BIN bench --json --overhead=false BENCH ARGS` once for
every binary, the order rotated from round to round. For each case it
prints the first binary's time and, for every other, its time and the
median over the rounds of its time over the first binary's in the same
round, then the geometric mean of those ratios (below 1: faster than A).

Comparing within a round, not medians of whole runs, is what makes two
builds comparable on a shared machine: other tenants slow it by up to 2x
for seconds at a time, more than most kernel changes gain. Even so, two
identical builds, six rounds, gave per-case ratios of 0.74 to 1.12 with
the default statistic, each case's fastest timed run (min_ms), and 0.85
to 1.32 with medians: trust a change of 2x, repeat one of 10%.

example:
  bench/ab.py --rounds 8 /tmp/vkops-before bin/vkops -- --op reduce-and --pattern axis1,all --runs 9
"""
import argparse
import json
import math
import statistics
import subprocess
import sys


def run(binary, args):
    """The cases of one bench run: name -> its JSON object."""
    out = subprocess.run([binary, "bench", "--json", "--overhead=false"] + args,
                         capture_output=True, text=True, check=True).stdout
    cases = {}
    for line in out.splitlines():
        r = json.loads(line)
        if "median_ms" in r:
            name = case_name(r)
            if name in cases:
                sys.exit("ab.py: %s gave two cases named %s" % (binary, name))
            cases[name] = r
    return cases


def case_name(r):
    """A result's name, as bench.Case.Name spells it: a chain's fused
    and slices cases are apart, or the second would replace the first."""
    name = "%s/%s/%s%s" % (r["op"], r["pattern"], r["dtype"], r["shape"])
    if "fused" in r:
        name += "/fused" if r["fused"] else "/unfused"
    if r.get("slices"):
        name += "/slices"
    if r.get("peer"):
        name += "/" + r["peer"]
    return name


def main():
    if "--" not in sys.argv:
        sys.exit(__doc__)
    split = sys.argv.index("--")
    p = argparse.ArgumentParser(usage=__doc__)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--stat", default="min_ms", choices=["min_ms", "median_ms", "wall_median_ms"])
    p.add_argument("bins", nargs="+")
    opts = p.parse_args(sys.argv[1:split])
    args = sys.argv[split + 1:]
    if len(opts.bins) < 2:
        sys.exit("ab.py: give at least two binaries")
    base = opts.bins[0]
    rounds = {}  # case -> [{binary: ms}] per round
    for r in range(opts.rounds):
        k = r % len(opts.bins)
        got = {}
        for b in opts.bins[k:] + opts.bins[:k]:
            for name, res in run(b, args).items():
                got.setdefault(name, {})[b] = res[opts.stat]
        for name, times in got.items():
            if len(times) == len(opts.bins):
                rounds.setdefault(name, []).append(times)
    logs = {b: [] for b in opts.bins[1:]}
    for name, rs in rounds.items():
        line = "%-48s A %8.3f ms" % (name, statistics.median(t[base] for t in rs))
        for b in opts.bins[1:]:
            q = statistics.median(t[b] / t[base] for t in rs)
            logs[b].append(math.log(q))
            line += "  %s %8.3f ms (x%.2f)" % (b, statistics.median(t[b] for t in rs), q)
        print(line)
    for b, ls in logs.items():
        if ls:
            print("%s over %s, geometric mean of per-round ratios: %.3f" % (b, base, math.exp(statistics.mean(ls))))


if __name__ == "__main__":
    main()
