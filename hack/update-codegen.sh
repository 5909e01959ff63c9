#!/usr/bin/env bash
# Regenerates everything derived from the API types: deepcopy functions, CRD manifests, and the typed
# clientset, listers and informers. Generators come from go.mod's tool block, so no download is needed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

MODULE=github.com/koord-dev/koord
BOILERPLATE=hack/boilerplate.go.txt
# API packages served by the apiserver as CRDs, relative to apis/.
API_PACKAGES=(
  slo/v1alpha1
  config/v1alpha1
  scheduling/v1alpha1
  quota/v1alpha1
  thirdparty/schedulingsigs/v1alpha1
  thirdparty/topology/v1alpha1
)

echo "Generating deepcopy functions"
go tool controller-gen object:headerFile="$BOILERPLATE" paths=./apis/...

echo "Generating CRD manifests into config/crd/bases"
rm -f config/crd/bases/*.yaml
go tool controller-gen crd:crdVersions=v1 paths=./apis/... output:crd:artifacts:config=config/crd/bases

echo "Generating RBAC for koord-manager into config/rbac/koord-manager"
go tool controller-gen rbac:roleName=koord-manager paths=./pkg/manager/... output:rbac:artifacts:config=config/rbac/koord-manager

echo "Generating RBAC for koordlet into config/rbac/koordlet"
go tool controller-gen rbac:roleName=koordlet paths=./pkg/koordlet/ output:rbac:artifacts:config=config/rbac/koordlet

echo "Generating RBAC for koord-scheduler into config/rbac/koord-scheduler"
go tool controller-gen rbac:roleName=koord-scheduler paths=./pkg/scheduler/ output:rbac:artifacts:config=config/rbac/koord-scheduler

echo "Generating RBAC for koord-descheduler into config/rbac/koord-descheduler"
go tool controller-gen rbac:roleName=koord-descheduler paths=./pkg/descheduler/... output:rbac:artifacts:config=config/rbac/koord-descheduler

inputs=()
pkgs=()
for p in "${API_PACKAGES[@]}"; do
  inputs+=(--input "$p")
  pkgs+=("$MODULE/apis/$p")
done

rm -rf pkg/client
echo "Generating clientset"
go tool client-gen \
  --go-header-file "$BOILERPLATE" \
  --input-base "$MODULE/apis" \
  "${inputs[@]}" \
  --clientset-name versioned \
  --output-dir pkg/client/clientset \
  --output-pkg "$MODULE/pkg/client/clientset"

echo "Generating listers"
go tool lister-gen \
  --go-header-file "$BOILERPLATE" \
  --output-dir pkg/client/listers \
  --output-pkg "$MODULE/pkg/client/listers" \
  "${pkgs[@]}"

echo "Generating informers"
go tool informer-gen \
  --go-header-file "$BOILERPLATE" \
  --versioned-clientset-package "$MODULE/pkg/client/clientset/versioned" \
  --listers-package "$MODULE/pkg/client/listers" \
  --output-dir pkg/client/informers \
  --output-pkg "$MODULE/pkg/client/informers" \
  "${pkgs[@]}"

# koord-scheduler's plugin args live in kube-scheduler's config group: internal types in
# pkg/scheduler/apis/config, versioned ones in .../v1 with generated defaulters and conversions.
SCHEDULER_CONFIG="$MODULE/pkg/scheduler/apis/config"
echo "Generating deepcopy functions, defaulters and conversions of koord-scheduler's plugin args"
go tool controller-gen object:headerFile="$BOILERPLATE" paths=./pkg/scheduler/apis/...
go tool defaulter-gen --go-header-file "$BOILERPLATE" --output-file zz_generated.defaults.go "$SCHEDULER_CONFIG/v1"
go tool conversion-gen --go-header-file "$BOILERPLATE" --output-file zz_generated.conversion.go "$SCHEDULER_CONFIG/v1"

# koord-descheduler's configuration has one version and no internal types.
echo "Generating deepcopy functions of koord-descheduler's configuration"
go tool controller-gen object:headerFile="$BOILERPLATE" paths=./pkg/descheduler/apis/...

echo "Generating docs/metrics.md from the components' collectors"
go test ./pkg/metrics -run '^TestMetricsDoc$' -count=1 -update >/dev/null

echo "Copying the manifests the Helm chart renders into charts/koord/files"
hack/update-chart.sh

echo "Generating the chart's dashboards and alert rules from pkg/monitoring"
go test ./pkg/monitoring -run '^TestGeneratedFiles$' -count=1 -update >/dev/null
