# kubeprovisioner — build, test and run locally.
#
# Every target runs with ./bin first on PATH: it holds Node 24 (installed from the npm registry
# when the system Node is older than 22.19) and the test tools (kube-apiserver, etcd, kubectl,
# helm), cached per user by version under ~/.cache/kubeprovisioner (see hack/tools.sh).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

export PATH := $(CURDIR)/bin:$(PATH)

NODE_TEST := node --test --test-reporter=spec
UNIT_TESTS := "src/**/*.test.ts"
INTEGRATION_TESTS := "test/integration/**/*.test.ts"
E2E_TESTS := "test/e2e/**/*.test.ts"
IMG ?= kubeprovisioner:dev

.PHONY: help
help: ## Show the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-18s %s\n", $$1, $$2}'

## --- tools and dependencies -----------------------------------------------------------------

.PHONY: node
node: ## Install Node 24 into the tool cache when the system Node is too old
	@bash hack/tools.sh node

.PHONY: tools
tools: node ## Install every test tool (Node, moto, etcd, kube-apiserver, kubectl, helm)
	@bash hack/tools.sh moto etcd kube-apiserver kubectl helm

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
	npx tsc -p tsconfig.json --noEmit

.PHONY: lint
lint: typecheck ## Type-check, ESLint and Prettier
	npx eslint .
	npx prettier --check .

.PHONY: manifests
manifests: deps ## Regenerate config/crd, the chart's CRDs and config/rbac, config/manager from the sources
	node hack/gen-crds.ts
	node hack/sync-chart-crds.ts
	node hack/gen-config.ts

## --- tests -----------------------------------------------------------------------------------

.PHONY: test
test: deps tools lint ## Everything: lint, unit, integration and e2e tests (one summary line)
	$(NODE_TEST) --test-concurrency=1 $(UNIT_TESTS) $(INTEGRATION_TESTS) $(E2E_TESTS)

.PHONY: test-unit
test-unit: deps ## Unit tests only (no external processes)
	$(NODE_TEST) $(UNIT_TESTS)

.PHONY: test-integration
test-integration: deps tools ## Integration tests (real kube-apiserver and moto)
	$(NODE_TEST) --test-concurrency=1 $(INTEGRATION_TESTS)

.PHONY: test-e2e
test-e2e: deps tools ## Helm end-to-end tests
	$(NODE_TEST) --test-concurrency=1 $(E2E_TESTS)

## --- run -------------------------------------------------------------------------------------

.PHONY: dev
dev: deps tools ## Run locally end to end: control plane, moto, CRDs, the operator, the samples
	node hack/dev.ts

## --- benchmarks ------------------------------------------------------------------------------

.PHONY: bench
bench: bench-queue ## Run every benchmark; results in bench/results and BENCHMARKS.md

.PHONY: bench-queue
bench-queue: deps ## Work queue vs client-go's workqueue (16 workers, 64 keys, 320,000 adds)
	bash bench/queue/run.sh

## --- packaging -------------------------------------------------------------------------------

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine; not used by the tests)
	docker build -t $(IMG) .

.PHONY: clean
clean: ## Remove build output (the tool cache stays)
	rm -rf dist
