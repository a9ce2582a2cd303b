# kubeprovisioner — build, test and run locally.
#
# Every target runs with ./bin first on PATH: it holds Node 24 (installed from the npm registry
# when the system Node is older than 22.19) and the test tools (kube-apiserver, etcd, kubectl,
# kube-controller-manager, helm, promtool), cached per user by version under
# ~/.cache/kubeprovisioner (see hack/tools.sh).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export PATH := $(CURDIR)/bin:$(PATH)

# What the checks keep between runs, under node_modules (git-ignored, and gone with it when
# `npm ci` reinstalls): results that depend only on file contents, so a warm run redoes the work
# of the files that changed and nothing else.
CHECK_CACHE := $(CURDIR)/node_modules/.cache/kubeprovisioner
# V8's code cache for every Node process the targets start (test files, operators under test,
# tsc, ESLint): a module is compiled (and its types stripped) once, then loaded from the cache
# while its file is unchanged. It halves the CPU of a test file's or an operator's start.
export NODE_COMPILE_CACHE := $(CHECK_CACHE)/node-compile-cache

# A test file's process ends a few seconds after its tests have ended (test/support/file-end.ts),
# even when a test or hook that timed out left work running: its exit stops the child processes
# it started (test/support/process.ts), so a run always ends with its summary. Not node:test's
# --test-force-exit, which can drop the results of a file's last tests.
NODE_TEST := node --test --import=./test/support/file-end.ts --test-reporter=spec
# The suites that start processes run under test/support/runner.ts: Node's test runner with the
# global setup of test/support/global-setup.ts (the operator bundle built once, shared control
# planes and emulators leased to the files), the spec reporter and a table of the slowest files
# at the end (test/support/file-timings-reporter.ts), starting the files longest first by the
# durations of the last run, kept in TEST_DURATIONS; it ends each file's process the same way.
TEST_DURATIONS := $(CHECK_CACHE)/test-durations.json
SLOW_NODE_TEST := node test/support/runner.ts --durations=$(TEST_DURATIONS)
# Every test and hook fails after this long instead of hanging (Node's own default is no limit).
# Unit tests run on a fake clock; the slow limit covers a hook that starts etcd, kube-apiserver
# and moto on a loaded machine.
UNIT_TEST_TIMEOUT_MS := 60000
SLOW_TEST_TIMEOUT_MS := 300000
FAULT_TEST_TIMEOUT_MS := 1200000
LINT_TESTS := "test/lint/**/*.test.ts"
# Unit tests beside the code, and those of the benchmarks' and the test harness's helpers (pure
# logic, no processes).
UNIT_TESTS := "src/**/*.test.ts" "bench/**/*.test.ts" "test/support/**/*.test.ts"
INTEGRATION_TESTS := "test/integration/**/*.test.ts"
E2E_TESTS := "test/e2e/**/*.test.ts"
CLUSTER_TESTS := "test/cluster/**/*.test.ts"
FAULT_TESTS := "test/faults/**/*.test.ts"
# Test files run this many at a time. Each runs its own operator on free loopback ports; a file
# that needs only the project's CRDs leases one of the runner's shared control planes and test AWS
# emulators (test/support/global-setup.ts), any other starts its own control plane and leases an
# emulator. Files spend much of their time waiting on poll periods rather than on CPU: a warm
# make test took 364 s with five at once (the cores idle 8% of it) and 323 s with six (6%). The
# full fault suite keeps one at a time: its figures must not share the machine.
TEST_CONCURRENCY ?= 6
IMG ?= kubeprovisioner:dev
PLATFORMS ?= linux/amd64,linux/arm64
BUILDX_BUILDER ?= kubeprovisioner

.PHONY: help
help: ## Show the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

## --- tools and dependencies -----------------------------------------------------------------

.PHONY: node
node: ## Install Node 24 into the tool cache when the system Node is too old
	@bash hack/tools.sh node

