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

package demo

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordlet/prediction"
	"github.com/koord-dev/koord/pkg/sim"
)

// Defaults of the optional scenario fields.
const (
	// DefaultNamespace is where the scenario's pods run when it names no namespace.
	DefaultNamespace = "koord-demo"
	// DefaultSampleInterval is the simulated time between two samples when the scenario sets none.
	DefaultSampleInterval = 15 * time.Minute
	// defaultReportsPerSecond is how many NodeMetric statuses a second the nodes of a scenario that sets no
	// reportInterval write at most: what 1000 nodes reporting every 10 s (koordctl up's default) write, which
	// the local cluster carries with headroom (docs/koordctl.md, Scale and cost).
	defaultReportsPerSecond = 100
)

// DefaultReportInterval returns how often, in wall time, the nodes of a scenario with the given node count report
// NodeMetrics when it sets no reportInterval: every second up to 100 nodes, then a second more per 100 nodes, so
// that the reports stay frequent next to the samples of a fast scenario without loading the apiserver.
func DefaultReportInterval(nodes int) time.Duration {
	return time.Duration(max(1, (nodes+defaultReportsPerSecond-1)/defaultReportsPerSecond)) * time.Second
}

// Limits of a scenario.
const (
	// MaxDuration bounds the simulated duration.
	MaxDuration = 7 * 24 * time.Hour
	// MaxSamples bounds the number of samples (duration / sampleInterval).
	MaxSamples = 10000
	// MaxPods bounds the pods one service or one job run has.
	MaxPods = 5000
	// maxNameLength leaves room in pod names for the run and pod suffixes.
	maxNameLength = 40
)

// Scenario is a demo scenario: a local cluster, latency-sensitive services with their usage over the day, and
// batch jobs arriving over time, run for a simulated duration and sampled at a fixed interval. It is read from
// YAML by Load; examples/README.md documents the format.
type Scenario struct {
	// Name names the scenario in the report.
	Name string `json:"name"`
	// Description says what the scenario shows, for the report.
	Description string `json:"description,omitempty"`
	// Cluster is the local cluster the scenario runs on.
	Cluster ClusterSpec `json:"cluster"`
	// Duration is how long, in simulated time, the scenario runs.
	Duration metav1.Duration `json:"duration"`
	// SampleInterval is the simulated time between two samples; DefaultSampleInterval when unset.
	SampleInterval metav1.Duration `json:"sampleInterval,omitempty"`
	// StartTime is the time of day, "HH:MM" in the usage profiles' clock (UTC), at which the scenario starts.
	StartTime string `json:"startTime,omitempty"`
	// Namespace is where the pods run; DefaultNamespace when empty.
	Namespace string `json:"namespace,omitempty"`
	// Services are the latency-sensitive workloads, created when the scenario starts.
	Services []Service `json:"services,omitempty"`
	// Jobs are the batch workloads, each arriving at its time.
	Jobs []Job `json:"jobs,omitempty"`
}

// ClusterSpec is the local cluster of a scenario.
type ClusterSpec struct {
	// Nodes is the number of fake nodes.
	Nodes int `json:"nodes"`
	// NodeCPU is each node's CPU capacity; cluster.DefaultNodeCPU when unset.
	NodeCPU *resource.Quantity `json:"nodeCPU,omitempty"`
	// NodeMemory is each node's memory capacity; cluster.DefaultNodeMemory when unset.
	NodeMemory *resource.Quantity `json:"nodeMemory,omitempty"`
	// Speed is how fast simulated time runs: 720 makes a simulated day two minutes.
	Speed float64 `json:"speed"`
	// ReportInterval is how often, in wall time, nodes report NodeMetrics (metricReportIntervalSeconds), whatever
	// the speed; DefaultReportInterval of the node count when unset (see ReportIntervalOrDefault).
	ReportInterval *metav1.Duration `json:"reportInterval,omitempty"`
	// SimFeatureGates sets koordlet feature gates of the simulated node agents, e.g. BEMemoryEvict: true.
	SimFeatureGates map[string]bool `json:"simFeatureGates,omitempty"`
	// AggregateDuration is metricAggregateDurationSeconds: the window, in simulated time, over which each node
	// averages the usage it reports; the shipped 5m when unset.
	AggregateDuration *metav1.Duration `json:"aggregateDuration,omitempty"`
	// Descheduler configures koord-descheduler; as `koordctl up` runs it (the shipped configuration with
	// LowNodeLoad on) when unset.
	Descheduler *DeschedulerSpec `json:"descheduler,omitempty"`
	// Mid sets colocation-config's settings of the mid tier; the shipped file's (Koordinator's defaults) when
	// unset.
	Mid *MidSpec `json:"mid,omitempty"`
	// Prediction sets the simulated node agents' peak prediction, in simulated time; Koordinator's defaults when
	// unset.
	Prediction *PredictionSpec `json:"prediction,omitempty"`
}

