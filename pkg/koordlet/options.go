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

// Package koordlet assembles the node agent: its options and flags, and the loops it runs (collection, NodeMetric
// reporting, QoS enforcement) wired to the apiserver, the cgroup tree and /proc.
package koordlet

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/component-base/featuregate"

	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/koordlet/runtimehooks"
	"github.com/koord-dev/koord/pkg/util/compatflag"
)

// NodeNameEnv is the environment variable --node-name defaults to; the DaemonSet sets it from spec.nodeName.
const NodeNameEnv = "NODE_NAME"

// Options are koordlet's settings. DefaultOptions gives the defaults; AddFlags binds them.
type Options struct {
	// Kubeconfig is the path of a kubeconfig; empty means the in-cluster configuration.
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst bound koordlet's requests to the apiserver.
	KubeAPIQPS   float32
	KubeAPIBurst int
	// NodeName is the node this agent runs on.
	NodeName string
	// CgroupRoot is where the cgroup filesystem is mounted: /sys/fs/cgroup, or a host mount such as /host-cgroup.
	CgroupRoot string
	// KubeletCgroupRoot is kubelet's --cgroup-root: the cgroup under which kubepods lives ("/" by default).
	KubeletCgroupRoot string
	// CgroupDriver is cgroupfs or systemd; empty detects it from the kubepods directory name.
	CgroupDriver string
	// ProcRoot is where the host's /proc is mounted.
	ProcRoot string
	// SysRoot is where the host's /sys is mounted (the CPU and NUMA topology).
	SysRoot string
	// ResctrlRoot is where the host's resctrl filesystem is mounted; "" means <SysRoot>/fs/resctrl.
	ResctrlRoot string
	// KubeletRootDir is kubelet's --root-dir (its CPU manager state); KubeletConfig its configuration file
	// (CPU manager policy and options, reserved CPUs, topology manager policy), "" for none.
	KubeletRootDir, KubeletConfig string
	// TopologyReportInterval is how often the NodeResourceTopology is recomputed (written when it changed).
	TopologyReportInterval time.Duration
	// DeviceFile declares the node's devices instead of discovering them (tests, demos); "" discovers them.
	DeviceFile string
	// DeviceReportInterval is how often devices are discovered again (the Device is written when it changed).
	DeviceReportInterval time.Duration
	// CollectInterval is how often node, pod and container usage are sampled.
	CollectInterval time.Duration
	// QoSInterval is how often the QoS strategies run.
	QoSInterval time.Duration
	// ReportWarmup is how long the reporter waits after start before its first NodeMetric report, so the first
	// report has samples; later reports follow the NodeMetric's reportIntervalSeconds.
	ReportWarmup time.Duration
	// NodeMetricWindow is the longest window kept per node series; it bounds the memory of the metric cache and
	// must cover the longest aggregation duration of the NodeMetric spec (30m by default).
	NodeMetricWindow time.Duration
	// PodMetricWindow is the window kept per pod and container series; it must cover the NodeMetric's
	// aggregateDurationSeconds (300 s by default).
	PodMetricWindow time.Duration
	// MetricsBindAddress serves /metrics; "0" turns it off.
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz; "0" turns them off.
	HealthProbeBindAddress string
	// Prediction are the peak prediction's settings (Koordinator's --prediction-* flags).
	Prediction prediction.Config
	// RuntimeHooks are the NRI runtime hooks' settings (Koordinator's --enable-nri-runtime-hook and
	// --runtime-hooks-* flags).
	RuntimeHooks runtimehooks.Options
	// FeatureGates are koordlet's gates.
	FeatureGates featuregate.MutableVersionedFeatureGate

	// gatesFlag is the --feature-gates value, which remembers the Koordinator gates it set aside; compat holds
	// Koordinator's other flags.
	gatesFlag *features.CompatFlag
	compat    *compatflag.Set
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{
		KubeAPIQPS:             20,
		KubeAPIBurst:           30,
		NodeName:               os.Getenv(NodeNameEnv),
		CgroupRoot:             "/sys/fs/cgroup",
		KubeletCgroupRoot:      "/",
		ProcRoot:               "/proc",
		SysRoot:                "/sys",
		KubeletRootDir:         "/var/lib/kubelet",
		KubeletConfig:          "/var/lib/kubelet/config.yaml",
		TopologyReportInterval: 30 * time.Second,
		DeviceReportInterval:   10 * time.Second,
		CollectInterval:        time.Second,
		QoSInterval:            time.Second,
		ReportWarmup:           5 * time.Second,
		NodeMetricWindow:       30 * time.Minute,
		PodMetricWindow:        5 * time.Minute,
		MetricsBindAddress:     ":9316",
		HealthProbeBindAddress: ":9318",
		Prediction:             prediction.DefaultConfig(),
		RuntimeHooks:           runtimehooks.DefaultOptions(),
		FeatureGates:           features.NewKoordletGate(),
	}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig. Empty: the in-cluster configuration.")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "Queries per second to the apiserver.")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "Burst of queries to the apiserver.")
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "Name of the node this agent runs on. Default: $"+NodeNameEnv+".")
	fs.StringVar(&o.CgroupRoot, "cgroup-root", o.CgroupRoot, "Mount point of the cgroup filesystem, e.g. /sys/fs/cgroup or a host mount such as /host-cgroup.")
	fs.StringVar(&o.KubeletCgroupRoot, "kubelet-cgroup-root", o.KubeletCgroupRoot, "kubelet's --cgroup-root: the cgroup that holds kubepods.")
	fs.StringVar(&o.CgroupDriver, "cgroup-driver", o.CgroupDriver, "kubelet's cgroup driver, cgroupfs or systemd. Empty: detected from the cgroup tree.")
	fs.StringVar(&o.ProcRoot, "proc-root", o.ProcRoot, "Mount point of the host's /proc.")
	fs.StringVar(&o.SysRoot, "sys-root", o.SysRoot, "Mount point of the host's /sys (CPU and NUMA topology).")
	fs.StringVar(&o.ResctrlRoot, "resctrl-root", o.ResctrlRoot, "Mount point of the host's resctrl filesystem (LLC and memory bandwidth QoS); empty for <sys-root>/fs/resctrl.")
	fs.StringVar(&o.KubeletRootDir, "kubelet-root-dir", o.KubeletRootDir, "kubelet's --root-dir, which holds its CPU manager state (cpu_manager_state).")
	fs.StringVar(&o.KubeletConfig, "kubelet-config", o.KubeletConfig, "kubelet's configuration file (CPU manager policy and options, reservedSystemCPUs, topology manager policy); a missing file means kubelet's defaults; empty: none.")
	fs.DurationVar(&o.TopologyReportInterval, "topology-report-interval", o.TopologyReportInterval, "How often the node's NodeResourceTopology is recomputed; it is written only when it changed.")
	fs.StringVar(&o.DeviceFile, "device-file", o.DeviceFile, "A YAML or JSON file declaring the node's devices (labels, devices as in the Device object's spec), read at every report instead of discovering GPUs and RDMA NICs; for tests and demos.")
	fs.DurationVar(&o.DeviceReportInterval, "device-report-interval", o.DeviceReportInterval, "How often the node's GPUs and RDMA NICs are discovered again; its Device is written only when it changed.")
	fs.DurationVar(&o.CollectInterval, "collect-interval", o.CollectInterval, "How often node, pod and container usage are sampled.")
	fs.DurationVar(&o.QoSInterval, "qos-interval", o.QoSInterval, "How often the QoS strategies (suppression, burst, eviction, cgroup reconcile) run.")
	fs.DurationVar(&o.ReportWarmup, "report-warmup", o.ReportWarmup, "Delay of the first NodeMetric report after start; later reports follow the NodeMetric's reportIntervalSeconds.")
	fs.DurationVar(&o.NodeMetricWindow, "node-metric-window", o.NodeMetricWindow, "History kept per node series; must cover the longest NodeMetric aggregation duration.")
	fs.DurationVar(&o.PodMetricWindow, "pod-metric-window", o.PodMetricWindow, "History kept per pod and container series; must cover the NodeMetric's aggregateDurationSeconds.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address of the Prometheus /metrics endpoint; 0 turns it off.")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "Address of /healthz and /readyz; 0 turns them off.")
	o.Prediction.AddFlags(fs)
	o.RuntimeHooks.AddFlags(fs)
	o.gatesFlag = features.NewKoordletCompatFlag(o.FeatureGates)
	o.gatesFlag.AddFlag(fs)
	o.addKoordinatorFlags(fs)
}

