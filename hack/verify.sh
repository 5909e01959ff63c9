#!/usr/bin/env bash
# Fails when generated files are stale, Go files are not gofmt-ed, go vet or golangci-lint finds a problem, or the
# docs name paths that do not exist.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

GENERATED=(apis config/crd config/rbac pkg/client pkg/scheduler/apis pkg/descheduler/apis docs/metrics.md charts/koord/files)

# Compare against the working tree as it is now (committed or not), so the check works before a commit too.
before=$(mktemp -d)
trap 'rm -rf "$before"' EXIT
for p in "${GENERATED[@]}"; do
  mkdir -p "$before/$(dirname "$p")"
  cp -a "$p" "$before/$p"
done

hack/update-codegen.sh >/dev/null

stale=0
for p in "${GENERATED[@]}"; do
  if ! diff -r -q "$before/$p" "$p"; then
    stale=1
  fi
done
if [ "$stale" -ne 0 ]; then
  # Leave the tree as it was: the fix is to run the generators on purpose and review the result.
  for p in "${GENERATED[@]}"; do
    rm -rf "$p"
    cp -a "$before/$p" "$p"
  done
  echo "Generated files are stale: run 'make generate' and commit the result." >&2
  exit 1
fi

unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go'))
if [ -n "$unformatted" ]; then
  echo "Files not formatted with gofmt (run 'make fmt'):" >&2
  echo "$unformatted" >&2
  exit 1
fi

missing_header=""
for f in $(git ls-files --cached --others --exclude-standard '*.go'); do
  head -5 "$f" | grep -Eq 'Copyright [0-9]{4} The Koord Authors' || missing_header+="$f"$'\n'
done
if [ -n "$missing_header" ]; then
  echo "Files without the license header of hack/boilerplate.go.txt:" >&2
  printf '%s' "$missing_header" >&2
  exit 1
fi

go vet ./...
# golangci-lint comes from go.mod's tool block; .golangci.yaml says what it checks.
go tool golangci-lint run ./...
hack/verify-docs.sh
echo "verify: OK"