// MidSpec is colocation-config's mid settings, in percent; unset fields keep the shipped values.
type MidSpec struct {
	// UnallocatedPercent is midUnallocatedPercent: the share of what the prod pods do not request that is
	// offered as mid besides the predicted reclaimable.
	UnallocatedPercent *int64 `json:"unallocatedPercent,omitempty"`
	// CPUThresholdPercent is midCPUThresholdPercent: mid-cpu's cap, in percent of a node's CPU.
	CPUThresholdPercent *int64 `json:"cpuThresholdPercent,omitempty"`
	// MemoryThresholdPercent is midMemoryThresholdPercent: mid-memory's cap, in percent of a node's memory.
	MemoryThresholdPercent *int64 `json:"memoryThresholdPercent,omitempty"`
}

// PredictionSpec is the simulated agents' peak prediction (koordlet's --prediction-* flags), in simulated time;
// unset fields keep Koordinator's defaults.
type PredictionSpec struct {
	// ColdStartDuration is how long after it starts a pod reclaims nothing (24h by default, longer than a
	// one-day scenario).
	ColdStartDuration *metav1.Duration `json:"coldStartDuration,omitempty"`
	// SafetyMarginPercent is added to every predicted peak (10 by default).
	SafetyMarginPercent *int `json:"safetyMarginPercent,omitempty"`
	// CPUHalfLife is the age at which a CPU sample weighs half (12h by default).
	CPUHalfLife *metav1.Duration `json:"cpuHalfLife,omitempty"`
	// MemoryHalfLife is the age at which a memory sample weighs half (24h by default).
	MemoryHalfLife *metav1.Duration `json:"memoryHalfLife,omitempty"`
	// TrainingInterval is how often the models take a sample (1m by default).
	TrainingInterval *metav1.Duration `json:"trainingInterval,omitempty"`
}

// Config returns the prediction settings p gives: Koordinator's defaults with p's fields over them. A nil p
// gives nil (the defaults).
func (p *PredictionSpec) Config() *prediction.Config {
	if p == nil {
		return nil
	}
	c := prediction.DefaultConfig()
	c.CheckpointDir = ""
	for _, d := range []struct {
		from *metav1.Duration
		to   *time.Duration
	}{{p.ColdStartDuration, &c.ColdStartDuration}, {p.CPUHalfLife, &c.CPUHalfLife}, {p.MemoryHalfLife, &c.MemoryHalfLife},
		{p.TrainingInterval, &c.TrainingInterval}} {
		if d.from != nil {
			*d.to = d.from.Duration
		}
	}
	if p.SafetyMarginPercent != nil {
		c.SafetyMarginPercent = *p.SafetyMarginPercent
	}
	return &c
}

