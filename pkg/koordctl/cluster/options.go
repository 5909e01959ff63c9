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

package cluster

import (
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/sim"
)

// BinDirEnv names the environment variable that sets the default binary directory.
const BinDirEnv = "KOORD_BIN_DIR"

// Defaults of Options.
const (
	// DefaultStateDir holds the kubeconfig, the pid file, the logs and the running cluster's data.
	DefaultStateDir = ".koord"
	// DefaultKubeconfigOut is where the administrator kubeconfig is written for the user.
	DefaultKubeconfigOut = "koord.kubeconfig"
	// DefaultBinDir is where the binaries are looked up when $KOORD_BIN_DIR is empty.
	DefaultBinDir = "bin"
	// DefaultNodes is how many fake nodes the cluster has.
	DefaultNodes = 10
	// DefaultNodePods is the pod capacity of each node, the kubelet's default.
	DefaultNodePods = 110
	// DefaultReportInterval is metricReportIntervalSeconds of the installed slo-controller-config: how often,
	// in wall time at any speed, the simulated agents report NodeMetrics. 1000 nodes then write 100 NodeMetric
	// statuses a second, which the local cluster carries (docs/koordctl.md, Scale and cost).
	DefaultReportInterval = 10 * time.Second
	// MaxNodes bounds --nodes: every node gets its own /24 pod CIDR under 10.0.0.0/8.
	MaxNodes = 10000
	// MaxReplicas bounds --replicas: more replicas than three add nothing a local cluster can show.
	MaxReplicas = 3
)

// Default node capacity.
var (
	// DefaultNodeCPU is the CPU capacity of each node.
	DefaultNodeCPU = resource.MustParse("32")
	// DefaultNodeMemory is the memory capacity of each node.
	DefaultNodeMemory = resource.MustParse("128Gi")
)