.PHONY: tools
tools: node ## Install every test tool (Node, moto, etcd, kube-apiserver, kube-controller-manager, kubectl, helm, promtool, and a node's: kubelet, kube-scheduler, kube-proxy, crictl, containerd, runc, CNI plugins, buildah)
	@bash hack/tools.sh moto etcd kube-apiserver kube-controller-manager kubectl helm promtool node-tools

node_modules/.installed: package-lock.json | node
	npm ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: node_modules/.installed ## Install npm dependencies (npm ci) when the lock file changed

## --- build and checks ------------------------------------------------------------------------

.PHONY: build
build: deps ## Compile TypeScript to dist/
	npx tsc -p tsconfig.build.json

.PHONY: bundle
bundle: deps ## Bundle the operator into dist/kubeprovisioner.mjs (esbuild, tree-shaken): the image's entry point
	node hack/bundle.ts

.PHONY: typecheck
typecheck: deps
	npx tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile $(CHECK_CACHE)/tsc/tsconfig.tsbuildinfo

.PHONY: lint
lint: typecheck ## Type-check, ESLint (with the import boundaries and their test) and Prettier
	npx eslint . --cache --cache-strategy content --cache-location $(CHECK_CACHE)/eslint/
	$(NODE_TEST) --test-timeout=$(UNIT_TEST_TIMEOUT_MS) $(LINT_TESTS)
	npx prettier --check . --cache --cache-strategy content --cache-location $(CHECK_CACHE)/prettier/cache.json

.PHONY: manifests
manifests: deps ## Regenerate config/crd, the chart's CRDs and ClusterRole, the IAM table, config/rbac and config/manager
	node hack/gen-crds.ts
	node hack/sync-chart-crds.ts
	node hack/gen-config.ts

## --- tests -----------------------------------------------------------------------------------

# The operator image from the Dockerfile (buildah, stand-in base images: no registry is reached)
# and the pod sandbox image, in the tool cache by a hash of what they are built from
# (test/support/image.ts); nothing to do when they are cached.
.PHONY: image
image: deps tools ## Build the images the node tests load into the tool cache (the operator's from the Dockerfile, the sandbox's); nothing to do when cached
	node hack/image.ts

# The images the node tests load are built before any test file starts (a test never builds one:
# a build takes minutes, longer than a hook may wait), beside lint.
.PHONY: test
test: deps tools ## Everything: lint, the test AWS's own tests, unit, integration, reduced fault and e2e tests
	@$(MAKE) --no-print-directory --jobs=2 --output-sync=target image lint test-emulator
	$(SLOW_NODE_TEST) --concurrency=$(TEST_CONCURRENCY) --timeout=$(SLOW_TEST_TIMEOUT_MS) $(UNIT_TESTS:%=--one-process=%) $(INTEGRATION_TESTS) $(FAULT_TESTS) $(E2E_TESTS)

# The test AWS (test/support/aws-emulator): each wrap against boto3, on the emulator and on plain
# moto, which must still differ. pytest from moto's virtualenv; no cache files in the tree.
.PHONY: test-emulator
test-emulator: tools ## The test AWS's own tests (pytest: each wrap answers as AWS does, plain moto still does not)
	.venv/bin/python -m pytest -p no:cacheprovider -q test/support/aws-emulator/tests

# The unit tests start no process and share no state between files, so on their own they run in
# one process (--test-isolation=none): 1,234 tests took 13 CPU-s there against 44 with a process
# per file, most of it each process's start. The process ends once the last result is in
# (--test-force-exit), also when a test that timed out left a timer behind. make test runs them
# the same way inside its one suite, as one job among the other files (the runner's --one-process,
# test/support/file-group.ts): run beside lint before the suite, they lengthened a warm make test
# (474 s against 455 s, one run each).
.PHONY: test-unit
test-unit: deps ## Unit tests only (no external processes), all files in one process
	$(NODE_TEST) --test-isolation=none --test-force-exit --test-timeout=$(UNIT_TEST_TIMEOUT_MS) $(UNIT_TESTS)

