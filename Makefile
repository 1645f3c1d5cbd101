# ebb — developer entry points. `make run` and `make test` set up everything they need on a fresh machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NODE_MAJOR     := 24
TOOLS          := $(CURDIR)/.tools
NODE_DIR       := $(TOOLS)/node$(NODE_MAJOR)
SYSTEM_NODE_OK := $(shell node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)' 2>/dev/null && echo yes)
ifeq ($(SYSTEM_NODE_OK),yes)
NODE_BIN_DIR   :=
else
NODE_BIN_DIR   := $(NODE_DIR)/node_modules/node/bin
export PATH    := $(NODE_BIN_DIR):$(PATH)
endif
DEB_PACKAGES   := redis-server redis-sentinel openssl containerd runc containernetworking-plugins docker-registry iproute2 apache2-utils chromium tmux prometheus
SANDBOX_DIR    ?= .sandbox
NODES          ?= 3
REAL_NODES     ?= 0

.PHONY: help
help: ## Show the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

##@ Set-up (idempotent: each step does nothing when already done)
.PHONY: tools node deps debs control-plane keda
tools: node deps debs control-plane ## Install everything the tests and the sandbox need.

node: ## Node 24 from the npm registry, when the system Node is older than 22.19.
ifneq ($(SYSTEM_NODE_OK),yes)
	@[ -x $(NODE_BIN_DIR)/node ] || npm install --prefix $(NODE_DIR) --no-save --no-audit --no-fund node@$(NODE_MAJOR)
	@node --version
endif

# `npm install --no-save` from the lockfile rather than `npm ci`: the registry lacks some other platforms'
# optional packages (e.g. darwin builds of msgpackr-extract), which npm ci reports as a lockfile mismatch.
deps: node ## Install npm packages from package-lock.json when it is newer than node_modules.
	@if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then npm install --no-save --no-audit --no-fund; fi

debs: ## Debian packages (redis-server, openssl; redis-sentinel for the Sentinel failover test; containerd, docker-registry, apache2-utils for the runtime tests; runc, containernetworking-plugins, iproute2 for the real nodes; chromium for the Bull Board test; tmux for the terminal test of ebb rollout status; prometheus for the alert rules, the alert test and the analysis tests).
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi

control-plane: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kubelet once (cached).
	@hack/control-plane.sh

# Not part of `tools` (make run does not need it), but `make test` and `make test-integration` depend on it: a
# cold build is long (docs/decisions/), a warm one only finds the cached binary. Under them the KEDA test
# fails, rather than skips, when the operator is missing (EBB_REQUIRE_KEDA=1).
keda: ## Build the KEDA operator once (cached) and copy its CRDs, for the scale-to-zero test.
	@hack/keda.sh >/dev/null

##@ Develop
.PHONY: build lint typecheck crds config-docs access-docs test test-fast test-unit test-integration test-runtime test-realnode test-failover test-keda run sandbox
build: deps ## Compile TypeScript to dist/.
	npm run build

lint: deps ## ESLint (typed rules: no floating promises, complexity limits) and Prettier (`npm run format` fixes).
	npm run lint

typecheck: deps ## tsc --noEmit over sources, tests and scripts.
	npm run typecheck

crds: deps ## Regenerate src/api/pod-template.schema.json (controller-gen, built on first use) and deploy/crds.
	npm run gen:crds

config-docs: deps ## Regenerate docs/configuration.md's reference from the settings tables.
	npm run gen:config-docs

access-docs: deps ## Regenerate docs/install.md's access table from test/unit/deploy/access.ts.
	npm run gen:access-docs

test-unit: deps debs ## Unit tests only (some start their own redis-server and redis-sentinel).
	npm run test:unit

test-runtime: deps debs ## CRI client against a real containerd and registry (Debian packages; Go for the proto check).
	npm run test:runtime

test-failover: tools ## The Redis failover tests alone (Sentinel and Cluster: a primary killed mid-stream, and mid-rollout on a sandbox; all also in `make test`).
	npx vitest run --project unit test/unit/queue/sentinel-failover.test.ts test/unit/queue/sentinel-reconnect.test.ts test/unit/queue/cluster-failover.test.ts test/unit/queue/cluster.test.ts
	npx vitest run --project 'integration*' test/integration/app/failover-rollout.test.ts

test-realnode: tools ## Real-node tests: a real kubelet, containerd and runc beside the sandbox (root; see docs/development.md, Real nodes), then Ctrl-C of a real-node run.
	npx vitest run --project realnode
	npx vitest run --project realnode-ctrl-c

test-integration: tools keda ## Integration tests against a sandbox (real control plane, real Redis, the KEDA operator).
	EBB_REQUIRE_KEDA=1 npm run test:integration

test-keda: tools keda ## Scale to zero with the real KEDA operator against a sandbox (builds KEDA first when missing).
	EBB_REQUIRE_KEDA=1 npx vitest run --project 'integration*' test/integration/keda

# The inner loop keeps its checks' caches in .tools/cache: tsc's incremental build info (exact), ESLint's and
# Prettier's per-file caches (ESLint's typed rules may miss a finding that a change to another file causes in an
# unchanged one: `make lint` and `make test` run without a cache and catch it).
FAST_CACHE := $(TOOLS)/cache
test-fast: deps debs ## The inner loop: lint and typecheck (cached, side by side), then the unit tests (no sandbox; some start their own redis-server).
	@mkdir -p $(FAST_CACHE)
	@set -o pipefail; \
	npx tsc -p tsconfig.json --noEmit --incremental --tsBuildInfoFile $(FAST_CACHE)/tsc.tsbuildinfo > $(FAST_CACHE)/typecheck.out 2>&1 & tsc=$$!; \
	npx eslint --cache --cache-strategy content --cache-location $(FAST_CACHE)/eslint . && npx prettier --check --cache --cache-location $(FAST_CACHE)/prettier --log-level warn . ; lint=$$?; \
	wait $$tsc; typecheck=$$?; cat $(FAST_CACHE)/typecheck.out; \
	[ $$lint = 0 ] && [ $$typecheck = 0 ]
	npx vitest run --project 'unit*'

test: tools keda lint typecheck ## Install what is missing (the KEDA operator included), then lint, typecheck and run every test layer.
	EBB_REQUIRE_KEDA=1 npx vitest run --project '!realnode-ctrl-c'
	npx vitest run --project realnode-ctrl-c

sandbox: tools ## Start a sandbox cluster in $(SANDBOX_DIR), an ebb daemon per node, and keep it running (Ctrl-C stops it). REAL_NODES=N (0..4) adds N real nodes.
	node harness/cli/main.ts sandbox up --dir $(SANDBOX_DIR) --nodes $(NODES) --real-nodes $(REAL_NODES)

run: tools ## Sandbox + node daemons + controller + a sample App; prints the Bull Board address and login. REAL_NODES=N puts the sample App on N real nodes, one pod each.
	node harness/cli/main.ts run --all --dir $(SANDBOX_DIR) --nodes $(NODES) --real-nodes $(REAL_NODES) --sample