// Options configure a local cluster. DefaultOptions gives the defaults of `koordctl up`; Validate checks them.
// Relative paths are resolved against the working directory when the cluster starts.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kwok (`make bin`) and koord-manager and koord-scheduler
	// (`make build`).
	BinDir string
	// StateDir holds what the running cluster owns: the kubeconfig, the pid file koordctl down reads, the logs
	// of every process (logs/), and the data of the control plane and components (run/, removed on Stop).
	StateDir string
	// KubeconfigOut, when set, receives a copy of the administrator kubeconfig for the user (removed on Stop);
	// StateDir always has one.
	KubeconfigOut string
	// ConfigDir, when set, is a Koord source tree's config directory to install the manifests from, instead of
	// the copy built into the binary.
	ConfigDir string

	// Nodes is how many fake nodes KWOK runs.
	Nodes int
	// NodeCPU, NodeMemory and NodePods are each node's capacity (and allocatable).
	NodeCPU, NodeMemory resource.Quantity
	// NodePods is each node's pod capacity.
	NodePods int64
	// NodeDevices, when set, gives every node simulated devices, as the sim.koord.dev/devices annotation
	// says them ("gpu=4x16Gi,rdma=2"): the node agents report them as the nodes' Device objects.
	NodeDevices string
	// KWOKStages, when set, is a file of KWOK Stage objects that replaces the default node and pod stages
	// (nodes become Ready and keep a lease; pods bound to them become Running; Job pods complete; deleted pods
	// go).
	KWOKStages string

	// APIServerPort, EtcdPort, WebhookPort, ManagerHealthPort, SchedulerPort, ControllerManagerPort and
	// DefaultSchedulerPort are the ports the components listen on, on 127.0.0.1 (the webhook server on every
	// interface); 0 picks a free one.
	APIServerPort, EtcdPort, WebhookPort, ManagerHealthPort, SchedulerPort int
	ControllerManagerPort, DefaultSchedulerPort                            int
	// DeschedulerPort serves koord-descheduler's /healthz, /readyz and /metrics on 127.0.0.1; 0 picks a free
	// one.
	DeschedulerPort int

	// Speed is how fast simulated time runs for the node agents: 1 is real time, 60 a simulated minute per
	// second. Usage profiles and the aggregation windows of reports follow simulated time; when the agents
	// report (ReportInterval) and the NodeMetric update times are wall-clock times.
	Speed float64
	// ReportInterval is metricReportIntervalSeconds in the slo-controller-config: how often, in wall time
	// whatever the Speed, each node agent reports its NodeMetric, as koord-scheduler and koord-manager read the
	// interval against the wall-clock update times.
	ReportInterval time.Duration
	// DegradeTime, when set, is degradeTimeMinutes in the slo-controller-config: how long after its last
	// NodeMetric update a node loses its batch resources. Zero keeps the shipped default (15 minutes).
	DegradeTime time.Duration
	// AggregateDuration, when set, is metricAggregateDurationSeconds in the slo-controller-config: the window,
	// in simulated time, over which the agents average the usage they report. Zero keeps the shipped default
	// (5 minutes).
	AggregateDuration time.Duration
	// SimFeatures are the koordlet feature gates the simulated node agents follow.
	SimFeatures features.Koordlet
	// Prediction are the simulated node agents' peak prediction settings (koordlet's --prediction-* flags), in
	// simulated time; Koordinator's defaults when nil (a 24h cold start).
	Prediction *prediction.Config
	// Mid are colocation-config's mid settings in the slo-controller-config; unset fields keep the file's.
	Mid MidSettings

	// Replicas is how many replicas of koord-manager and koord-scheduler run, 1..MaxReplicas (0 counts as 1).
	// With more than one they elect their leaders through Leases in koordinator-system, as in a real cluster; a
	// proxy on WebhookPort stands for the webhook Service and spreads the apiserver's calls over the manager
	// replicas; and a replica that exits is started again, as its Deployment would.
	Replicas int

	// AuditLog, when set, is a file kube-apiserver writes its audit log to: the metadata of every request (user,
	// user agent, verb, resource, response code), one JSON event per line, to see which component asks what of
	// the apiserver and how often. It is not removed on Stop.
	AuditLog string

	// ManagerArgs are extra flags for koord-manager, after those the cluster sets.
	ManagerArgs []string
	// SchedulerConfig, when set, is a KubeSchedulerConfiguration file used instead of
	// config/scheduler/koord-scheduler-config.yaml; the cluster sets its kubeconfig and turns leader election
	// off in a copy.
	SchedulerConfig string
	// DeschedulerConfig, when set, is a DeschedulerConfiguration file used instead of
	// config/descheduler/koord-descheduler-config.yaml; the cluster sets its kubeconfig and bind addresses and
	// turns leader election off in a copy.
	DeschedulerConfig string
	// DeschedulerConfigData, when set, is the content of a DeschedulerConfiguration used instead of
	// DeschedulerConfig's file or the shipped one, for callers that hold it in memory (a demo scenario's
	// cluster.descheduler.config).
	DeschedulerConfigData []byte
	// DeschedulerArgs are extra flags for koord-descheduler, after the --config the cluster sets (e.g. "--v=4").
	DeschedulerArgs []string
	// DeschedulerLowNodeLoad enables LowNodeLoad at the balance extension point of every descheduler profile,
	// so that pods move off nodes whose usage is above the high thresholds. The shipped configuration, like
	// Koordinator's, has it off.
	DeschedulerLowNodeLoad bool

	// Monitoring runs Prometheus (bin/prometheus) scraping every component, with Koord's alert rules, and serves
	// the simulated node agents' metrics; koord-manager's metrics are served either way.
	Monitoring bool
	// PrometheusPort is Prometheus's HTTP API on 127.0.0.1 with Monitoring; 0 picks a free one.
	PrometheusPort int

	// Clean makes Stop remove the logs too, and the state directory when nothing else is left in it.
	Clean bool
}

