# kubectl-schedq. `make help` lists the targets; CI runs .ci/run, which runs `make test`.
GO        ?= go
BIN       := bin
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
# The release's ldflags are written once, in .goreleaser.yaml; the build
# reads them from there, with VERSION for goreleaser's {{ .Tag }}.
LDFLAGS   := $(subst {{ .Tag }},$(VERSION),$(shell sed -n '/^ *ldflags:/{n;s/^ *- //p;}' .goreleaser.yaml))
FUZZTIME  ?= 30s
# The Kubernetes version perf/ builds (its control plane, upstream's queue and
# harness): written in perf/go.mod only, read from there.
PERF_KUBE_VERSION = $(shell awk '$$1 == "k8s.io/kubernetes" { print $$2 }' perf/go.mod)

.PHONY: perf perf-compare-upstream demo mixin test-mixin mixin-recordings test-prometheus
.PHONY: upstream-configs help all build build-perf test test-root test-perf bench fuzz lint lint-root lint-perf difftest upstreamqueue upstream-versions gates update-gates verify-gates etcd upstream-workloads tidy-check clean
.PHONY: snapshot krew-manifest krew-tools krew-validate go-install-check goreleaser-tool goreleaser-check release-check

all: build

help: ## this list: every documented target and what it does
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_.-]+:.*## / {printf "  %-24s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## the plugin → bin/kubectl-schedq
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/kubectl-schedq ./cmd/kubectl-schedq

build-perf: etcd ## the perf tool → bin/schedq-perf (links a whole control plane), and bin/etcd beside it for its workload runs
	cd perf && $(GO) build -trimpath -ldflags '-X k8s.io/component-base/version.gitVersion=$(PERF_KUBE_VERSION)' -o ../$(BIN)/schedq-perf ./cmd/schedq-perf

test: test-root test-mixin test-perf ## every test: unit, fuzz seeds, differential, integration

# Test binaries are linked without DWARF (-w): nothing reads it, and each
# of perf/'s, which links a control plane, links with about 18% less CPU.
TEST_LDFLAGS ?= -w

test-root:
	$(GO) test -count=1 -ldflags=$(TEST_LDFLAGS) ./...

# explainacc measures explain against the live queue's timing: it runs
# after the other packages, alone, so that their control planes do not skew
# what it measures.
#
# Workload runs fsync etcd's WAL as upstream's harness does; the tests turn
# that off (SCHEDQ_ETCD_UNSAFE_NO_FSYNC): they check behaviour, not speed.
test-perf: upstreamqueue etcd
	cd perf && SCHEDQ_ETCD_UNSAFE_NO_FSYNC=1 PATH="$(CURDIR)/$(BIN):$$PATH" $(GO) test -count=1 -ldflags=$(TEST_LDFLAGS) -timeout 30m $$($(GO) list ./... | grep -v '/explainacc$$')
	cd perf && SCHEDQ_ETCD_UNSAFE_NO_FSYNC=1 $(GO) test -count=1 -ldflags=$(TEST_LDFLAGS) -timeout 30m ./explainacc/

# The monitoring mixin (mixin/): go-jsonnet and promtool are tools of
# hack/mixin-tools, a module of its own, so Prometheus' dependencies stay
# out of the plugin's go.mod. test-mixin checks the committed render is
# current, runs promtool on it and the alert tests on recorded runs, and
# compares the alerts with status's signals (hack/mixin-status builds
# pkg/status, whose client_golang is older than Prometheus').
MIXIN_TOOLS := cd hack/mixin-tools && $(GO)

mixin: ## render mixin/ → mixin/rendered (rules, PrometheusRule, dashboard)
	rm -rf mixin/rendered
	$(MIXIN_TOOLS) tool jsonnet -S -c -m ../../mixin/rendered ../../mixin/render.jsonnet >/dev/null

test-mixin:
	$(MIXIN_TOOLS) vet ./... && $(GO) test -count=1 -ldflags=$(TEST_LDFLAGS) ./...
	cd hack/mixin-status && $(GO) vet ./...