.PHONY: test-integration
test-integration: deps tools ## Integration tests (real kube-apiserver and moto)
	$(SLOW_NODE_TEST) --concurrency=$(TEST_CONCURRENCY) --timeout=$(SLOW_TEST_TIMEOUT_MS) $(INTEGRATION_TESTS)

.PHONY: test-e2e
test-e2e: deps tools image ## Helm end-to-end tests
	$(SLOW_NODE_TEST) --concurrency=$(TEST_CONCURRENCY) --timeout=$(SLOW_TEST_TIMEOUT_MS) $(E2E_TESTS)

# The EC2 files at the size their figures state (a fleet of 20 instances, a burst of 16 launches);
# `make test` runs them on fewer instances (test/integration/reconciler-ec2-fixture.ts).
EC2_TESTS := "test/integration/*ec2*.test.ts"

.PHONY: test-ec2
test-ec2: deps tools ## The EC2 files at full size (make test runs them on fewer instances)
	EC2_PROFILE=full $(SLOW_NODE_TEST) --concurrency=$(TEST_CONCURRENCY) --timeout=$(SLOW_TEST_TIMEOUT_MS) $(EC2_TESTS)

# The operator as an IAM user limited to config/iam on a test AWS that enforces IAM, on a fleet of
# 24 objects of each kind; `make test` runs the same checks on 2 (test/integration/iam-enforced*).
IAM_TESTS := "test/integration/iam-enforced*.test.ts"

.PHONY: test-iam
test-iam: deps tools ## The IAM-enforced files at full size (make test runs them on a smaller fleet)
	IAM_PROFILE=full $(SLOW_NODE_TEST) --concurrency=$(TEST_CONCURRENCY) --timeout=$(SLOW_TEST_TIMEOUT_MS) $(IAM_TESTS)

.PHONY: test-export
test-export: deps tools ## Export and adopt an estate of 210 resources seeded with boto3 (make test runs 51)
	EXPORT_ESTATE=full $(SLOW_NODE_TEST) --concurrency=1 --timeout=$(SLOW_TEST_TIMEOUT_MS) test/integration/export-roundtrip.test.ts

# Plan fidelity over every scenario of test/integration/plan-fidelity-scenarios.ts (50: each
# setting family of each kind, out-of-band changes, creates, adoptions, restarts, a refusal);
# `make test` runs the reduced table of 10.
.PHONY: test-plan-fidelity
test-plan-fidelity: deps tools ## Plan fidelity, every scenario: the operator's AWS writes are exactly the plan's (make test runs 10)
	PLAN_FIDELITY=full $(SLOW_NODE_TEST) --concurrency=1 --timeout=$(SLOW_TEST_TIMEOUT_MS) test/integration/plan-fidelity.test.ts

# The chart on a real node: the image built from the Dockerfile, a kubelet on containerd, every
# check of docs/cluster.md. One file at a time: each runs a whole cluster.
.PHONY: test-cluster
test-cluster: deps tools image ## The chart on a single-node cluster of real parts, full pass (docs/cluster.md)
	$(NODE_TEST) --test-concurrency=1 --test-timeout=$(SLOW_TEST_TIMEOUT_MS) $(CLUSTER_TESTS)

.PHONY: test-faults
test-faults: deps tools ## Fault suite at full size (about 12 min); figures in bench/results/faults.json, docs/reliability.md
	FAULTS_PROFILE=full FAULTS_RESULTS=1 $(NODE_TEST) --test-concurrency=1 --test-timeout=$(FAULT_TEST_TIMEOUT_MS) $(FAULT_TESTS)
	node test/faults/report.ts
	npx prettier --log-level warn --write docs/reliability.md bench/results/faults.json

SOAK_MINUTES ?= 30
SOAK_OBJECTS ?= 1000

