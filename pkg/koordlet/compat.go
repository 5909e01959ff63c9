/*
Copyright 2026 The Koord Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package koordlet

import (
	"github.com/spf13/pflag"

	"github.com/koord-dev/koord/pkg/util/compatflag"
)

// addKoordinatorFlags adds the flags Koordinator's koordlet takes (v1.8, cmd/koordlet/options and the configs
// it gathers): the ones Koord has under another name as aliases, the rest accepted and ignored with the reason
// logged at start. Koordinator's DaemonSet writes them Go-style (-addr=:9316); Parse rewrites those.
func (o *Options) addKoordinatorFlags(fs *pflag.FlagSet) {
	c := compatflag.New(fs)
	o.compat = c
	c.Alias("addr", "metrics-bind-address")
	c.Alias("cgroup-root-dir", "cgroup-root")
	c.Alias("proc-root-dir", "proc-root")
	c.Alias("sys-root-dir", "sys-root")
	c.Alias("var-lib-kubelet-dir", "kubelet-root-dir")
	c.Alias("node-topology-sync-interval", "topology-report-interval")
	c.Alias("collect-res-used-interval", "collect-interval")

	c.IgnoreValue("Koord runs every QoS strategy at --qos-interval",
		"reconcile-interval-seconds", "cpu-suppress-interval-seconds", "cpu-evict-interval-seconds",
		"memory-evict-interval-seconds", "memory-evict-cool-time-seconds", "cpu-evict-cool-time-seconds",
		"resource-force-update-seconds")
	c.IgnoreBool("Koord always evicts through the Eviction API", "only-evict-by-api")
	c.IgnoreValue("Koord's koordlet reads its settings from the node's NodeSLO only", "configmap-name", "configmap-namespace", "qos-extension-plugins")
	c.IgnoreValue("Koord reads the node's pods from the apiserver, not from kubelet",
		"kubelet-preferred-address-type", "kubelet-sync-interval", "kubelet-sync-timeout", "kubelet-read-only-port")
	c.IgnoreBool("Koord reads the node's pods from the apiserver, not from kubelet", "kubelet-insecure-tls", "disable-query-kubelet-config")
	c.IgnoreValue("Koord reads cgroups, /proc, /sys and kubelet's files only", "sys-fs-root-dir",
		"run-root-dir", "containerd-endpoint", "docker-endpoint", "pouch-endpoint",
		"default-runtime-type", "pod-resources-proxy-path", "xpu-device-infos-dir")
	c.IgnoreBool("Koord reads cgroups and /proc only", "xpu-enforce-collect-from-device-infos", "enable-pod-taskids")
	c.IgnoreValue("Koord reports NodeMetric at the NodeMetric's reportIntervalSeconds", "report-interval")
	c.IgnoreBool("Koord always reports NodeMetric", "enable-node-metric-report")
	c.IgnoreValue("Koord has no collectors beyond cgroup and /proc usage",
		"collect-sys-metric-outdated-interval", "collect-node-cpu-info-interval", "collect-node-storage-info-interval",
		"cpi-collector-interval", "psi-collector-interval", "collect-cpi-timewindow", "coldpage-collector-interval",
		"resctrl-collector-interval")
	c.IgnoreBool("Koord has no collectors beyond cgroup and /proc usage", "enable-pagecache-collector", "enable-resctrl-collector")
	c.IgnoreValue("Koord keeps metrics in memory, bounded by --node-metric-window and --pod-metric-window",
		"metric-gc-interval-seconds", "metric-expire-seconds", "tsdb-path", "tsdb-retention-duration", "tsdb-stripe-size",
		"tsdb-max-bytes", "tsdb-wal-segment-size", "tsdb-max-block-chunk-segment-size", "tsdb-min-block-duration",
		"tsdb-max-block-duration", "tsdb-head-chunks-write-buffer-size")
	c.IgnoreBool("Koord keeps metrics in memory", "tsdb-enable-prometheus-metric")
	c.IgnoreValue("Koord's koordlet hooks into the runtime through NRI only (no koord-runtime-proxy), as one plugin",
		"runtime-hooks-network", "runtime-hooks-addr", "runtime-hooks-plugin-failure-policy", "runtime-hooks-config-path",
		"runtime-hooks-host-endpoint", "runtime-hooks-disable-stages")
	c.IgnoreValue("Koord's koordlet reconnects to the NRI socket for as long as it runs", "runtime-hooks-nri-backoff-steps")
	c.IgnoreValue("Koord's koordlet re-applies its rules every --qos-interval", "runtime-hooks-reconcile-interval")
	c.IgnoreBool("Koord's koordlet always unsets the CFS quota of pods bound to CPUs of their own, as Koordinator does by default", "disable-unset-cpu-quota")
	c.IgnoreValue("Koord's koordlet writes no audit log", "audit-log-dir", "audit-verbose", "audit-max-disk-space-mb",
		"audit-max-concurrent-readers", "audit-max-events-limit")
	c.IgnoreBool("koordlet serves no profiles", "enable-pprof")
	c.IgnoreValue("koordlet serves no profiles", "pprof-addr")
	c.LegacyKlog()
}

// KoordinatorArgs rewrites Koordinator's Go-style koordlet command line (-addr=:9316) for fs, on which
// AddFlags has run.
func KoordinatorArgs(fs *pflag.FlagSet, args []string) []string {
	return compatflag.SingleDash(fs, args)
}