// Tiers of services and jobs: the priority class their pods run at and the resources they ask for.
const (
	// TierProd is a service's default: priority class koord-prod, QoS LS, the nodes' standard resources.
	TierProd = "prod"
	// TierMid is priority class koord-mid, QoS LS, on the mid tier: koord-manager's webhook turns the requests
	// into mid-cpu and mid-memory, which koord-manager offers from what the prod pods are predicted not to use.
	TierMid = "mid"
	// TierBatch is a job's default: priority class koord-batch, QoS BE, on batch-cpu and batch-memory.
	TierBatch = "batch"
)

// DeschedulerSpec configures the scenario's koord-descheduler.
type DeschedulerSpec struct {
	// LowNodeLoad enables LowNodeLoad at the balance extension point of every profile, as `koordctl up
	// --descheduler-low-node-load` does; true when unset.
	LowNodeLoad *bool `json:"lowNodeLoad,omitempty"`
	// Config is a DeschedulerConfiguration object used instead of the shipped
	// config/descheduler/koord-descheduler-config.yaml, e.g. with a shorter deschedulingInterval for a fast
	// scenario; the cluster sets its kubeconfig and addresses as for --descheduler-config.
	Config json.RawMessage `json:"config,omitempty"`
}

// LowNodeLoadEnabled reports whether the scenario's descheduler runs LowNodeLoad: unless it says false.
func (c *ClusterSpec) LowNodeLoadEnabled() bool {
	return c.Descheduler == nil || c.Descheduler.LowNodeLoad == nil || *c.Descheduler.LowNodeLoad
}

// ReportIntervalOrDefault returns ReportInterval, or DefaultReportInterval(Nodes) when it is unset. The default
// is resolved here rather than when the scenario loads, so that it follows a --nodes override.
func (c *ClusterSpec) ReportIntervalOrDefault() time.Duration {
	if c.ReportInterval != nil {
		return c.ReportInterval.Duration
	}
	return DefaultReportInterval(c.Nodes)
}

// Resources are the CPU and memory a pod requests.
type Resources struct {
	// CPU is the CPU request.
	CPU resource.Quantity `json:"cpu"`
	// Memory is the memory request.
	Memory resource.Quantity `json:"memory"`
}

// Service is a latency-sensitive workload: replicas pods of QoS class LS and priority class koord-prod (or
// koord-mid, on the mid tier's resources), created when the scenario starts and running to its end, like the
// pods of a Deployment.
type Service struct {
	// Name names the service; its pods are <name>-<i>.
	Name string `json:"name"`
	// Replicas is the number of pods.
	Replicas int `json:"replicas"`
	// Requests is what each pod requests.
	Requests Resources `json:"requests"`
	// Usage is each pod's usage over time (the sim.koord.dev/usage annotation); a share of the requests when
	// unset.
	Usage *Usage `json:"usage,omitempty"`
	// Tier is prod (TierProd, the default) or mid (TierMid).
	Tier string `json:"tier,omitempty"`
	// InitialNodes, when above zero, binds the service's pods to the first InitialNodes nodes at the start,
	// round robin and without the scheduler: the skew a cluster drifts into, for koord-descheduler to correct.
	// The pods the ReplicaSet creates later, such as a migration's replacements, are scheduled as usual.
	InitialNodes int `json:"initialNodes,omitempty"`
}

// Job is a batch workload that arrives at Arrival (and again every Every, when set): each arrival is a run of
// Count pods, at most Parallelism at a time, each running for RunDuration once it runs. The pods ask for cpu
// and memory with priority class koord-batch (koord-mid for the mid tier); koord-manager's webhook makes them
// BE pods on batch resources (LS pods on mid resources) through the scenario's ClusterColocationProfiles.
type Job struct {
	// Name names the job; its runs are <name>-<n> and their pods <name>-<n>-<i>.
	Name string `json:"name"`
	// Arrival is when, counted from the scenario's start, the first run arrives.
	Arrival metav1.Duration `json:"arrival"`
	// Every, when set, makes the job arrive again after each period, while within the scenario's duration.
	Every *metav1.Duration `json:"every,omitempty"`
	// Count is how many pods of a run must complete.
	Count int `json:"count"`
	// Parallelism is the most pods of a run at a time; Count when unset.
	Parallelism int `json:"parallelism,omitempty"`
	// RunDuration is how long, in simulated time, a pod runs before it completes.
	RunDuration metav1.Duration `json:"runDuration"`
	// Requests is what each pod requests (before the webhook turns it into batch resources).
	Requests Resources `json:"requests"`
	// Usage is each pod's usage over time; a share of the requests when unset.
	Usage *Usage `json:"usage,omitempty"`
	// Tier is batch (TierBatch, the default) or mid (TierMid).
	Tier string `json:"tier,omitempty"`
}