.PHONY: soak
soak: deps tools ## Soak: SOAK_OBJECTS objects, drift every minute, for SOAK_MINUTES (default 1000 objects, 30 min)
	SOAK_MINUTES=$(SOAK_MINUTES) SOAK_OBJECTS=$(SOAK_OBJECTS) FAULTS_RESULTS=1 \
	  $(NODE_TEST) --test-timeout=$$(( ($(SOAK_MINUTES) + 30) * 60000 )) test/soak/soak.test.ts
	node test/faults/report.ts
	npx prettier --log-level warn --write docs/reliability.md bench/results/faults.json

## --- run -------------------------------------------------------------------------------------

.PHONY: dev
dev: deps tools ## Run locally end to end: control plane, moto, CRDs, the operator, the samples
	node hack/dev.ts

.PHONY: cluster
cluster: deps tools image ## A single-node cluster of real parts with the operator image loaded, to try the chart (docs/cluster.md); Ctrl-C stops it
	node hack/cluster.ts

.PHONY: cluster-down
cluster-down: deps ## Stop the clusters 'make cluster' started and check that nothing is left behind
	node hack/cluster.ts down

## --- benchmarks ------------------------------------------------------------------------------

.PHONY: bench
bench: bench-queue bench-metrics bench-startup bench-noop bench-scale bench-idle bench-throttle bench-restart bench-failover bench-events bench-scale-steady bench-ceiling bench-plan bench-export bench-test-loop ## Run every benchmark (about 3½ h); results in bench/results and BENCHMARKS.md

.PHONY: bench-test-loop
bench-test-loop: deps tools ## make test three times warm, then three times in a fresh clone with the tools cached (about 45 min); bench/results/test-loop.json
	warm=0; node bench/test-loop/runs.ts --runs=3 --label="$(or $(LABEL),current)" || warm=$$?; \
	node bench/test-loop/runs.ts --runs=3 --first --label="$(or $(LABEL),current)" && test $$warm -eq 0

.PHONY: bench-metrics
bench-metrics: deps ## Scrape cost of the managed-resources gauge with 1,000 to 100,000 cached objects
	node bench/metrics/managed-resources.ts

BENCH_SIZES ?= 1000,5000
BENCH_INSTANCES ?= 150

.PHONY: bench-scale
bench-scale: deps tools bundle ## Converge $(BENCH_SIZES) S3Buckets+SqsQueues (+$(BENCH_INSTANCES) Ec2Instances) through 80±40 ms of AWS latency
	node bench/scale/run.ts scale --sizes=$(BENCH_SIZES) --instances=$(BENCH_INSTANCES)

.PHONY: bench-scale-steady
bench-scale-steady: deps tools bundle ## 20,000 S3Buckets+SqsQueues in a 1 GiB memory cgroup, then steady polls with the S3 budget at 10/s and 200 new buckets (about 35 min)
	node bench/scale/steady.ts --buckets=10000 --queues=10000 --instances=20 --steady=600

CEILING_OBJECTS ?= 92000

.PHONY: bench-ceiling
bench-ceiling: deps tools bundle ## CEILING_OBJECTS (92,000) paused S3Buckets+SqsQueues: the old 192 MiB heap in a 512 MiB cgroup, then a 1 GiB limit, 20 new buckets Ready (about 25 min)
	node bench/scale/ceiling.ts --objects=$(CEILING_OBJECTS)

.PHONY: bench-events
bench-events: deps tools bundle ## Drift repair latency and AWS reads at rest, change events vs polling only, at 1,000 and 10,000 objects and 20 instances stopped out of band (about 35 min)
	node bench/events/events.ts --sizes=1000,10000 --polls=60,300 --drifts=200 --instances=20

.PHONY: bench-plan
bench-plan: deps tools bundle ## kubeprovisioner plan --live over 1,000 converged objects, 10 % drifted out of band: wall time, AWS reads against the budgets, 0 writes, peak RSS
	node bench/plan/plan.ts --buckets=450 --queues=450 --instances=100 --drift-share=0.1