# A real Prometheus (Debian's prometheus package, installed by the script
# when missing, never started as a service) scrapes the embedded control
# plane's scheduler with the rendered rules loaded; its API must show every
# rule healthy and every recording rule producing series, and
# `status --prometheus-url` must answer from its first samples.
test-prometheus: build build-perf ## a real Prometheus scrapes the embedded scheduler with the mixin's rules (installs Debian's prometheus when missing)
	hack/test-prometheus.sh

mixin-recordings: build-perf ## record the runs the mixin's alert tests replay → mixin/testdata/recordings (about fifteen minutes)
	hack/mixin-recordings.sh

# Upstream's scheduler_perf harness starts an etcd process per workload and
# looks for it on PATH. `go install` cannot build etcd inside a module with
# replace directives, so perf/hack/etcd wraps etcdmain at the version
# perf/go.mod resolves.
etcd: ## etcd from Go modules → bin/etcd (for upstream's scheduler_perf harness)
	cd perf && $(GO) build -trimpath -o ../$(BIN)/etcd ./hack/etcd

upstream-configs: build-perf ## every scheduler_perf config file of perf/go.mod's version at integration-test size on the embedded control plane → a table (file, workloads, rc, throughput, reason)
	hack/upstream-configs.sh

upstream-workloads: etcd ## workloads/ through upstream's scheduler_perf, gate on and off (integration-test sizes; LABELS=performance for the big ones)
	cd perf && PATH="$(CURDIR)/$(BIN):$$PATH" $(GO) test -count=1 -timeout 3h -run '^$$' -bench BenchmarkWorkloadsUpstream -benchtime 1x ./upstreamcompat/ \
	  -args -perf-scheduling-label-filter=$(or $(LABELS),integration-test) -data-items-dir=$(CURDIR)/perf/out/upstreamcompat

# explain against the real scheduler (perf/explainacc). test-perf runs the
# accuracy test at CI size (one 20-second round of the scenario and the
# workloads' integration-test sizes, per gate setting); these run longer or
# bigger and write their report to EXPLAIN_OUT. Seeds from 100 up are the
# calibration's training runs (explain-calibrate); the reported runs use
# EXPLAIN_SEEDS, below 100.
EXPLAIN_OUT      ?= $(CURDIR)/perf/out/explainacc
EXPLAIN_DURATION ?= 3m
EXPLAIN_RUNS     ?= scenario,burst,churn,workloads
EXPLAIN_SEEDS    ?= 1
EXPLAIN_TRAIN_SEEDS ?= 101,102
EXPLAIN_VERSIONS ?= v1.36.3
KUBECTL_BIN      ?= $(CURDIR)/perf/out/kubectl
EXPLAIN_SCALE_SIZES ?= 1000,5000,20000,50000

.PHONY: explain-accuracy explain-controlplanes explain-accuracy-versions explain-calibrate explain-speed explain-scale explain-event-pages

explain-accuracy: ## explain against the scheduler's queue: the scenario, burst and churn runs (EXPLAIN_DURATION, 3m) and the workloads, gate on and off: placement, attempts, next try, calibration → perf/out/explainacc/report.md
	cd perf && SCHEDQ_EXPLAINACC_DURATION=$(EXPLAIN_DURATION) SCHEDQ_EXPLAINACC_RUNS=$(EXPLAIN_RUNS) SCHEDQ_EXPLAINACC_SEEDS=$(EXPLAIN_SEEDS) SCHEDQ_EXPLAINACC_OUT=$(EXPLAIN_OUT) \
	  $(GO) test -count=1 -timeout 5h -run '^TestExplainAccuracy$$' -v ./explainacc/

explain-controlplanes: ## perf/embedded's control plane built against each of EXPLAIN_VERSIONS → bin/schedq-controlplane-<version> (compiles that version's kube-apiserver and kube-scheduler: minutes each)
	cd perf && $(GO) run ./difftest/internal/upstreamgen -controlplane -versions $(EXPLAIN_VERSIONS) -bin $(CURDIR)/$(BIN)