// DefaultOptions returns the defaults of `koordctl up`.
func DefaultOptions() Options {
	binDir := os.Getenv(BinDirEnv)
	if binDir == "" {
		binDir = DefaultBinDir
	}
	return Options{
		BinDir:         binDir,
		StateDir:       DefaultStateDir,
		KubeconfigOut:  DefaultKubeconfigOut,
		Nodes:          DefaultNodes,
		NodeCPU:        DefaultNodeCPU.DeepCopy(),
		NodeMemory:     DefaultNodeMemory.DeepCopy(),
		NodePods:       DefaultNodePods,
		Speed:          1,
		ReportInterval: DefaultReportInterval,
		Replicas:       1,
		SimFeatures:    features.ResolveKoordlet(features.NewKoordletGate()),

		DeschedulerLowNodeLoad: true,
	}
}

// Validate returns an error naming, by its flag, every option that is out of range.
func (o *Options) Validate() error {
	var errs []error
	if o.BinDir == "" {
		errs = append(errs, errors.New("--bin-dir: must not be empty"))
	}
	if o.StateDir == "" {
		errs = append(errs, errors.New("--state-dir: must not be empty"))
	}
	if o.Nodes < 1 || o.Nodes > MaxNodes {
		errs = append(errs, fmt.Errorf("--nodes: %d is outside 1..%d", o.Nodes, MaxNodes))
	}
	if o.NodeCPU.Sign() <= 0 {
		errs = append(errs, fmt.Errorf("--node-cpu: %s must be above zero", o.NodeCPU.String()))
	}
	if o.NodeMemory.Sign() <= 0 {
		errs = append(errs, fmt.Errorf("--node-memory: %s must be above zero", o.NodeMemory.String()))
	}
	if o.NodePods < 1 {
		errs = append(errs, fmt.Errorf("--node-pods: %d must be at least 1", o.NodePods))
	}
	if o.NodeDevices != "" {
		if err := sim.ValidateDevices(o.NodeDevices); err != nil {
			errs = append(errs, fmt.Errorf("--node-devices: %w", err))
		}
	}
	for _, p := range []struct {
		flag string
		port int
	}{
		{"--apiserver-port", o.APIServerPort}, {"--etcd-port", o.EtcdPort}, {"--webhook-port", o.WebhookPort},
		{"--manager-health-port", o.ManagerHealthPort}, {"--scheduler-port", o.SchedulerPort},
		{"--controller-manager-port", o.ControllerManagerPort}, {"--default-scheduler-port", o.DefaultSchedulerPort},
		{"--descheduler-port", o.DeschedulerPort}, {"--prometheus-port", o.PrometheusPort},
	} {
		if p.port < 0 || p.port > 65535 {
			errs = append(errs, fmt.Errorf("%s: %d is not a port (0 picks a free one)", p.flag, p.port))
		}
	}
	if o.Replicas < 0 || o.Replicas > MaxReplicas {
		errs = append(errs, fmt.Errorf("--replicas: %d is outside 1..%d", o.Replicas, MaxReplicas))
	}
	if math.IsNaN(o.Speed) || math.IsInf(o.Speed, 0) || o.Speed <= 0 || o.Speed > 3600 {
		errs = append(errs, fmt.Errorf("--speed: %v is outside (0, 3600] (1 is real time, 60 a simulated minute per second)", o.Speed))
	}
	if o.ReportInterval < time.Second || o.ReportInterval%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--report-interval: %s must be a whole number of seconds, at least 1s", o.ReportInterval))
	}
	if o.DegradeTime < 0 || o.DegradeTime%time.Minute != 0 {
		errs = append(errs, fmt.Errorf("--degrade-time: %s must be a whole number of minutes (0 keeps the default)", o.DegradeTime))
	}
	if o.AggregateDuration < 0 || o.AggregateDuration%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--aggregate-duration: %s must be a whole number of seconds (0 keeps the default)", o.AggregateDuration))
	}
	if o.Prediction != nil {
		if err := o.Prediction.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("prediction: %w", err))
		}
	}
	return errors.Join(errs...)
}

// replicas returns how many replicas of koord-manager and koord-scheduler run.
func (o *Options) replicas() int { return max(1, o.Replicas) }
