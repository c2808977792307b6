#!/bin/bash
# What lavapipe itself allows for the elementwise kernels' shape: times
# the probes here and vkCmdCopyBuffer with the C harness of
# ../shared/tools/lavapipe-ceiling (LPC to point elsewhere). The harness
# fills 32M f32 (128 MiB). read reads them, 64 bytes an invocation as
# the elementwise kernels do; read-loop 16 KiB an invocation, as the
# reductions over inner axes do; read-cols down the columns of 16 KiB
# rows, 1024 invocations, as the reductions over axis 0 do; write
# writes as many bytes; copy and vkCmdCopyBuffer copy them; compare
# takes their halves as 16M pairs and writes 16M bools, as Less on f32
# does (compare-xor: the same loads and stores, an xor for the
# arithmetic); check and check-loop test each f32 for a NaN and fold the
# result, 64 bytes and 16 KiB an invocation.
#
# MIB, where given, sizes the data instead of 128 MiB: 64 is the bytes
# of the reductions of vkops bench ([4096 16384] bools), whose ceiling
# is read-loop's, and read-cols's for axis 0.
#
#   bench/ceiling/run.sh [ROUNDS [MIB]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lpc=${LPC:-$here/../../../shared/tools/lavapipe-ceiling/lpc}
[ -x "$lpc" ] || { echo "run.sh: no C harness at $lpc (set LPC)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for s in compare compare_trivial read read_loop read_cols check check_loop write copy; do
	glslc --target-env=vulkan1.1 -O -I "$here" -o "$out/$s.spv" "$here/$s.comp"
done
n=$((${2:-128} << 17)) # half the f32 elements of MIB MiB
cases=()
for _ in $(seq "${1:-3}"); do
	cases+=(
		"name=compare,kind=rd,mem=imgi,spv=$out/compare.spv,wg=256,epi=64"
		"name=compare-xor,kind=rd,mem=imgi,spv=$out/compare_trivial.spv,wg=256,epi=64"
		"name=read,kind=rd,mem=imgi,spv=$out/read.spv,wg=256,epi=16"
		"name=read-loop,kind=rd,mem=imgi,spv=$out/read_loop.spv,wg=256,epi=4096"
		"name=read-cols,kind=rd,mem=imgi,spv=$out/read_cols.spv,wg=256,epi=$((2 * n / 1024))"
		"name=check,kind=rd,mem=imgi,spv=$out/check.spv,wg=256,epi=16"
		"name=check-loop,kind=rd,mem=imgi,spv=$out/check_loop.spv,wg=256,epi=4096"
		"name=write,kind=wr,mem=imgi,spv=$out/write.spv,wg=256,epi=32"
		"name=copy,kind=copy,mem=imgi,spv=$out/copy.spv,wg=256,epi=16"
		"name=vkCmdCopyBuffer,kind=cmdcopy,epi=1"
	)
done
"$lpc" --n $((2 * n)) --reps 9 "${cases[@]}" 2>&1 | grep -v '^{'