explain-accuracy-versions: explain-controlplanes ## explain-accuracy's scenarios on each of EXPLAIN_VERSIONS' own scheduler (the workloads run on perf/go.mod's version only) → perf/out/explainacc/<version>/report.md
	for v in $$(echo $(EXPLAIN_VERSIONS) | tr , ' '); do \
	  (cd perf && SCHEDQ_EXPLAINACC_CONTROL_PLANE=$(CURDIR)/$(BIN)/schedq-controlplane-$$v SCHEDQ_EXPLAINACC_DURATION=$(EXPLAIN_DURATION) \
	    SCHEDQ_EXPLAINACC_RUNS=$(EXPLAIN_RUNS) SCHEDQ_EXPLAINACC_SEEDS=$(EXPLAIN_SEEDS) SCHEDQ_EXPLAINACC_OUT=$(EXPLAIN_OUT)/$$v \
	    $(GO) test -count=1 -timeout 5h -run '^TestExplainAccuracy$$' -v ./explainacc/) || exit 1; done

explain-calibrate: explain-controlplanes ## record the calibration's training runs (EXPLAIN_TRAIN_SEEDS, on perf/go.mod's version and EXPLAIN_VERSIONS) and fit explain's confidence to them → pkg/explain/zz_generated.calibration.go
	cd perf && SCHEDQ_EXPLAINACC_DURATION=$(EXPLAIN_DURATION) SCHEDQ_EXPLAINACC_RUNS=$(EXPLAIN_RUNS) SCHEDQ_EXPLAINACC_SEEDS=$(EXPLAIN_TRAIN_SEEDS) SCHEDQ_EXPLAINACC_OUT=$(EXPLAIN_OUT)/train \
	  $(GO) test -count=1 -timeout 5h -run '^TestExplainAccuracy$$' -v ./explainacc/ || true
	for v in $$(echo $(EXPLAIN_VERSIONS) | tr , ' '); do \
	  (cd perf && SCHEDQ_EXPLAINACC_CONTROL_PLANE=$(CURDIR)/$(BIN)/schedq-controlplane-$$v SCHEDQ_EXPLAINACC_DURATION=$(EXPLAIN_DURATION) \
	    SCHEDQ_EXPLAINACC_RUNS=$(EXPLAIN_RUNS) SCHEDQ_EXPLAINACC_SEEDS=$(EXPLAIN_TRAIN_SEEDS) SCHEDQ_EXPLAINACC_OUT=$(EXPLAIN_OUT)/train/$$v \
	    $(GO) test -count=1 -timeout 5h -run '^TestExplainAccuracy$$' -v ./explainacc/ || true); done
	cd perf && $(GO) run ./explainacc/rescore -fit $(CURDIR)/pkg/explain/zz_generated.calibration.go '$(EXPLAIN_OUT)/train/recording-*.json.gz' '$(EXPLAIN_OUT)/train/*/recording-*.json.gz'

$(KUBECTL_BIN):
	perf/explainacc/build-kubectl.sh $@

# The control plane these start is stamped with its version, as
# schedq-perf's is, so that explain reads a real kube-scheduler version.
explain-speed: build $(KUBECTL_BIN) ## explain -A against kubectl get pods -A -o json, 5,000 pending pods → perf/out/explainacc/speed.md
	cd perf && SCHEDQ_EXPLAIN_SPEED=1 KUBECTL=$(KUBECTL_BIN) SCHEDQ_PLUGIN=$(CURDIR)/$(BIN)/kubectl-schedq SCHEDQ_EXPLAINACC_OUT=$(EXPLAIN_OUT) \
	  $(GO) test -count=1 -timeout 1h -run '^TestExplainSpeed$$' -ldflags '-X k8s.io/component-base/version.gitVersion=$(PERF_KUBE_VERSION)' -v ./explainacc/