// Usage is a pod's usage profile per resource, in the format of the sim.koord.dev/usage annotation (see
// package sim).
type Usage struct {
	// CPU is the CPU profile, in cores.
	CPU *Profile `json:"cpu,omitempty"`
	// Memory is the memory profile, in bytes.
	Memory *Profile `json:"memory,omitempty"`
}

// Profile is one resource's usage profile: constant (value), diurnal (base, amplitude, period, peak, the peak
// a time of day of the scenario's clock with the default 24h period) or bursty (base, burst, probability,
// duration).
type Profile struct {
	// Type is constant, diurnal or bursty.
	Type string `json:"type"`
	// Value is the usage of a constant profile.
	Value *resource.Quantity `json:"value,omitempty"`
	// Base is the mean of a diurnal profile or the usage of a bursty one outside its bursts.
	Base *resource.Quantity `json:"base,omitempty"`
	// Amplitude is how far a diurnal profile swings around Base.
	Amplitude *resource.Quantity `json:"amplitude,omitempty"`
	// Period is the cycle of a diurnal profile; 24h when unset.
	Period *metav1.Duration `json:"period,omitempty"`
	// Peak is when within the period a diurnal profile is highest.
	Peak *metav1.Duration `json:"peak,omitempty"`
	// Burst is the usage of a bursty profile during a burst.
	Burst *resource.Quantity `json:"burst,omitempty"`
	// Probability is the chance that a bucket of a bursty profile is a burst.
	Probability *float64 `json:"probability,omitempty"`
	// Duration is the bucket length of a bursty profile.
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// LoadFile reads and validates the scenario in the YAML file path.
func LoadFile(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	s, err := Load(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	return s, nil
}

// Load decodes a scenario from YAML strictly (an unknown or duplicate field is an error), fills in the
// defaults and validates it. The error names every wrong field by its path, e.g. "jobs[2].arrival".
func Load(data []byte) (*Scenario, error) {
	s := &Scenario{}
	if err := yaml.UnmarshalStrict(data, s); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	s.Default()
	if errs := ValidateScenario(nil, s); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return s, nil
}

// Default fills in the optional fields left unset.
func (s *Scenario) Default() {
	if s.SampleInterval.Duration == 0 {
		s.SampleInterval.Duration = DefaultSampleInterval
	}
	if s.StartTime == "" {
		s.StartTime = "00:00"
	}
	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	}
	if s.Cluster.NodeCPU == nil {
		s.Cluster.NodeCPU = ptr.To(cluster.DefaultNodeCPU.DeepCopy())
	}
	if s.Cluster.NodeMemory == nil {
		s.Cluster.NodeMemory = ptr.To(cluster.DefaultNodeMemory.DeepCopy())
	}
	for i := range s.Jobs {
		if s.Jobs[i].Parallelism == 0 {
			s.Jobs[i].Parallelism = s.Jobs[i].Count
		}
		if s.Jobs[i].Tier == "" {
			s.Jobs[i].Tier = TierBatch
		}
	}
	for i := range s.Services {
		if s.Services[i].Tier == "" {
			s.Services[i].Tier = TierProd
		}
	}
}

// startTimePattern is HH:MM.
var startTimePattern = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)