// Validate reports every invalid option.
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, fmt.Errorf("--node-name: empty; set it or $%s", NodeNameEnv))
	} else if msgs := validation.IsDNS1123Subdomain(o.NodeName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--node-name: %q is not a valid node name: %s", o.NodeName, strings.Join(msgs, "; ")))
	}
	if o.CgroupRoot == "" {
		errs = append(errs, errors.New("--cgroup-root: empty"))
	}
	if o.ProcRoot == "" {
		errs = append(errs, errors.New("--proc-root: empty"))
	}
	if o.SysRoot == "" {
		errs = append(errs, errors.New("--sys-root: empty"))
	}
	if o.KubeletRootDir == "" {
		errs = append(errs, errors.New("--kubelet-root-dir: empty"))
	}
	if o.TopologyReportInterval < time.Second {
		errs = append(errs, fmt.Errorf("--topology-report-interval: %s is shorter than 1s", o.TopologyReportInterval))
	}
	if o.DeviceReportInterval < time.Second {
		errs = append(errs, fmt.Errorf("--device-report-interval: %s is shorter than 1s", o.DeviceReportInterval))
	}
	if !strings.HasPrefix(o.KubeletCgroupRoot, "/") {
		errs = append(errs, fmt.Errorf("--kubelet-cgroup-root: %q must be an absolute cgroup path", o.KubeletCgroupRoot))
	}
	if d := cgroup.Driver(o.CgroupDriver); d != "" && !slices.Contains([]cgroup.Driver{cgroup.Cgroupfs, cgroup.Systemd}, d) {
		errs = append(errs, fmt.Errorf("--cgroup-driver: %q is neither %s nor %s", o.CgroupDriver, cgroup.Cgroupfs, cgroup.Systemd))
	}
	for flag, d := range map[string]time.Duration{"--collect-interval": o.CollectInterval, "--qos-interval": o.QoSInterval} {
		if d < 100*time.Millisecond {
			errs = append(errs, fmt.Errorf("%s: %s is shorter than 100ms", flag, d))
		}
	}
	if o.ReportWarmup < 0 {
		errs = append(errs, fmt.Errorf("--report-warmup: %s is negative", o.ReportWarmup))
	}
	if o.NodeMetricWindow < time.Minute {
		errs = append(errs, fmt.Errorf("--node-metric-window: %s is shorter than 1m", o.NodeMetricWindow))
	}
	if o.PodMetricWindow < time.Minute {
		errs = append(errs, fmt.Errorf("--pod-metric-window: %s is shorter than 1m", o.PodMetricWindow))
	}
	if err := o.Prediction.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.RuntimeHooks.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.KubeAPIQPS <= 0 || o.KubeAPIBurst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps (%v) and --kube-api-burst (%d) must be positive", o.KubeAPIQPS, o.KubeAPIBurst))
	}
	return errors.Join(errs...)
}

// samples returns how many samples of one collection interval fit in window, at least 1.
func samples(window, interval time.Duration) int {
	return max(1, int(window/interval))
}

// resctrlRoot returns where the resctrl filesystem is: ResctrlRoot, else <SysRoot>/fs/resctrl as Koordinator
// resolves it.
func (o *Options) resctrlRoot() string {
	if o.ResctrlRoot != "" {
		return o.ResctrlRoot
	}
	return filepath.Join(o.SysRoot, "fs", "resctrl")
}