explain-scale: build $(KUBECTL_BIN) ## explain -A against kubectl get pods -A -o json, and explain's peak RSS, at EXPLAIN_SCALE_SIZES pending pods → perf/out/explainacc/scale.md
	cd perf && SCHEDQ_EXPLAIN_SCALE=1 SCHEDQ_EXPLAIN_SCALE_SIZES=$(EXPLAIN_SCALE_SIZES) KUBECTL=$(KUBECTL_BIN) SCHEDQ_PLUGIN=$(CURDIR)/$(BIN)/kubectl-schedq SCHEDQ_EXPLAINACC_OUT=$(EXPLAIN_OUT) \
	  $(GO) test -count=1 -timeout 3h -run '^TestExplainScale$$' -ldflags '-X k8s.io/component-base/version.gitVersion=$(PERF_KUBE_VERSION)' -v ./explainacc/
	cat $(EXPLAIN_OUT)/scale.md

explain-event-pages: ## FailedScheduling events listed in pages of 500, 2,000 and 5,000, at 20,000 to 100,000 events → perf/out/explainacc/event-pages.md
	cd perf && SCHEDQ_EVENT_PAGES=1 SCHEDQ_EXPLAINACC_OUT=$(EXPLAIN_OUT) \
	  $(GO) test -count=1 -timeout 30m -run '^TestEventPages$$' -v ./explainacc/
	cat $(EXPLAIN_OUT)/event-pages.md

# schedq-perf run: `make perf` runs the default workload on an embedded
# control plane; PERF_FILE and PERF_FLAGS change what and how.
PERF_FILE  ?= perf/testdata/default.yaml
PERF_FLAGS ?=
PERF_OUT   ?= $(CURDIR)/perf/out
PERF_COMPARE_RUNS ?= 3

perf: build-perf ## the default workload on an embedded control plane → perf/out/perf (report.html, DataItems, queue series)
	$(BIN)/schedq-perf run $(PERF_FILE) --out $(PERF_OUT)/perf $(PERF_FLAGS)

# PERF_PROFILE=DIR also writes a CPU profile of each run's control-plane
# process (upstream's test binary; schedq-perf's workload process) to DIR;
# PERF_COMPARE names the comparisons (default: all of hack/perf-compare-upstream.sh's).
# PERF_SCHEDQ_BIN=FILE compares another schedq-perf binary (docs/results.md:
# how the 1.37× was reproduced).
PERF_COMPARE ?=
PERF_PROFILE ?=

perf-compare-upstream: build-perf ## SchedulingBasic (500 nodes, 5,000 measured pods) and upstream's SchedulingPodAffinity/500Nodes through upstream's scheduler_perf (k8s.io/kubernetes at perf/go.mod's version, unmodified) and schedq-perf, PERF_COMPARE_RUNS interleaved runs each: per-run throughputs, load, both configurations, ratio
	GO=$(GO) PERF_PROFILE=$(PERF_PROFILE) hack/perf-compare-upstream.sh $(PERF_OUT)/compare-upstream $(PERF_COMPARE_RUNS) $(PERF_COMPARE)

# perf/difftest drives a copy of upstream's pkg/scheduler/backend/queue made
# from the module cache at build time (gitignored, never committed); every
# target that compiles perf/ makes it first.
upstreamqueue: ## generate perf/difftest/internal/upstreamqueue
	cd perf && $(GO) run ./difftest/internal/upstreamgen

# The queues of the versions before perf/go.mod's (upstreamgen's version
# table, older.go): a generated module per version that requires it (never
# committed), with upstream's queue copied from the module cache, the
# driver and the in-process benchmark; and its schedq-upstream-replay.
# Compiling an older Kubernetes' scheduler packages cold takes minutes each.
UPSTREAM_VERSIONS_DIR := $(CURDIR)/perf/out/upstream-versions

upstream-versions: ## generate a module per older version's queue → perf/out/upstream-versions/<version>, and build bin/schedq-upstream-replay-<version>
	cd perf && $(GO) run ./difftest/internal/upstreamgen -older -o $(UPSTREAM_VERSIONS_DIR) -bin $(CURDIR)/$(BIN)