# 10,000 resources: 2,000 buckets, 7,799 queues and a dead-letter queue outside the estate's
# prefix, 200 instances (moto's EC2 slows sharply past a few hundred); a tenth of the buckets and
# queues is foreign-owned and skipped.
.PHONY: bench-export
bench-export: deps tools bundle ## kubeprovisioner export of 10,000 resources seeded with boto3: wall time against the read-budget bound, AWS reads, 0 writes, peak RSS (about 25 min)
	node bench/export/export.ts --buckets=2000 --queues=7799 --instances=200

.PHONY: bench-idle
bench-idle: deps tools bundle ## 1,000 objects converged, then 5 minutes idle: Kubernetes writes, AWS calls per poll, CPU, RSS
	node bench/scale/run.ts idle --size=1000 --instances=$(BENCH_INSTANCES) --idle=300 --poll=60

.PHONY: bench-startup
bench-startup: deps tools build bundle ## Idle RSS with zero objects: sources, tsc output, the bundle, the bundle with the image's V8 flags
	node bench/scale/run.ts startup

# moto stops answering DescribeInstances within 10 s at a few hundred instances, so the burst is 200.
.PHONY: bench-throttle
bench-throttle: deps tools bundle ## A burst of 200 Ec2Instances against AWS's EC2 throttling buckets
	node bench/scale/run.ts throttle --instances=200

.PHONY: bench-noop
bench-noop: deps tools ## CPU of one reconcile of a converged object (p50/p99, AWS wait excluded)
	node bench/noop/noop.ts --buckets=100 --queues=100 --instances=30 --rounds=5

.PHONY: bench-restart
bench-restart: deps tools bundle ## Operator down, drift injected into 220 resources, operator up: time until repaired
	node bench/lifecycle/lifecycle.ts restart --buckets=100 --queues=100 --instances=20

.PHONY: bench-failover
bench-failover: deps tools bundle ## Leader handover, graceful and after SIGKILL: time to a new leader and to a new object Ready
	node bench/lifecycle/lifecycle.ts failover --buckets=50 --queues=50 --instances=0

.PHONY: bench-queue
bench-queue: deps ## Work queue vs client-go's workqueue (16 workers, 64 keys, 320,000 adds)
	bash bench/queue/run.sh

## --- packaging -------------------------------------------------------------------------------

.PHONY: docker-build
docker-build: ## Build the container image for this machine (needs a Docker engine; not used by the tests)
	docker build -t $(IMG) .

# A multi-platform image cannot be loaded into the local engine, so it is pushed: IMG must name a
# registry you can push to. The builder is created once (docker-container driver) and reused.
.PHONY: docker-buildx
docker-buildx: ## Build and push IMG for linux/amd64 and linux/arm64 (PLATFORMS) with buildx; not used by the tests
	docker buildx inspect $(BUILDX_BUILDER) >/dev/null 2>&1 || docker buildx create --name $(BUILDX_BUILDER) --driver docker-container
	docker buildx build --builder $(BUILDX_BUILDER) --platform $(PLATFORMS) --tag $(IMG) --push .

# The artifacts of a release in dist/release/ (docs/release.md): the packaged chart, the image
# built with buildah from the Dockerfile's own base images, the CLI as single executables with a
# krew manifest (hack/sea.ts), and SHA256SUMS. Pushes nothing.
# RELEASE_IMAGE=standin builds with the tests' stand-in bases (never to publish), none builds no
# image; RELEASE_CLI=none builds no executables (host: this machine's only). With both none it
# needs only Node and helm (the helm on PATH, else the pinned one), none of the test tools.
.PHONY: release
release: deps ## The release artifacts in dist/release: chart package, image (OCI archive), CLI executables and kp.yaml, SHA256SUMS (docs/release.md)
ifeq ($(RELEASE_IMAGE),none)
	@[ -x bin/helm ] || command -v helm >/dev/null || bash hack/tools.sh helm
else
	@bash hack/tools.sh helm node-tools
endif
	node hack/release.ts

.PHONY: clean
clean: ## Remove build output (the tool cache stays)
	rm -rf dist