// StartOfDay returns the StartTime as an offset from midnight; zero when it is malformed (Validate reports it).
func (s *Scenario) StartOfDay() time.Duration {
	m := startTimePattern.FindStringSubmatch(s.StartTime)
	if m == nil {
		return 0
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	return time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute
}

// ValidateScenario returns every field of s that is wrong, by path under path (nil for the root). Call it after
// Default.
func ValidateScenario(path *field.Path, s *Scenario) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "the scenario's name, for the report"))
	}
	errs = append(errs, validateCluster(path.Child("cluster"), &s.Cluster)...)
	d := s.Duration.Duration
	switch {
	case d <= 0:
		errs = append(errs, field.Invalid(path.Child("duration"), s.Duration.Duration.String(), "must be above zero, e.g. 24h"))
	case d > MaxDuration:
		errs = append(errs, field.Invalid(path.Child("duration"), d.String(), fmt.Sprintf("must be at most %s", MaxDuration)))
	}
	si := s.SampleInterval.Duration
	switch {
	case si < time.Second || si%time.Second != 0:
		errs = append(errs, field.Invalid(path.Child("sampleInterval"), si.String(), "must be a whole number of seconds, at least 1s"))
	case d > 0 && si > d:
		errs = append(errs, field.Invalid(path.Child("sampleInterval"), si.String(), fmt.Sprintf("must not exceed the duration %s", d)))
	case d > 0 && d/si > MaxSamples:
		errs = append(errs, field.Invalid(path.Child("sampleInterval"), si.String(), fmt.Sprintf("gives %d samples over %s, at most %d", d/si, d, MaxSamples)))
	}
	if !startTimePattern.MatchString(s.StartTime) {
		errs = append(errs, field.Invalid(path.Child("startTime"), s.StartTime, `must be a time of day "HH:MM", e.g. "06:00"`))
	}
	nsPath := path.Child("namespace")
	for _, msg := range validation.IsDNS1123Label(s.Namespace) {
		errs = append(errs, field.Invalid(nsPath, s.Namespace, msg))
	}
	if s.Namespace == metav1.NamespaceSystem || s.Namespace == "koordinator-system" {
		errs = append(errs, field.Invalid(nsPath, s.Namespace, "koord-manager's webhooks skip this namespace; use another"))
	}
	if len(s.Services) == 0 && len(s.Jobs) == 0 {
		errs = append(errs, field.Required(path.Child("services"), "at least one service or job"))
	}
	names := sets.New[string]()
	checkName := func(p *field.Path, name string) {
		switch {
		case name == "":
			errs = append(errs, field.Required(p, ""))
			return
		case len(name) > maxNameLength:
			errs = append(errs, field.TooLong(p, name, maxNameLength))
		default:
			for _, msg := range validation.IsDNS1123Label(name) {
				errs = append(errs, field.Invalid(p, name, msg))
			}
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(p, name))
		}
		names.Insert(name)
	}
	for i := range s.Services {
		sp := path.Child("services").Index(i)
		svc := &s.Services[i]
		checkName(sp.Child("name"), svc.Name)
		if svc.Replicas < 1 || svc.Replicas > MaxPods {
			errs = append(errs, field.Invalid(sp.Child("replicas"), svc.Replicas, fmt.Sprintf("must be 1 to %d", MaxPods)))
		}
		errs = append(errs, validateResources(sp.Child("requests"), &svc.Requests)...)
		errs = append(errs, validateUsage(sp.Child("usage"), svc.Usage)...)
		errs = append(errs, validateInitialNodes(sp.Child("initialNodes"), svc, &s.Cluster)...)
		if svc.Tier != TierProd && svc.Tier != TierMid {
			errs = append(errs, field.NotSupported(sp.Child("tier"), svc.Tier, []string{TierProd, TierMid}))
		}
	}
	for i := range s.Jobs {
		jp := path.Child("jobs").Index(i)
		j := &s.Jobs[i]
		checkName(jp.Child("name"), j.Name)
		if a := j.Arrival.Duration; a < 0 || (d > 0 && a >= d) {
			errs = append(errs, field.Invalid(jp.Child("arrival"), a.String(), fmt.Sprintf("must be within the scenario's duration %s", shortDuration(d))))
		}
		if j.Every != nil && j.Every.Duration <= 0 {
			errs = append(errs, field.Invalid(jp.Child("every"), j.Every.Duration.String(), "must be above zero (leave it out for a single arrival)"))
		}
		if j.Count < 1 || j.Count > MaxPods {
			errs = append(errs, field.Invalid(jp.Child("count"), j.Count, fmt.Sprintf("must be 1 to %d", MaxPods)))
		}
		if j.Parallelism < 1 || (j.Count >= 1 && j.Parallelism > j.Count) {
			errs = append(errs, field.Invalid(jp.Child("parallelism"), j.Parallelism, "must be 1 to count (count when left out)"))
		}
		if j.RunDuration.Duration <= 0 {
			errs = append(errs, field.Invalid(jp.Child("runDuration"), j.RunDuration.Duration.String(), "must be above zero"))
		}
		errs = append(errs, validateResources(jp.Child("requests"), &j.Requests)...)
		errs = append(errs, validateUsage(jp.Child("usage"), j.Usage)...)
		if j.Tier != TierBatch && j.Tier != TierMid {
			errs = append(errs, field.NotSupported(jp.Child("tier"), j.Tier, []string{TierBatch, TierMid}))
		}
	}
	return errs
}

