# Koord build and test entry points. Everything is built from the versions pinned in go.mod; nothing is
# downloaded at test time except through the Go module proxy.

GO       ?= go
BIN      := $(CURDIR)/bin
GOFLAGS  ?=
# Extra flags for go test, e.g. TEST_FLAGS='-run TestCRUD -v'.
TEST_FLAGS ?=
# Extra flags for benchmarks, e.g. BENCH_FLAGS='-count=10'.
BENCH_FLAGS ?=
# Time each fuzz target gets in `make fuzz`.
FUZZ_TIME ?= 30s

# Control-plane binaries for tests and local clusters, from go.mod's tool block (etcd, kube-apiserver, kwok,
# kube-scheduler) and hack/tools/go.mod's (kube-controller-manager, helm, and Prometheus for `koordctl up
# --monitoring`).
CONTROL_PLANE := $(BIN)/etcd $(BIN)/kube-apiserver $(BIN)/kwok $(BIN)/kube-scheduler $(BIN)/kube-controller-manager $(BIN)/helm \
  $(BIN)/prometheus
# The Kubernetes release the components report, as its own release builds stamp it.
KUBE_VERSION := $(shell $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes 2>/dev/null)
KUBE_LDFLAGS  = -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
  -X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(patsubst v%,%,$(KUBE_VERSION)))) \
  -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION)))
TOOLS_MOD := hack/tools/go.mod hack/tools/go.sum
# The real node's own binaries, from hack/tools/go.mod: kubelet, kube-proxy and containerd (static, as the
# real-node notes say).
REALNODE_BIN := $(BIN)/realnode
REALNODE_BINARIES := $(REALNODE_BIN)/kubelet $(REALNODE_BIN)/kube-proxy $(REALNODE_BIN)/containerd
CONTAINERD_TAGS := no_btrfs,no_devmapper,no_zfs

export KOORD_BIN_DIR := $(BIN)

# Release stamp of binaries and images: the nearest v* tag, else v0.0.0-<short commit>.
VERSION  ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || echo v0.0.0-$$(git rev-parse --short HEAD 2>/dev/null || echo dev))
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -s -w -X github.com/koord-dev/koord/pkg/version.version=$(VERSION) -X github.com/koord-dev/koord/pkg/version.revision=$(REVISION)

# Images: `make images` writes bin/images/<component>.tar for each component (see docs/install.md).
IMAGE_COMPONENTS ?= koord-manager koord-scheduler koord-descheduler koordlet
IMAGE_PLATFORMS  ?= linux/amd64 linux/arm64
IMAGE_REPOSITORY ?= ghcr.io/koord-dev
IMAGE_TAG        ?= $(VERSION)
# PUSH=registry/prefix also pushes every index to <PUSH>/<component>:<IMAGE_TAG>.
PUSH ?=

comma := ,
space := $(empty) $(empty)

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Build

.PHONY: bin
bin: $(CONTROL_PLANE) ## Build etcd, kube-apiserver, kwok, kube-scheduler, kube-controller-manager, helm and prometheus into bin/ (first build takes minutes, then cached).

$(BIN)/etcd: go.mod go.sum
	$(GO) build -o $@ go.etcd.io/etcd/server/v3