# The plugin checks feature gates before a cluster starts but cannot link
# k8s.io/kubernetes: pkg/workload holds a generated copy of the gate table of
# perf/go.mod's version (TestKnownGates in perf/internal/gatestable fails when it is stale).
update-gates: ## regenerate pkg/workload/zz_generated.gates.go from perf/go.mod's Kubernetes version
	cd perf && $(GO) run ./hack/gatesgen -o ../pkg/workload/zz_generated.gates.go

gates: update-gates

verify-gates: ## fail when pkg/workload/zz_generated.gates.go is not what update-gates writes
	@tmp=$$(mktemp) && trap 'rm -f $$tmp' EXIT && cd perf && $(GO) run ./hack/gatesgen -o $$tmp && \
	  diff -u ../pkg/workload/zz_generated.gates.go $$tmp >/dev/null || { echo "verify-gates: pkg/workload/zz_generated.gates.go is stale: run make update-gates"; exit 1; }

difftest: upstreamqueue upstream-versions ## thousands of random traces per version and gate setting (pod groups too: TestDifferential_PodGroups; long gaps of gated pods: TestDifferential_LongGaps; older versions: TestDifferential_Versions) and the 1,000,000-op trace, model vs upstream PriorityQueue
	cd perf && SCHEDQ_DIFF_TRACES=5000 SCHEDQ_DIFF_LONG_GAP_TRACES=300 SCHEDQ_DIFF_LARGE=1 SCHEDQ_UPSTREAM_REPLAY_DIR=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 90m -run 'TestDifferential' -v ./difftest/