// validateCluster checks the cluster of a scenario, with the bounds `koordctl up` has.
func validateCluster(path *field.Path, c *ClusterSpec) field.ErrorList {
	var errs field.ErrorList
	if c.Nodes < 1 || c.Nodes > cluster.MaxNodes {
		errs = append(errs, field.Invalid(path.Child("nodes"), c.Nodes, fmt.Sprintf("must be 1 to %d", cluster.MaxNodes)))
	}
	if c.NodeCPU != nil && c.NodeCPU.Sign() <= 0 {
		errs = append(errs, field.Invalid(path.Child("nodeCPU"), c.NodeCPU.String(), "must be above zero"))
	}
	if c.NodeMemory != nil && c.NodeMemory.Sign() <= 0 {
		errs = append(errs, field.Invalid(path.Child("nodeMemory"), c.NodeMemory.String(), "must be above zero"))
	}
	if !(c.Speed > 0 && c.Speed <= MaxSpeed) {
		errs = append(errs, field.Invalid(path.Child("speed"), c.Speed, fmt.Sprintf("must be above 0 and at most %d (720 runs a simulated day in 2 minutes)", MaxSpeed)))
	}
	if ri := c.ReportInterval; ri != nil && (ri.Duration < time.Second || ri.Duration%time.Second != 0) {
		errs = append(errs, field.Invalid(path.Child("reportInterval"), ri.Duration.String(), "must be a whole number of seconds, at least 1s"))
	}
	if ad := c.AggregateDuration; ad != nil && (ad.Duration < time.Second || ad.Duration%time.Second != 0) {
		errs = append(errs, field.Invalid(path.Child("aggregateDuration"), ad.Duration.String(), "must be a whole number of seconds, at least 1s"))
	}
	if d := c.Descheduler; d != nil && len(d.Config) > 0 {
		if _, err := cluster.DeschedulerConfig(d.Config, "", "127.0.0.1:0", c.LowNodeLoadEnabled()); err != nil {
			errs = append(errs, field.Invalid(path.Child("descheduler", "config"), field.OmitValueType{}, err.Error()))
		}
	}
	if m := c.Mid; m != nil {
		mp := path.Child("mid")
		for _, f := range []struct {
			name string
			v    *int64
		}{{"unallocatedPercent", m.UnallocatedPercent}, {"cpuThresholdPercent", m.CPUThresholdPercent}, {"memoryThresholdPercent", m.MemoryThresholdPercent}} {
			if f.v != nil && (*f.v < 0 || *f.v > 100) {
				errs = append(errs, field.Invalid(mp.Child(f.name), *f.v, "must be 0 to 100"))
			}
		}
	}
	if p := c.Prediction; p != nil {
		if err := p.Config().Validate(); err != nil {
			errs = append(errs, field.Invalid(path.Child("prediction"), field.OmitValueType{}, err.Error()))
		}
	}
	if len(c.SimFeatureGates) > 0 {
		if _, err := simFeatures(c.SimFeatureGates); err != nil {
			errs = append(errs, field.Invalid(path.Child("simFeatureGates"), c.SimFeatureGates, err.Error()))
		}
	}
	return errs
}

