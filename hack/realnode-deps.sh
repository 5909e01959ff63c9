#!/usr/bin/env bash
# Installs what the real-node suite needs from Debian when it is missing: runc, the CNI plugins, iptables,
# conntrack and iproute2. Needs root; run by `make test-realnode`.
set -euo pipefail

need=()
command -v runc >/dev/null || need+=(runc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v iptables >/dev/null || need+=(iptables)
command -v conntrack >/dev/null || need+=(conntrack)
command -v ip >/dev/null || need+=(iproute2)
[ -f /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing ${need[*]} from Debian"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "${need[@]}" || { apt-get update && apt-get install -y --no-install-recommends "${need[@]}"; }
