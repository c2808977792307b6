# vkops: make test (every test), make bench (the main benchmark job).
# Both install what is missing on a Debian machine (as root) first.

GO      ?= go
GLSLC   ?= glslc
SPIRV_OPT ?= spirv-opt
GEN     := shaders/generated
SHADERS = $(wildcard $(GEN)/*.comp)
SPIRV   := $(SHADERS:.comp=.spv)
APT_PKGS := mesa-vulkan-drivers libvulkan-dev vulkan-validationlayers glslc spirv-tools
GLFW_PKGS := libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev libgl-dev xvfb xauth
GLSLC_FLAGS := --target-env=vulkan1.1 -O -Werror -I shaders -I shaders/generated

.PHONY: all build deps deps-glfw deps-peers bench-peers shaders gen-shaders spirv check-shaders test test-short test-gpu test-cgocheck2 test-race test-glfw fuzz vet bench bench-go bench-report

all: build

# deps installs the Debian packages vkops needs when any is missing.
deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

deps-glfw:
	@missing=""; for p in $(GLFW_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# deps-peers installs Debian's numpy and PyTorch for /usr/bin/python3.
deps-peers:
	@missing=""; for p in python3-numpy python3-torch; do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# bench-peers runs the bench cases on numpy and PyTorch (2 threads).
bench-peers: deps-peers
	/usr/bin/python3 bench/peers.py

build:
	$(GO) build ./...
	$(GO) build -o bin/vkops ./cmd/vkops

# The .comp files, spec.glsl and fused_regs.glsl are written from Go's tables
# (shaders/spec) by shaders/gen into shaders/generated, apart from the
# hand-written GLSL in shaders/; each .comp includes an op's GLSL, which
# includes the skeleton. make shaders writes them, then compiles every
# module whose sources changed.
shaders: gen-shaders
	@$(MAKE) --no-print-directory spirv

gen-shaders:
	$(GO) run ./shaders/gen $(GEN)

spirv: $(SPIRV)

# glslc -O leaves ids sparse (the largest fused module: bound 228400 for
# 11087 ids), and both vkops's Prune and lavapipe's SPIR-V reader size
# their tables by the bound: with the ids renumbered, Prune took 4.9-5.4
# ms on that module instead of 6.9-9.0, and a fused clamp's cold first
# call 42.8 ms instead of 46.4 (medians of 12 fresh processes in turn).
$(GEN)/%.spv: $(GEN)/%.comp $(GEN)/spec.glsl $(GEN)/fused_regs.glsl $(wildcard shaders/*.glsl)
	$(GLSLC) $(GLSLC_FLAGS) -o $@ $<
	$(SPIRV_OPT) --compact-ids $@ -o $@

# check-shaders writes the sources and compiles every module into a
# temporary directory, fails when a committed file differs, and validates
# each module.
check-shaders:
	GO=$(GO) GLSLC=$(GLSLC) GLSLC_FLAGS="$(GLSLC_FLAGS)" SPIRV_OPT=$(SPIRV_OPT) .ci/check-shaders

# staticcheck is a Go tool of this module (go.mod's tool line), so go tool
# runs the version go.mod names with nothing to install.
vet:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }

# The validation layer is on in every device test (VKOPS_VALIDATION=1)
# and any message it prints fails the test.
TEST_ENV := VKOPS_VALIDATION=1 VKOPS_CACHE_DIR=$(CURDIR)/.cache
TIMEOUT_ALL ?= 25m
TIMEOUT_CHECKED ?= 3m

# Each go test -timeout is about 4x the slowest package's quiet run on
# CI's 2-core machine, with empty Go and Mesa caches (2026-11-28: tests
# 365 s in the full run, device 34 s under -race; TESTING.md has every
# step), so that a machine busy with two other processes still passes.
test: deps deps-glfw check-shaders vet
	$(TEST_ENV) $(GO) test -count=1 -timeout $(TIMEOUT_ALL) ./...
	$(MAKE) test-cgocheck2 test-race test-glfw fuzz

# The tests that share one device between goroutines (finalizers that
# free unreachable tensors among them): what the race detector and
# cgocheck2 need beyond the device packages' own tests.
CONCURRENT := '^Test(Concurrent|SelectConcurrent|LifecycleStress|CloseWhileOpsRun|FreeRacesOp|NestedOpsWithoutFree|SmallNestedOpsWithoutFree)'

# cgocheck2 checks every Go pointer handed to C. Only package vk calls C
# (the binding), and its tests and those of internal/core (the device's
# implementation) reach every one of its calls; the concurrent tests reach them from many goroutines.
# The ops' matrices would pass the same kinds of memory again.
test-cgocheck2:
	GOEXPERIMENT=cgocheck2 $(TEST_ENV) $(GO) test -count=1 -short -timeout $(TIMEOUT_CHECKED) ./vk/... ./internal/core/... ./device/...
	GOEXPERIMENT=cgocheck2 $(TEST_ENV) $(GO) test -count=1 -short -timeout $(TIMEOUT_CHECKED) -run $(CONCURRENT) ./tests/...

# test-gpu runs the tests that fit a short lease of a GPU (at most 3
# minutes on an NVIDIA H200): every package with -short, which runs one
# kernel variant where the full matrix runs every one, with the
# validation layer. The full matrix stays in CI on lavapipe.
test-gpu:
	CI=true $(TEST_ENV) $(GO) test -count=1 -short -timeout 3m $$($(GO) list ./... | grep -v glfwloader)

# The race detector finds races where goroutines share memory: the tests
# of the device's implementation (internal/core) and the concurrent tests, which run every op
# from many goroutines. The ops package's tests run on one goroutine.
test-race:
	$(TEST_ENV) $(GO) test -count=1 -race -short -timeout $(TIMEOUT_CHECKED) ./internal/core/... ./device/...
	$(TEST_ENV) $(GO) test -count=1 -race -short -timeout $(TIMEOUT_CHECKED) -run $(CONCURRENT) ./tests/...

test-glfw: deps-glfw
	xvfb-run -a $(GO) test -count=1 -tags glfw ./glfwloader/...

FUZZTIME ?= 30s
fuzz:
	$(TEST_ENV) GO=$(GO) FUZZTIME=$(FUZZTIME) .ci/fuzz

bench: deps build
	./bin/vkops info
	./bin/vkops bench

# bench-report measures the suite on this machine's device beside numpy
# and torch (each case on both in turn, ROUNDS rounds of RUNS runs: the
# cases of bench/peers.py), lavapipe's C kernels on the same 64 MiB
# (bench/ceiling, where its harness is), the ops no peer runs (SOLO_OPS) with the
# per-op cost, and the sweep the plot draws; keeps the JSON in
# bench/results/DEVICE/, and writes from it the page of every case there,
# the headline of BENCHMARKS.md, a sentence of README.md and
# docs/bench.png (bench/report). GPU=DIR renders instead a GPU run
# brought back in DIR: the bench.json, peers_cuda.json and log.txt of
# ../shared/tools/gpu-lease/run.sh, measured at COMMIT (default HEAD).
ROUNDS   ?= 3
RUNS     ?= 7
SIZE     ?= 16777216
SOLO_OPS ?= upload,download,copy
REPORT := $(GO) run ./bench/report
# The command the tables name: make bench-report, with what was set.
REPORT_CMD := $(strip make bench-report$(foreach v,ROUNDS RUNS SIZE SOLO_OPS,$(if $(filter command line environment,$(origin $(v))), $(v)=$($(v)))))
ifdef GPU
bench-report:
	$(REPORT) -add $(GPU) -command "gpu-lease run.sh bench" $(if $(COMMIT),-commit $(COMMIT))
else
bench-report: deps deps-peers build
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; start=$$(date +%s); \
	./bin/vkops info > $$tmp/info.txt; cp /proc/loadavg $$tmp/loadavg.txt; \
	echo "bench-report: the suite beside the peers, $(ROUNDS) rounds"; \
	/usr/bin/python3 bench/peers.py --interleave bin/vkops --rounds $(ROUNDS) --runs $(RUNS) --elems $(SIZE) --save $$tmp >/dev/null; \
	echo "bench-report: the reduce zoo beside the peers, $(ROUNDS) rounds"; \
	/usr/bin/python3 bench/peers.py --interleave bin/vkops --zoo --ops reduce-or,reduce-and --rounds $(ROUNDS) --runs $(RUNS) --save $$tmp/rzoo >/dev/null; \
	for f in $$tmp/rzoo/*.json; do mv $$f $$tmp/rzoo-$$(basename $$f); done; \
	echo "bench-report: lavapipe's C ceiling, $(ROUNDS) rounds"; \
	bench/ceiling/run.sh $(ROUNDS) 64 > $$tmp/ceiling.txt || { rm -f $$tmp/ceiling.txt; echo "bench-report: no C ceiling"; }; \
	echo "bench-report: $(SOLO_OPS) and the per-op cost"; \
	./bin/vkops bench --op $(SOLO_OPS) --size $(SIZE) --runs $(RUNS) --json > $$tmp/solo.json; \
	echo "bench-report: the sweep"; mkdir $$tmp/sweep; \
	./bin/vkops bench --sweep --size $(SIZE) --runs 3 --overhead=false --json > $$tmp/sweep/vkops.json; \
	/usr/bin/python3 bench/peers.py --sweep --elems $(SIZE) --runs 3 --json > $$tmp/sweep/peers.json; \
	$(REPORT) -add $$tmp $(if $(COMMIT),-commit $(COMMIT)) -command "$(REPORT_CMD)" -seconds $$(( $$(date +%s) - start )) -plot docs/bench.png
endif