// validateInitialNodes checks that a service's initial nodes exist and that its pods fit on them by their
// requests: with ceil(replicas / initialNodes) pods on the fullest.
func validateInitialNodes(path *field.Path, svc *Service, c *ClusterSpec) field.ErrorList {
	n := svc.InitialNodes
	switch {
	case n == 0:
		return nil
	case n < 0 || n > c.Nodes:
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("must be 0 (scheduled as usual) to the %d nodes of the cluster", c.Nodes))}
	}
	perNode := int64((svc.Replicas + n - 1) / n)
	var errs field.ErrorList
	for _, r := range []struct {
		name           string
		request, alloc *resource.Quantity
	}{
		{"cpu", &svc.Requests.CPU, c.NodeCPU},
		{"memory", &svc.Requests.Memory, c.NodeMemory},
	} {
		if r.alloc == nil || r.request.Sign() <= 0 {
			continue
		}
		need := r.request.DeepCopy()
		need.Mul(perNode)
		if need.Cmp(*r.alloc) > 0 {
			errs = append(errs, field.Invalid(path, n, fmt.Sprintf("%d pods a node request %s %s, more than a node's %s", perNode, need.String(), r.name, r.alloc.String())))
		}
	}
	return errs
}

// MaxSpeed is the fastest simulated time a scenario may ask for, as `koordctl up --speed` allows.
const MaxSpeed = 3600

// simFeatures resolves koordlet gates set on top of the defaults.
func simFeatures(set map[string]bool) (features.Koordlet, error) {
	g := features.NewKoordletGate()
	if err := g.SetFromMap(set); err != nil {
		return features.Koordlet{}, err
	}
	return features.ResolveKoordlet(g), nil
}

// validateResources checks that both requests are above zero.
func validateResources(path *field.Path, r *Resources) field.ErrorList {
	var errs field.ErrorList
	if r.CPU.Sign() <= 0 {
		errs = append(errs, field.Required(path.Child("cpu"), "a CPU request above zero, e.g. 2 or 500m"))
	}
	if r.Memory.Sign() <= 0 {
		errs = append(errs, field.Required(path.Child("memory"), "a memory request above zero, e.g. 4Gi"))
	}
	return errs
}

// validateUsage checks a usage profile with the parser of the simulated node agents, so that the scenario
// accepts exactly what the annotation accepts.
func validateUsage(path *field.Path, u *Usage) field.ErrorList {
	if u == nil {
		return nil
	}
	value, err := json.Marshal(u)
	if err != nil {
		return field.ErrorList{field.InternalError(path, err)}
	}
	_, err = sim.ParseUsage(string(value))
	if err == nil {
		return nil
	}
	// ParseUsage names each wrong field by its path in the annotation ("cpu.amplitude"); put it under path.
	var agg utilerrors.Aggregate
	if !errors.As(err, &agg) {
		return field.ErrorList{field.Invalid(path, field.OmitValueType{}, err.Error())}
	}
	var errs field.ErrorList
	for _, e := range agg.Errors() {
		var fe *field.Error
		if !errors.As(e, &fe) {
			errs = append(errs, field.Invalid(path, field.OmitValueType{}, e.Error()))
			continue
		}
		c := *fe
		c.Field = path.String() + "." + fe.Field
		errs = append(errs, &c)
	}
	return errs
}

// shortDuration formats d without zero minutes and seconds: 24h rather than 24h0m0s, 20m rather than 20m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