bench: upstreamqueue upstream-versions ## benchmarks of the model (and the model vs upstream in perf/, in process and as commands; the older versions' model vs their queues, in process and as commands)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd perf && $(GO) test -run '^$$' -bench 'Replay|Memory|Simulate' -benchtime 1x ./difftest/
	for d in $(UPSTREAM_VERSIONS_DIR)/*/; do echo "== $$d"; \
	  (cd $$d && GOWORK=off $(GO) test -run '^$$' -bench 'ModelVsUpstream|Simulate_EndToEnd' -benchtime 1x ./difftest/) || exit 1; done

fuzz: ## each fuzz target for FUZZTIME
	@for t in $$($(GO) test -list '^Fuzz' ./... 2>/dev/null | grep '^Fuzz' ); do \
	  pkg=$$(grep -rl "func $$t(" --include=*_test.go . | head -1 | xargs dirname); \
	  echo "== $$t ($$pkg)"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; done

lint: lint-root lint-perf verify-gates ## go vet both modules, gofmt, no replace directives in the root module, the generated gates current

lint-root: ## go vet the root module, gofmt, no replace directives in it
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@! grep -q '^replace\|^\s*replace' go.mod || { echo "root go.mod must have no replace directives (go install must work)"; exit 1; }

# The generated gates are checked by make lint and, in CI, by make test
# (perf/internal/gatestable's TestKnownGates): verify-gates links a
# control plane to read them, so lint-perf leaves it out.
lint-perf: upstreamqueue ## go vet the perf module
	cd perf && $(GO) vet ./...

# Release: goreleaser (.goreleaser.yaml) is the one release build. At a tag,
# .github/workflows/release.yml publishes its archives and krew-release-bot
# renders .krew.yaml against them; here `snapshot` builds the same archives
# (nothing published) and the checks run on them. hack/release, a module of
# its own so that the plugin's go.mod stays lean, renders .krew.yaml offline
# with the bot's own code and serves the checkout for go-install-check;
# hack/tools pins krew's validator and krew (see there).
# RELEASE_VERSION is the tag the snapshot stamps and krew/schedq.yaml is at.
RELEASE_VERSION    ?= v0.1.0
TOOLS_BIN          := $(CURDIR)/hack/tools/bin
GORELEASER_VERSION ?= v2.16.0

snapshot: goreleaser-tool ## goreleaser's archives for linux, darwin, windows × amd64, arm64 and checksums.txt at RELEASE_VERSION, nothing published → dist/
	GORELEASER_CURRENT_TAG=$(RELEASE_VERSION) $(TOOLS_BIN)/goreleaser release --snapshot --clean --skip=publish,announce,sign,sbom --parallelism 2
	@grep -q '"tag":"$(RELEASE_VERSION)".*"commit":"[0-9a-f]\{40\}"' dist/metadata.json || { cat dist/metadata.json; \
	  echo; echo "goreleaser did not read the git state (it needs a clone with a remote): the snapshot is not $(RELEASE_VERSION) at HEAD"; exit 1; }

krew-manifest: snapshot ## krew/schedq.yaml: .krew.yaml rendered by krew-release-bot's code against dist/, at RELEASE_VERSION
	{ printf '%s\n' '# Generated by `make krew-manifest`: .krew.yaml rendered with the code of' \
	    '# krew-release-bot against the archives of `make snapshot`; do not edit. At' \
	    '# release, krew-release-bot renders .krew.yaml against the GitHub release.'; \
	  $(GO) run -C hack/release . krew-manifest -template $(CURDIR)/.krew.yaml -dist $(CURDIR)/dist -tag $(RELEASE_VERSION); } >krew/schedq.yaml.tmp
	mv krew/schedq.yaml.tmp krew/schedq.yaml

krew-tools: ## krew's validate-krew-manifest and krew → hack/tools/bin
	cd hack/tools && GOBIN=$(TOOLS_BIN) $(GO) install sigs.k8s.io/krew/cmd/validate-krew-manifest sigs.k8s.io/krew/cmd/krew

krew-validate: krew-tools snapshot ## .krew.yaml rendered against dist/ and validated by krew's validator (with krew/schedq.yaml), every archive installed by krew
	GO=$(GO) TOOLS_BIN=$(TOOLS_BIN) hack/krew-validate.sh $(RELEASE_VERSION)

go-install-check: ## `go install <module>/cmd/kubectl-schedq@<version>` from outside the repo, via a local proxy
	GO=$(GO) hack/check-go-install.sh

goreleaser-tool: ## goreleaser (GORELEASER_VERSION) → hack/tools/bin
	GOBIN=$(TOOLS_BIN) $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

goreleaser-check: snapshot ## goreleaser check, then a second snapshot build: its archives and checksums.txt must equal dist/'s byte for byte
	TOOLS_BIN=$(TOOLS_BIN) hack/goreleaser-check.sh $(RELEASE_VERSION)

release-check: ## hack/release's own vet and tests
	cd hack/release && $(GO) vet ./... && $(GO) test -count=1 ./...

demo: ## the main job: embedded control plane, status, explain -A, backoff drain on vs off (first run compiles a control plane)
	bash hack/demo.sh

clean:
	rm -rf $(BIN) dist

# kind. What a user runs is `kubectl schedq perf --cluster kind` (kind's
# library, linked into the plugin, with kind's default node image). The
# targets below are test infrastructure (e2e/infra): a machine without
# network builds its node image offline, and one whose containers lack
# CAP_SYS_RESOURCE gets a runc wrapper; see e2e/infra/README.md.
# kind is the version the plugin links (go.mod); the node image's Kubernetes
# is perf/'s (perf/go.mod) unless KUBE_VERSION names another.
KIND_VERSION    ?= $(shell awk '$$1 == "sigs.k8s.io/kind" { print $$2 }' go.mod)
KUBE_VERSION    ?= $(PERF_KUBE_VERSION)
KIND_NODE_REPO  ?= schedq.local/kind-node
KIND_NODE_IMAGE ?= $(KIND_NODE_REPO):$(KUBE_VERSION)
# The versions make test-kind-versions builds images of and tests.
KIND_TEST_VERSIONS ?= v1.34.4 v1.35.4 v1.36.3 v1.37.2

.PHONY: kind kind-node-image kind-lb-image docker-up docker-down test-kind test-kind-versions

kind: $(BIN)/kind ## the kind CLI from Go modules (the version the plugin links) → bin/kind

$(BIN)/kind: go.mod
	GOBIN=$(CURDIR)/$(BIN) $(GO) install sigs.k8s.io/kind@$(KIND_VERSION)

docker-up: ## a Docker engine for the kind tests (installs and starts one where none answers; test infrastructure)
	e2e/infra/docker-engine.sh up

docker-down: ## stop what docker-up started
	e2e/infra/docker-engine.sh down

kind-node-image: ## the kind node image $(KIND_NODE_IMAGE) built offline (KUBE_VERSION=v1.34.4|v1.35.4|v1.36.3|v1.37.2; skipped when its inputs are unchanged)
	GO=$(GO) KUBE_VERSION=$(KUBE_VERSION) KIND_NODE_IMAGE=$(KIND_NODE_IMAGE) e2e/infra/kind-node/build.sh

# kind runs a load balancer (Envoy's image) in front of several
# control-plane nodes; the HA tests need it, and it cannot be pulled here.
kind-lb-image: kind-node-image ## kind's load-balancer image built offline on the node image (kind-lb as `envoy`; for clusters with several control-plane nodes)
	GO=$(GO) KIND_NODE_IMAGE=$(KIND_NODE_IMAGE) e2e/infra/kind-lb/build.sh

# A real Prometheus (Debian's package, installed when missing) scrapes the
# kind cluster's scheduler as an operator's does; the tests start it.
test-kind: ## end-to-end tests on a kind cluster: Docker, the node image, bin/kind, bin/kubectl-schedq, Prometheus
	@echo "test-kind: needs a Docker engine that can run privileged containers (e2e/infra/docker-engine.sh up), the node image and bin/kind"
	e2e/infra/docker-engine.sh up
	hack/install-prometheus.sh
	$(MAKE) --no-print-directory kind-node-image kind-lb-image kind build
	SCHEDQ_KIND_E2E=1 SCHEDQ_KIND_IMAGE=$(KIND_NODE_IMAGE) SCHEDQ_KIND_KUBE_VERSION=$(KUBE_VERSION) KIND=$(CURDIR)/$(BIN)/kind SCHEDQ_PLUGIN=$(CURDIR)/$(BIN)/kubectl-schedq SCHEDQ_PROMETHEUS=$$(command -v prometheus) \
	  $(GO) test -count=1 -timeout 30m -v ./e2e/kind/

# Not in CI: each version other than perf/'s compiles its own Kubernetes
# (up to 13 minutes a version on two cores with a cold cache); the tests
# take about 30 s a version once its image is built.
test-kind-versions: ## status and explain on a kind cluster of each of KIND_TEST_VERSIONS (builds each node image; the scheduler's version and model checked)
	e2e/infra/docker-engine.sh up
	$(MAKE) --no-print-directory kind build
	@for v in $(KIND_TEST_VERSIONS); do \
	  echo "== $$v: node image"; b=$$(date +%s); \
	  $(MAKE) --no-print-directory kind-node-image KUBE_VERSION=$$v KIND_NODE_IMAGE=$(KIND_NODE_REPO):$$v || exit 1; \
	  echo "== $$v: node image ready in $$(( $$(date +%s) - b ))s; TestKind"; b=$$(date +%s); \
	  SCHEDQ_KIND_E2E=1 SCHEDQ_KIND_IMAGE=$(KIND_NODE_REPO):$$v SCHEDQ_KIND_KUBE_VERSION=$$v KIND=$(CURDIR)/$(BIN)/kind SCHEDQ_PLUGIN=$(CURDIR)/$(BIN)/kubectl-schedq \
	    $(GO) test -count=1 -timeout 30m -v -run '^TestKind$$' ./e2e/kind/ || exit 1; \
	  echo "== $$v: TestKind passed in $$(( $$(date +%s) - b ))s"; \
	done