$(BIN)/kube-apiserver: go.mod go.sum
	$(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(BIN)/kwok: go.mod go.sum
	$(GO) build -o $@ sigs.k8s.io/kwok/cmd/kwok

$(BIN)/kube-scheduler: go.mod go.sum
	$(GO) build -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-scheduler

$(BIN)/kube-controller-manager: $(TOOLS_MOD)
	$(GO) build -C hack/tools -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(BIN)/helm: $(TOOLS_MOD)
	$(GO) build -C hack/tools -o $@ helm.sh/helm/v4/cmd/helm

# Prometheus with only its file, HTTP and static service discovery (remove_all_sd): a local cluster scrapes
# fixed addresses. Its web UI's assets are not in the module, so it serves the HTTP API only.
$(BIN)/prometheus: $(TOOLS_MOD)
	$(GO) build -C hack/tools -tags remove_all_sd -o $@ github.com/prometheus/prometheus/cmd/prometheus

$(REALNODE_BIN)/kubelet $(REALNODE_BIN)/kube-proxy: $(TOOLS_MOD)
	$(GO) build -C hack/tools -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/$(notdir $@)

$(REALNODE_BIN)/containerd: $(TOOLS_MOD)
	CGO_ENABLED=0 $(GO) build -C hack/tools -tags $(CONTAINERD_TAGS) -o $(REALNODE_BIN)/ \
	  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/ctr \
	  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2

.PHONY: build
build: ## Build Koord's binaries (every cmd/<name>) into bin/, and bin/kubectl-koord (koordctl as kubectl's plugin).
	@if [ -n "$$(ls -d cmd/*/ 2>/dev/null)" ]; then $(GO) build -o $(BIN)/ ./cmd/...; \
	else echo "build: no binaries under cmd/ yet"; fi
	ln -sf koordctl $(BIN)/kubectl-koord
	$(GO) build ./...

.PHONY: images
# The images of the Go-only components hold one static binary; koordlet's is built with cgo (it loads the
# NVIDIA driver's NVML library) and its image carries glibc: another platform than this machine's needs Debian's
# cross compiler (hack/build-koordlet.sh says which).
STATIC_IMAGE_COMPONENTS := $(filter-out koordlet,$(IMAGE_COMPONENTS))
images: ## Build one multi-platform OCI image archive per component into bin/images/ (PUSH=registry/prefix pushes them too).
	@set -e; for p in $(IMAGE_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; echo "build $(IMAGE_COMPONENTS) for $$p"; \
	  $(if $(STATIC_IMAGE_COMPONENTS),CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/images/$${os}_$${arch}/ $(addprefix ./cmd/,$(STATIC_IMAGE_COMPONENTS));) \
	  $(if $(filter koordlet,$(IMAGE_COMPONENTS)),GO=$(GO) hack/build-koordlet.sh $$os $$arch $(BIN)/images/$${os}_$${arch}/ '$(LDFLAGS)';) \
	done
	$(GO) run ./hack/images --binaries $(BIN)/images --out $(BIN)/images --repository $(IMAGE_REPOSITORY) --tag $(IMAGE_TAG) \
	  --revision '$(REVISION)' --platforms $(subst $(space),$(comma),$(IMAGE_PLATFORMS)) --components $(subst $(space),$(comma),$(IMAGE_COMPONENTS)) \
	  $(if $(PUSH),--push $(PUSH))

##@ Code

.PHONY: generate
generate: ## Regenerate deepcopy functions, CRD manifests, RBAC roles, clientset, listers, informers, docs/metrics.md, the chart's dashboards and alert rules and its copies of config/.
	hack/update-codegen.sh

.PHONY: fmt
fmt: ## Format Go code.
	gofmt -w $$(git ls-files --cached --others --exclude-standard '*.go')

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

.PHONY: lint
lint: ## Run golangci-lint (pinned in go.mod's tool block; .golangci.yaml).
	$(GO) tool golangci-lint run ./...

.PHONY: verify
verify: ## Fail when generated files are stale, code is not gofmt-ed, go vet or golangci-lint complains, or the docs name missing paths.
	hack/verify.sh

##@ Test

# The koordlet's real-cgroup end-to-end test measures real CPU usage and throttling: it runs after the other
# packages, alone, since a local cluster in a package beside it leaves no idle CPU to measure.
ALONE_PACKAGES := ./test/e2e/koordlet

.PHONY: test
test: bin build ## Run all tests: unit, fuzz seed corpora, integration and end-to-end against a real control plane.
	$(GO) test $(GOFLAGS) $(TEST_FLAGS) $$($(GO) list ./... | grep -v -x -F $(addprefix -e github.com/koord-dev/koord/,$(patsubst ./%,%,$(ALONE_PACKAGES))))
	$(GO) test $(GOFLAGS) $(TEST_FLAGS) $(ALONE_PACKAGES)

.PHONY: test-unit
test-unit: ## Run tests that need no control plane.
	$(GO) test $(GOFLAGS) $(TEST_FLAGS) $$($(GO) list ./... | grep -v /test/)

.PHONY: test-integration
test-integration: bin build ## Run the integration and end-to-end tests only.
	$(GO) test $(GOFLAGS) $(TEST_FLAGS) $$($(GO) list ./test/... | grep -v -x -F $(addprefix -e github.com/koord-dev/koord/,$(patsubst ./%,%,$(ALONE_PACKAGES))))
	$(GO) test $(GOFLAGS) $(TEST_FLAGS) $(ALONE_PACKAGES)

.PHONY: test-realnode
test-realnode: bin $(REALNODE_BINARIES) ## Run the real-node suite: a one-node cluster (kubelet, containerd, runc), Koord installed with helm from the images (root; not beside another kubelet).
	hack/realnode-deps.sh
	$(MAKE) images IMAGE_PLATFORMS=linux/$$($(GO) env GOARCH)
	KOORD_IMAGE_TAG=$(IMAGE_TAG) $(GO) test -tags realnode -count=1 -timeout 40m -v ./test/realnode/

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZ_TIME each.
	@for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$t"; \
	    $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZ_TIME) $$pkg || exit 1; \
	  done; \
	done

# Where `make reliability` writes its report.
RELIABILITY_REPORT ?= $(BIN)/reliability-report.txt

.PHONY: reliability
reliability: bin build ## Inject every fault into a local cluster under churn and report invariants and recovery times (RELIABILITY_REPORT); make test runs the short list.
	KOORD_RELIABILITY_REPORT=$(RELIABILITY_REPORT) $(GO) test $(GOFLAGS) -count=1 -v -timeout=60m -run TestFaults ./test/e2e/reliability/ -args -long
	@echo "report: $(RELIABILITY_REPORT)"

# `make soak`: how long, on how many nodes, how many simulated days, how many pods a second, where the report
# goes.
SOAK_DURATION ?= 30m
SOAK_NODES ?= 100
SOAK_DAYS ?= 2
SOAK_RATE ?= 5
SOAK_REPORT ?= $(BIN)/soak-report.txt
# The test's timeout: SOAK_DURATION and the cluster's start and stop.
SOAK_TIMEOUT ?= 60m

.PHONY: soak
soak: bin build ## Churn pods on a 100-node local cluster for SOAK_DURATION (SOAK_DAYS simulated) and report memory, apiserver requests per component and scheduling latency (SOAK_REPORT); make test runs a minute of it.
	@rm -f $(SOAK_REPORT)
	KOORD_RELIABILITY_REPORT=$(SOAK_REPORT) $(GO) test $(GOFLAGS) -count=1 -v -timeout=$(SOAK_TIMEOUT) -run TestSoak ./test/e2e/reliability/ \
	  -args -soak=$(SOAK_DURATION) -soak-nodes=$(SOAK_NODES) -soak-days=$(SOAK_DAYS) -soak-rate=$(SOAK_RATE)
	@echo "report: $(SOAK_REPORT)"

.PHONY: bench
bench: bin ## Run the Go benchmarks.
	$(GO) test -run='^$$' -bench=. -benchmem -timeout=60m $(BENCH_FLAGS) ./...

.PHONY: bench-scheduler
bench-scheduler: bin ## Compare koord-scheduler's throughput (LoadAware; all plugins) with upstream kube-scheduler (1000 nodes, 5000 pods, 5 runs).
	$(GO) test -run='^$$' -bench=BenchmarkSchedulerThroughput -benchtime=1x -timeout=60m ./test/perf/scheduler/ -args -nodes=1000 -pods=5000 -runs=5

##@ Local cluster

.PHONY: up
up: bin build ## Run a local cluster in the foreground (bin/koordctl up); UP_FLAGS='--nodes 100' passes flags.
	$(BIN)/koordctl up $(UP_FLAGS)

.PHONY: demo
demo: bin build ## Run the demo scenario on a local cluster and write koord-demo-report/ (bin/koordctl demo); DEMO_FLAGS='--speed 1440' passes flags.
	$(BIN)/koordctl demo $(DEMO_FLAGS)

.PHONY: down
down: ## Stop the local cluster that `make up` runs.
	$(BIN)/koordctl down

.PHONY: clean
clean: ## Remove build outputs.
	rm -rf $(BIN)
