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

package config

import (
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

// Plugin names of the plugins koord-descheduler runs.
const (
	LowNodeLoadName         = "LowNodeLoad"
	MigrationControllerName = "MigrationController"
)

// Defaults of the arguments, Koordinator's.
const (
	DefaultNamespace                   = "koordinator-system"
	DefaultNodeMetricExpirationSeconds = int64(180)
	DefaultDetectorCacheTimeout        = 5 * time.Minute
	DefaultMaxMigratingPerNode         = int32(2)
	DefaultJobMode                     = "ReservationFirst"
	DefaultJobTTL                      = 5 * time.Minute
	DefaultEvictQPS                    = 10.0
	DefaultEvictBurst                  = int32(1)
	DefaultSchedulerName               = "koord-scheduler"
	DefaultArbitrationInterval         = 500 * time.Millisecond
	DefaultObjectLimiterDuration       = 5 * time.Minute
)

// defaultPlugins are the plugins of every profile unless it disables them.
func defaultPlugins() Plugins {
	return Plugins{
		Evict:  PluginSet{Enabled: []Plugin{{Name: MigrationControllerName}}},
		Filter: PluginSet{Enabled: []Plugin{{Name: MigrationControllerName}}},
	}
}

// SetDefaults fills in Koordinator's defaults: a profile named koord-descheduler when there is none, the
// default plugins merged with each profile's, arguments for every enabled plugin that has none, leader
// election, client connection and endpoints. Plugin arguments must be decoded (Args.Object set) before.
func SetDefaults(c *DeschedulerConfiguration) {
	if len(c.Profiles) == 0 {
		c.Profiles = []DeschedulerProfile{{}}
	}
	if len(c.Profiles) == 1 && c.Profiles[0].Name == "" {
		c.Profiles[0].Name = DefaultProfileName
	}
	for i := range c.Profiles {
		setProfileDefaults(&c.Profiles[i], c.DeschedulingInterval.Duration)
	}

	le := &c.LeaderElection
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = DefaultNamespace
	}
	if le.ResourceName == "" {
		le.ResourceName = "koord-descheduler"
	}
	componentbaseconfigv1alpha1.RecommendedDefaultLeaderElectionConfiguration(le)

	if c.ClientConnection.ContentType == "" {
		c.ClientConnection.ContentType = runtime.ContentTypeProtobuf
		c.ClientConnection.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	if c.ClientConnection.QPS == 0 {
		c.ClientConnection.QPS = 50
	}
	if c.ClientConnection.Burst == 0 {
		c.ClientConnection.Burst = 100
	}
	if c.EnableProfiling == nil {
		c.EnableProfiling = ptr.To(true)
	}
	if *c.EnableProfiling && c.EnableContentionProfiling == nil {
		c.EnableContentionProfiling = ptr.To(true)
	}
	c.HealthzBindAddress = defaultBindAddress(c.HealthzBindAddress)
	c.MetricsBindAddress = defaultBindAddress(c.MetricsBindAddress)
}

// defaultBindAddress gives an unset address 0.0.0.0:DefaultPort, an address without host 0.0.0.0 and an IP
// without port DefaultPort, as Koordinator does.
func defaultBindAddress(addr *string) *string {
	def := net.JoinHostPort("0.0.0.0", strconv.Itoa(DefaultPort))
	if addr == nil {
		return &def
	}
	if host, port, err := net.SplitHostPort(*addr); err == nil {
		if host == "" {
			host = "0.0.0.0"
		}
		return ptr.To(net.JoinHostPort(host, port))
	}
	if ip := net.ParseIP(*addr); ip != nil {
		return ptr.To(net.JoinHostPort(*addr, strconv.Itoa(DefaultPort)))
	}
	return addr
}

func setProfileDefaults(p *DeschedulerProfile, interval time.Duration) {
	merged := mergePlugins(defaultPlugins(), p.Plugins)
	p.Plugins = &merged

	have := map[string]bool{}
	for i := range p.PluginConfig {
		have[p.PluginConfig[i].Name] = true
		setArgsDefaults(p.PluginConfig[i].Args.Object, interval)
	}
	for _, name := range p.Plugins.Names() {
		if have[name] {
			continue
		}
		args := newArgs(name)
		if args == nil {
			continue
		}
		setArgsDefaults(args, interval)
		p.PluginConfig = append(p.PluginConfig, PluginConfig{Name: name, Args: runtime.RawExtension{Object: args}})
		have[name] = true
	}
}

// newArgs returns empty arguments of a plugin, nil for a plugin without arguments of ours.
func newArgs(plugin string) runtime.Object {
	var obj runtime.Object
	switch plugin {
	case LowNodeLoadName:
		obj = &LowNodeLoadArgs{}
	case MigrationControllerName:
		obj = &MigrationControllerArgs{}
	default:
		return nil
	}
	obj.GetObjectKind().SetGroupVersionKind(SchemeGroupVersion.WithKind(plugin + "Args"))
	return obj
}

func setArgsDefaults(obj runtime.Object, interval time.Duration) {
	switch args := obj.(type) {
	case *LowNodeLoadArgs:
		SetDefaultsLowNodeLoadArgs(args)
		// A detector forgotten between two rounds would never count a node hot twice in a row.
		if args.DetectorCacheTimeout.Duration < interval {
			args.DetectorCacheTimeout.Duration = 2 * interval
		}
	case *MigrationControllerArgs:
		SetDefaultsMigrationControllerArgs(args)
	}
}

// Names returns the plugins enabled at any extension point, each once, in the order they first appear.
func (p *Plugins) Names() []string {
	var names []string
	seen := map[string]bool{}
	for _, set := range []PluginSet{p.Deschedule, p.Balance, p.Evict, p.Filter} {
		for _, pl := range set.Enabled {
			if !seen[pl.Name] {
				seen[pl.Name] = true
				names = append(names, pl.Name)
			}
		}
	}
	return names
}

func mergePlugins(defaults Plugins, custom *Plugins) Plugins {
	if custom == nil {
		return defaults
	}
	return Plugins{
		Deschedule: mergePluginSet(defaults.Deschedule, custom.Deschedule),
		Balance:    mergePluginSet(defaults.Balance, custom.Balance),
		Evict:      mergePluginSet(defaults.Evict, custom.Evict),
		Filter:     mergePluginSet(defaults.Filter, custom.Filter),
	}
}

// mergePluginSet keeps the defaults that are not disabled (none when "*" is), in their order, then appends
// the enabled plugins that are not defaults.
func mergePluginSet(defaults, custom PluginSet) PluginSet {
	disabled := map[string]bool{}
	for _, pl := range custom.Disabled {
		disabled[pl.Name] = true
	}
	enabled := map[string]bool{}
	for _, pl := range custom.Enabled {
		enabled[pl.Name] = true
	}
	var out []Plugin
	kept := map[string]bool{}
	if !disabled["*"] {
		for _, pl := range defaults.Enabled {
			if disabled[pl.Name] {
				continue
			}
			out = append(out, pl)
			kept[pl.Name] = true
		}
	}
	for _, pl := range custom.Enabled {
		if !kept[pl.Name] {
			out = append(out, pl)
		}
	}
	return PluginSet{Enabled: out}
}

// DefaultNodePoolName is the name of the node pool the arguments' own thresholds form, Koordinator's.
const DefaultNodePoolName = "__default_node_pool__"

// SetDefaultsLowNodeLoadArgs fills in Koordinator's defaults of LowNodeLoadArgs. As in Koordinator, the
// arguments' own thresholds form a first node pool (DefaultNodePoolName, over the nodes NodeSelector selects)
// before NodePools; Koord leaves it out when they set no thresholds and there are pools, since it could only
// find every node cool. Every pool takes the arguments' values for what it leaves unset.
func SetDefaultsLowNodeLoadArgs(a *LowNodeLoadArgs) {
	if a.Paused == nil {
		a.Paused = ptr.To(false)
	}
	if a.DryRun == nil {
		a.DryRun = ptr.To(false)
	}
	if a.NumberOfNodes == nil {
		a.NumberOfNodes = ptr.To[int32](0)
	}
	if a.NodeFit == nil {
		a.NodeFit = ptr.To(true)
	}
	if a.UseDeviationThresholds == nil {
		a.UseDeviationThresholds = ptr.To(false)
	}
	if a.NodeMetricExpirationSeconds == nil {
		a.NodeMetricExpirationSeconds = ptr.To(DefaultNodeMetricExpirationSeconds)
	}
	if a.DetectorCacheTimeout == nil {
		a.DetectorCacheTimeout = &metav1.Duration{Duration: DefaultDetectorCacheTimeout}
	}
	a.AnomalyCondition = defaultAnomalyCondition(a.AnomalyCondition, &LoadAnomalyCondition{
		Timeout:                  &metav1.Duration{Duration: time.Minute},
		ConsecutiveAbnormalities: 5,
		ConsecutiveNormalities:   3,
	})

	weights := map[corev1.ResourceName]int64{corev1.ResourceCPU: 1, corev1.ResourceMemory: 1}
	for _, t := range []ResourceThresholds{a.LowThresholds, a.HighThresholds, a.ProdLowThresholds, a.ProdHighThresholds} {
		for name := range t {
			weights[name] = 1
		}
	}
	if a.ResourceWeights == nil {
		a.ResourceWeights = map[corev1.ResourceName]int64{}
	}
	for name, w := range weights {
		if a.ResourceWeights[name] <= 0 {
			a.ResourceWeights[name] = w
		}
	}

	if len(a.LowThresholds) > 0 || len(a.HighThresholds) > 0 || len(a.ProdLowThresholds) > 0 ||
		len(a.ProdHighThresholds) > 0 || len(a.NodePools) == 0 {
		if len(a.NodePools) == 0 || a.NodePools[0].Name != DefaultNodePoolName {
			a.NodePools = append([]LowNodeLoadNodePool{{
				Name:                   DefaultNodePoolName,
				NodeSelector:           a.NodeSelector,
				UseDeviationThresholds: *a.UseDeviationThresholds,
			}}, a.NodePools...)
		}
	}
	for i := range a.NodePools {
		pool := &a.NodePools[i]
		if pool.HighThresholds == nil {
			pool.HighThresholds = a.HighThresholds
		}
		if pool.LowThresholds == nil {
			pool.LowThresholds = a.LowThresholds
		}
		if pool.ProdHighThresholds == nil {
			pool.ProdHighThresholds = a.ProdHighThresholds
		}
		if pool.ProdLowThresholds == nil {
			pool.ProdLowThresholds = a.ProdLowThresholds
		}
		if pool.ResourceWeights == nil {
			pool.ResourceWeights = a.ResourceWeights
		}
		pool.AnomalyCondition = defaultAnomalyCondition(pool.AnomalyCondition, a.AnomalyCondition)
	}
}

// defaultAnomalyCondition fills c's unset fields from def (each field on its own: Koordinator's defaulting
// skips ConsecutiveNormalities when ConsecutiveAbnormalities is unset too, which leaves it 0).
func defaultAnomalyCondition(c, def *LoadAnomalyCondition) *LoadAnomalyCondition {
	if c == nil {
		return def.DeepCopy()
	}
	if c.Timeout == nil {
		c.Timeout = def.Timeout.DeepCopy()
	}
	if c.ConsecutiveAbnormalities == 0 {
		c.ConsecutiveAbnormalities = def.ConsecutiveAbnormalities
	}
	if c.ConsecutiveNormalities == 0 {
		c.ConsecutiveNormalities = def.ConsecutiveNormalities
	}
	return c
}

// SetDefaultsMigrationControllerArgs fills in Koordinator's defaults of MigrationControllerArgs.
func SetDefaultsMigrationControllerArgs(a *MigrationControllerArgs) {
	if a.MaxConcurrentReconciles == nil {
		a.MaxConcurrentReconciles = ptr.To[int32](1)
	}
	if a.MaxMigratingPerNode == nil {
		a.MaxMigratingPerNode = ptr.To(DefaultMaxMigratingPerNode)
	}
	if a.DefaultJobMode == "" {
		a.DefaultJobMode = DefaultJobMode
	}
	if len(a.SchedulerNames) == 0 {
		a.SchedulerNames = []string{DefaultSchedulerName}
	}
	if a.DefaultJobTTL == nil {
		a.DefaultJobTTL = &metav1.Duration{Duration: DefaultJobTTL}
	}
	if a.EvictionPolicy == "" {
		a.EvictionPolicy = EvictionPolicyEviction
	}
	if a.EvictQPS == nil {
		a.EvictQPS = &Float64OrString{Value: DefaultEvictQPS}
	}
	if a.EvictBurst == nil {
		a.EvictBurst = ptr.To(DefaultEvictBurst)
	}
	if len(a.ObjectLimiters) == 0 {
		a.ObjectLimiters = ObjectLimiterMap{
			MigrationLimitObjectWorkload: {Duration: metav1.Duration{Duration: DefaultObjectLimiterDuration}},
		}
	}
	if a.ArbitrationArgs == nil {
		a.ArbitrationArgs = &ArbitrationArgs{Enabled: true}
	}
	if a.ArbitrationArgs.Interval == nil {
		a.ArbitrationArgs.Interval = &metav1.Duration{Duration: DefaultArbitrationInterval}
	}
}
