#!/usr/bin/env bash
# Copies the manifests that config/ generates or holds into charts/koord/files/, which the chart's templates
# render: Helm cannot read files outside a chart. config/ stays the source of truth; `make verify` fails when
# the copies are stale.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

FILES=charts/koord/files
rm -rf "$FILES"
mkdir -p "$FILES/crds" "$FILES/rbac" "$FILES/priorityclasses"
cp config/crd/bases/*.yaml "$FILES/crds/"
for c in koord-manager koord-scheduler koord-descheduler koordlet; do
  cp "config/rbac/$c/role.yaml" "$FILES/rbac/$c.yaml"
done
cp config/priorityclass/*.yaml "$FILES/priorityclasses/"
cp config/scheduler/koord-scheduler-config.yaml "$FILES/koord-scheduler-config.yaml"
cp config/descheduler/koord-descheduler-config.yaml "$FILES/koord-descheduler-config.yaml"
