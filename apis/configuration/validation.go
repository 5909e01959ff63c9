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

package configuration

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// The validators follow Koordinator's rules (go-playground tags of apis/configuration and apis/slo, and the
// ConfigMap webhook) and the CRD schema of NodeSLO and NodeMetric, so that a configuration that validates always
// renders objects the API server accepts. Each takes the path of the value it checks; callers pass the ConfigMap
// key as the root, so messages read like
//
//	colocation-config.nodeConfigs[1].midCPUThresholdPercent: Invalid value: 150: must be between 0 and 100
//
// Rules that relate two fields (evict lower < upper, cache range start < end, network request sums) are checked
// on the strategy as it applies: the defaults, merged with the cluster strategy, merged with the node strategy.
// A node strategy is only blamed for a relation the cluster strategy does not already break.
//
// Where Koordinator leaves a number unbounded, a generous upper bound keeps the arithmetic of the resource
// calculation from overflowing: reclaim and batch thresholds may exceed 100 % (Koordinator allows it; reclaiming
// 150 % gives a negative safety margin) but not OverCommitPercentLimit.

// OverCommitPercentLimit is the largest reclaim or batch threshold percentage accepted, 100 times the node.
const OverCommitPercentLimit = 10000

// maxAggregateDurations is the most metric aggregation windows a NodeMetric accepts.
const maxAggregateDurations = 16

// maxVirtualNodes bounds the label sets generated per node selector when looking for overlapping node strategies.
const maxVirtualNodes = 1024

// ValidateSLOCfg checks every key of cfg. The errors of a key are rooted at path.Child(key); with a nil path they
// are rooted at the key itself, as in "colocation-config.enable".
func ValidateSLOCfg(path *field.Path, cfg *SLOCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, ValidateColocationCfg(path.Child(ColocationConfigKey), cfg.Colocation)...)
	errs = append(errs, ValidateResourceThresholdCfg(path.Child(ResourceThresholdConfigKey), cfg.ResourceThreshold)...)
	errs = append(errs, ValidateResourceQOSCfg(path.Child(ResourceQOSConfigKey), cfg.ResourceQOS)...)
	errs = append(errs, ValidateCPUBurstCfg(path.Child(CPUBurstConfigKey), cfg.CPUBurst)...)
	errs = append(errs, ValidateSystemCfg(path.Child(SystemConfigKey), cfg.System)...)
	errs = append(errs, ValidateHostApplicationCfg(path.Child(HostApplicationConfigKey), cfg.HostApplication)...)
	return errs
}

// ValidateColocationCfg checks colocation-config: the cluster strategy, each node strategy and its selector, and
// that no two node strategies select the same nodes.
func ValidateColocationCfg(path *field.Path, cfg *ColocationCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	errs := ValidateColocationStrategy(path, &cfg.ColocationStrategy)
	profiles := make([]NodeCfgProfile, len(cfg.NodeConfigs))
	for i := range cfg.NodeConfigs {
		errs = append(errs, ValidateColocationStrategy(path.Child("nodeConfigs").Index(i), &cfg.NodeConfigs[i].ColocationStrategy)...)
		profiles[i] = cfg.NodeConfigs[i].NodeCfgProfile
	}
	return append(errs, validateNodeProfiles(path.Child("nodeConfigs"), profiles)...)
}

// ValidateColocationStrategy checks the fields of one colocation strategy.
func ValidateColocationStrategy(path *field.Path, s *ColocationStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateMin(path.Child("metricAggregateDurationSeconds"), s.MetricAggregateDurationSeconds, 1)...)
	errs = append(errs, validateMin(path.Child("metricReportIntervalSeconds"), s.MetricReportIntervalSeconds, 1)...)
	if s.MetricAggregatePolicy != nil {
		errs = append(errs, validateAggregatePolicy(path.Child("metricAggregatePolicy"), s.MetricAggregatePolicy)...)
	}
	if s.MetricMemoryCollectPolicy != nil {
		errs = append(errs, validateEnum(path.Child("metricMemoryCollectPolicy"), *s.MetricMemoryCollectPolicy, false,
			slov1alpha1.UsageWithoutPageCache, slov1alpha1.UsageWithHotPageCache, slov1alpha1.UsageWithPageCache)...)
	}
	errs = append(errs, validateRange(path.Child("cpuReclaimThresholdPercent"), s.CPUReclaimThresholdPercent, 0, OverCommitPercentLimit)...)
	if s.CPUCalculatePolicy != nil {
		errs = append(errs, validateEnum(path.Child("cpuCalculatePolicy"), *s.CPUCalculatePolicy, false,
			CalculateByPodUsage, CalculateByPodMaxUsageRequest)...)
	}
	errs = append(errs, validateRange(path.Child("memoryReclaimThresholdPercent"), s.MemoryReclaimThresholdPercent, 0, OverCommitPercentLimit)...)
	if s.MemoryCalculatePolicy != nil {
		errs = append(errs, validateEnum(path.Child("memoryCalculatePolicy"), *s.MemoryCalculatePolicy, false,
			CalculateByPodUsage, CalculateByPodRequest, CalculateByPodMaxUsageRequest)...)
	}
	errs = append(errs, validateMin(path.Child("degradeTimeMinutes"), s.DegradeTimeMinutes, 1)...)
	errs = append(errs, validateMin(path.Child("updateTimeThresholdSeconds"), s.UpdateTimeThresholdSeconds, 1)...)
	if d := s.ResourceDiffThreshold; d != nil && !(*d > 0 && *d <= 1) {
		errs = append(errs, field.Invalid(path.Child("resourceDiffThreshold"), *d, "must be greater than 0 and at most 1"))
	}
	if s.MidReclaimMode != nil {
		errs = append(errs, validateEnum(path.Child("midReclaimMode"), *s.MidReclaimMode, false, MidReclaimModeStatic)...)
	}
	errs = append(errs, validatePercent(path.Child("midCPUThresholdPercent"), s.MidCPUThresholdPercent)...)
	errs = append(errs, validatePercent(path.Child("midMemoryThresholdPercent"), s.MidMemoryThresholdPercent)...)
	errs = append(errs, validatePercent(path.Child("midUnallocatedPercent"), s.MidUnallocatedPercent)...)
	errs = append(errs, validatePercent(path.Child("midStaticCPUReservedPercent"), s.MidStaticCPUReservedPercent)...)
	errs = append(errs, validatePercent(path.Child("midStaticMemoryReservedPercent"), s.MidStaticMemoryReservedPercent)...)
	errs = append(errs, validateRange(path.Child("batchCPUThresholdPercent"), s.BatchCPUThresholdPercent, 0, OverCommitPercentLimit)...)
	errs = append(errs, validateRange(path.Child("batchMemoryThresholdPercent"), s.BatchMemoryThresholdPercent, 0, OverCommitPercentLimit)...)
	return errs
}

// validateAggregatePolicy checks the aggregation windows against the NodeMetric schema: at most 16, each positive.
func validateAggregatePolicy(path *field.Path, p *slov1alpha1.AggregatePolicy) field.ErrorList {
	var errs field.ErrorList
	durations := path.Child("durations")
	if len(p.Durations) > maxAggregateDurations {
		errs = append(errs, field.TooMany(durations, len(p.Durations), maxAggregateDurations))
	}
	for i, d := range p.Durations {
		if d.Duration <= 0 {
			errs = append(errs, field.Invalid(durations.Index(i), d.Duration.String(), "must be positive"))
		}
	}
	return errs
}

// ValidateResourceThresholdCfg checks resource-threshold-config: each strategy's fields, the relations between
// its fields as it applies, each node selector, and that no two node strategies select the same nodes.
func ValidateResourceThresholdCfg(path *field.Path, cfg *ResourceThresholdCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	nodes := make([]nodeStrategy[slov1alpha1.ResourceThresholdStrategy], len(cfg.NodeStrategies))
	for i, n := range cfg.NodeStrategies {
		nodes[i] = nodeStrategy[slov1alpha1.ResourceThresholdStrategy]{profile: n.NodeCfgProfile, strategy: n.ResourceThresholdStrategy}
	}
	return validateLayered(path, DefaultResourceThresholdStrategy(), cfg.ClusterStrategy, nodes,
		validateResourceThresholdFields, validateResourceThresholdRelations)
}

// ValidateResourceThresholdStrategy checks one suppression and eviction strategy on its own: its fields and the
// relations between them.
func ValidateResourceThresholdStrategy(path *field.Path, s *slov1alpha1.ResourceThresholdStrategy) field.ErrorList {
	return append(validateResourceThresholdFields(path, s), validateResourceThresholdRelations(path, s)...)
}

// maxAllocatableEvictPriority is the highest priority allocatable-based eviction may target: koord-mid and below.
const maxAllocatableEvictPriority = 7999

func validateResourceThresholdFields(path *field.Path, s *slov1alpha1.ResourceThresholdStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	for _, p := range []struct {
		name string
		v    *int64
	}{
		{"cpuSuppressThresholdPercent", s.CPUSuppressThresholdPercent},
		{"cpuSuppressMinPercent", s.CPUSuppressMinPercent},
		{"memoryEvictThresholdPercent", s.MemoryEvictThresholdPercent},
		{"memoryEvictLowerPercent", s.MemoryEvictLowerPercent},
		{"cpuEvictBESatisfactionUpperPercent", s.CPUEvictBESatisfactionUpperPercent},
		{"cpuEvictBESatisfactionLowerPercent", s.CPUEvictBESatisfactionLowerPercent},
		{"cpuEvictBEUsageThresholdPercent", s.CPUEvictBEUsageThresholdPercent},
		{"cpuEvictThresholdPercent", s.CPUEvictThresholdPercent},
		{"cpuEvictLowerPercent", s.CPUEvictLowerPercent},
	} {
		errs = append(errs, validatePercent(path.Child(p.name), p.v)...)
	}
	for _, p := range []struct {
		name string
		v    *int64
	}{
		{"cpuAllocatableEvictThresholdPercent", s.CPUAllocatableEvictThresholdPercent},
		{"cpuAllocatableEvictLowerPercent", s.CPUAllocatableEvictLowerPercent},
		{"memoryAllocatableEvictThresholdPercent", s.MemoryAllocatableEvictThresholdPercent},
		{"memoryAllocatableEvictLowerPercent", s.MemoryAllocatableEvictLowerPercent},
	} {
		errs = append(errs, validateMin(path.Child(p.name), p.v, 0)...)
	}
	errs = append(errs, validateMin(path.Child("cpuEvictTimeWindowSeconds"), s.CPUEvictTimeWindowSeconds, 1)...)
	errs = append(errs, validateEnum(path.Child("cpuSuppressPolicy"), s.CPUSuppressPolicy, true,
		slov1alpha1.CPUSetPolicy, slov1alpha1.CPUCfsQuotaPolicy)...)
	errs = append(errs, validateEnum(path.Child("cpuEvictPolicy"), s.CPUEvictPolicy, true,
		slov1alpha1.EvictByRealLimitPolicy, slov1alpha1.EvictByAllocatablePolicy)...)
	if p := s.AllocatableEvictPriorityThreshold; p != nil && *p > maxAllocatableEvictPriority {
		errs = append(errs, field.Invalid(path.Child("allocatableEvictPriorityThreshold"), *p,
			fmt.Sprintf("must be at most %d: allocatable-based eviction may not evict koord-prod pods", maxAllocatableEvictPriority)))
	}
	return errs
}

func validateResourceThresholdRelations(path *field.Path, s *slov1alpha1.ResourceThresholdStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	for _, r := range []struct {
		lowerName, upperName string
		lower, upper         *int64
	}{
		{"memoryEvictLowerPercent", "memoryEvictThresholdPercent", s.MemoryEvictLowerPercent, s.MemoryEvictThresholdPercent},
		{"cpuEvictBESatisfactionLowerPercent", "cpuEvictBESatisfactionUpperPercent", s.CPUEvictBESatisfactionLowerPercent, s.CPUEvictBESatisfactionUpperPercent},
		{"cpuEvictLowerPercent", "cpuEvictThresholdPercent", s.CPUEvictLowerPercent, s.CPUEvictThresholdPercent},
		{"cpuAllocatableEvictLowerPercent", "cpuAllocatableEvictThresholdPercent", s.CPUAllocatableEvictLowerPercent, s.CPUAllocatableEvictThresholdPercent},
		{"memoryAllocatableEvictLowerPercent", "memoryAllocatableEvictThresholdPercent", s.MemoryAllocatableEvictLowerPercent, s.MemoryAllocatableEvictThresholdPercent},
	} {
		errs = append(errs, validateLess(path, r.lowerName, r.upperName, r.lower, r.upper)...)
	}
	return errs
}

// ValidateResourceQOSCfg checks resource-qos-config: each strategy's fields, the relations between its fields as
// it applies, each node selector, and that no two node strategies select the same nodes.
func ValidateResourceQOSCfg(path *field.Path, cfg *ResourceQOSCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	nodes := make([]nodeStrategy[slov1alpha1.ResourceQOSStrategy], len(cfg.NodeStrategies))
	for i, n := range cfg.NodeStrategies {
		nodes[i] = nodeStrategy[slov1alpha1.ResourceQOSStrategy]{profile: n.NodeCfgProfile, strategy: n.ResourceQOSStrategy}
	}
	return validateLayered(path, DefaultResourceQOSStrategy(), cfg.ClusterStrategy, nodes,
		validateResourceQOSFields, validateResourceQOSRelations)
}

// ValidateResourceQOSStrategy checks one per-class QoS strategy on its own: its fields and the relations between
// them.
func ValidateResourceQOSStrategy(path *field.Path, s *slov1alpha1.ResourceQOSStrategy) field.ErrorList {
	return append(validateResourceQOSFields(path, s), validateResourceQOSRelations(path, s)...)
}

// qosClass is one QoS class of a ResourceQOSStrategy with its JSON name.
// +kubebuilder:object:generate=false
type qosClass struct {
	name string
	qos  *slov1alpha1.ResourceQOS
}

func qosClasses(s *slov1alpha1.ResourceQOSStrategy) []qosClass {
	return []qosClass{
		{"lsrClass", s.LSRClass}, {"lsClass", s.LSClass}, {"beClass", s.BEClass},
		{"systemClass", s.SystemClass}, {"cgroupRoot", s.CgroupRoot},
	}
}

func validateResourceQOSFields(path *field.Path, s *slov1alpha1.ResourceQOSStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if p := s.Policies; p != nil {
		if p.CPUPolicy != nil {
			errs = append(errs, validateEnum(path.Child("policies", "cpuPolicy"), *p.CPUPolicy, false,
				slov1alpha1.CPUQOSPolicyGroupIdentity, slov1alpha1.CPUQOSPolicyCoreSched)...)
		}
		if p.NETQOSPolicy != nil {
			errs = append(errs, validateEnum(path.Child("policies", "netQOSPolicy"), *p.NETQOSPolicy, false,
				slov1alpha1.NETQOSPolicyTC, slov1alpha1.NETQOSPolicyTerwayQos)...)
		}
	}
	for _, c := range qosClasses(s) {
		if c.qos != nil {
			errs = append(errs, validateResourceQOS(path.Child(c.name), c.qos)...)
		}
	}
	return errs
}

// validateResourceQOS checks the fields of the QoS setting of one class.
func validateResourceQOS(path *field.Path, q *slov1alpha1.ResourceQOS) field.ErrorList {
	var errs field.ErrorList
	if c := q.CPUQOS; c != nil {
		p := path.Child("cpuQOS")
		errs = append(errs, validateRange(p.Child("groupIdentity"), c.GroupIdentity, -1, 2)...)
		errs = append(errs, validateRange(p.Child("schedIdle"), c.SchedIdle, 0, 1)...)
	}
	if m := q.MemoryQOS; m != nil {
		p := path.Child("memoryQOS")
		errs = append(errs, validatePercent(p.Child("minLimitPercent"), m.MinLimitPercent)...)
		errs = append(errs, validatePercent(p.Child("lowLimitPercent"), m.LowLimitPercent)...)
		errs = append(errs, validatePercent(p.Child("throttlingPercent"), m.ThrottlingPercent)...)
		errs = append(errs, validatePercent(p.Child("wmarkRatio"), m.WmarkRatio)...)
		errs = append(errs, validateRange(p.Child("wmarkScalePermill"), m.WmarkScalePermill, 1, 1000)...)
		errs = append(errs, validateRange(p.Child("wmarkMinAdj"), m.WmarkMinAdj, -25, 50)...)
		errs = append(errs, validateRange(p.Child("priorityEnable"), m.PriorityEnable, 0, 1)...)
		errs = append(errs, validateRange(p.Child("priority"), m.Priority, 0, 12)...)
		errs = append(errs, validateRange(p.Child("oomKillGroup"), m.OomKillGroup, 0, 1)...)
		errs = append(errs, validateRange(p.Child("pageCacheLimitEnable"), m.PageCacheLimitEnable, 0, 1)...)
		errs = append(errs, validateMin(p.Child("pageCacheLimitSize"), m.PageCacheLimitSize, 0)...)
		errs = append(errs, validateRange(p.Child("pageCacheLimitSync"), m.PageCacheLimitSync, 0, 1)...)
	}
	if b := q.BlkIOQOS; b != nil {
		blocks := path.Child("blkioQOS", "blocks")
		for i, block := range b.Blocks {
			p := blocks.Index(i)
			errs = append(errs, validateEnum(p.Child("type"), block.BlockType, true,
				slov1alpha1.BlockTypeDevice, slov1alpha1.BlockTypeVolumeGroup, slov1alpha1.BlockTypePodVolume)...)
			errs = append(errs, validateIOCfg(p.Child("ioCfg"), &block.IOCfg)...)
		}
	}
	if r := q.ResctrlQOS; r != nil {
		p := path.Child("resctrlQOS")
		errs = append(errs, validatePercent(p.Child("catRangeStartPercent"), r.CATRangeStartPercent)...)
		errs = append(errs, validatePercent(p.Child("catRangeEndPercent"), r.CATRangeEndPercent)...)
		errs = append(errs, validatePercent(p.Child("mbaPercent"), r.MBAPercent)...)
	}
	if n := q.NetworkQOS; n != nil {
		p := path.Child("networkQOS")
		for _, v := range []struct {
			name string
			v    *intstr.IntOrString
		}{
			{"ingressRequest", n.IngressRequest}, {"ingressLimit", n.IngressLimit},
			{"egressRequest", n.EgressRequest}, {"egressLimit", n.EgressLimit},
		} {
			errs = append(errs, validateBandwidth(p.Child(v.name), v.v)...)
		}
	}
	return errs
}

func validateIOCfg(path *field.Path, c *slov1alpha1.IOCfg) field.ErrorList {
	var errs field.ErrorList
	for _, v := range []struct {
		name string
		v    *int64
	}{
		{"readIOPS", c.ReadIOPS}, {"writeIOPS", c.WriteIOPS}, {"readBPS", c.ReadBPS}, {"writeBPS", c.WriteBPS},
		{"readLatency", c.ReadLatency}, {"writeLatency", c.WriteLatency},
	} {
		errs = append(errs, validateMin(path.Child(v.name), v.v, 0)...)
	}
	for _, v := range []struct {
		name string
		v    *int64
	}{
		{"modelReadBPS", c.ModelReadBPS}, {"modelWriteBPS", c.ModelWriteBPS},
		{"modelReadSeqIOPS", c.ModelReadSeqIOPS}, {"modelWriteSeqIOPS", c.ModelWriteSeqIOPS},
		{"modelReadRandIOPS", c.ModelReadRandIOPS}, {"modelWriteRandIOPS", c.ModelWriteRandIOPS},
	} {
		errs = append(errs, validateMin(path.Child(v.name), v.v, 1)...)
	}
	errs = append(errs, validateRange(path.Child("ioWeightPercent"), c.IOWeightPercent, 1, 100)...)
	errs = append(errs, validatePercent(path.Child("readLatencyPercent"), c.ReadLatencyPercent)...)
	errs = append(errs, validatePercent(path.Child("writeLatencyPercent"), c.WriteLatencyPercent)...)
	return errs
}

// validateBandwidth checks a network QoS value: an integer percentage or a non-negative quantity in bytes per
// second, as the NodeSLO schema requires.
func validateBandwidth(path *field.Path, v *intstr.IntOrString) field.ErrorList {
	if v == nil {
		return nil
	}
	const detail = "must be an integer percentage in 0..100 or a bandwidth quantity such as 50M"
	if v.Type == intstr.Int {
		if v.IntVal < 0 || v.IntVal > 100 {
			return field.ErrorList{field.Invalid(path, v.IntVal, detail)}
		}
		return nil
	}
	q, err := resource.ParseQuantity(v.StrVal)
	if err != nil || q.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, v.StrVal, detail)}
	}
	return nil
}

func validateResourceQOSRelations(path *field.Path, s *slov1alpha1.ResourceQOSStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	var ingress, egress int64
	var ints, quantities []string
	var firstQuantity string
	for _, c := range qosClasses(s) {
		if c.qos == nil {
			continue
		}
		if r := c.qos.ResctrlQOS; r != nil {
			errs = append(errs, validateLess(path.Child(c.name, "resctrlQOS"), "catRangeStartPercent", "catRangeEndPercent",
				r.CATRangeStartPercent, r.CATRangeEndPercent)...)
		}
		n := c.qos.NetworkQOS
		if n == nil {
			continue
		}
		for _, v := range []struct {
			name string
			v    *intstr.IntOrString
		}{
			{"ingressRequest", n.IngressRequest}, {"ingressLimit", n.IngressLimit},
			{"egressRequest", n.EgressRequest}, {"egressLimit", n.EgressLimit},
		} {
			if v.v == nil {
				continue
			}
			name := c.name + ".networkQOS." + v.name
			if v.v.Type == intstr.Int {
				ints = append(ints, name)
			} else {
				if len(quantities) == 0 {
					firstQuantity = v.v.StrVal
				}
				quantities = append(quantities, name)
			}
		}
		ingress += percentOrZero(n.IngressRequest)
		egress += percentOrZero(n.EgressRequest)
	}
	if len(ints) > 0 && len(quantities) > 0 {
		first := strings.Split(quantities[0], ".")
		errs = append(errs, field.Invalid(path.Child(first[0], first[1:]...), firstQuantity,
			fmt.Sprintf("network QoS values must be all percentages or all quantities, but %s are percentages and %s are quantities",
				strings.Join(ints, ", "), strings.Join(quantities, ", "))))
	}
	if ingress > 100 {
		errs = append(errs, field.Invalid(path, ingress, "the ingressRequest percentages of all classes must sum to at most 100"))
	}
	if egress > 100 {
		errs = append(errs, field.Invalid(path, egress, "the egressRequest percentages of all classes must sum to at most 100"))
	}
	return errs
}

// percentOrZero returns a valid integer percentage, or 0 for quantities and out-of-range values (reported
// elsewhere).
func percentOrZero(v *intstr.IntOrString) int64 {
	if v == nil || v.Type != intstr.Int || v.IntVal < 0 || v.IntVal > 100 {
		return 0
	}
	return int64(v.IntVal)
}

// ValidateCPUBurstCfg checks cpu-burst-config: each strategy's fields, each node selector, and that no two node
// strategies select the same nodes.
func ValidateCPUBurstCfg(path *field.Path, cfg *CPUBurstCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	nodes := make([]nodeStrategy[slov1alpha1.CPUBurstStrategy], len(cfg.NodeStrategies))
	for i, n := range cfg.NodeStrategies {
		nodes[i] = nodeStrategy[slov1alpha1.CPUBurstStrategy]{profile: n.NodeCfgProfile, strategy: n.CPUBurstStrategy}
	}
	return validateLayered(path, DefaultCPUBurstStrategy(), cfg.ClusterStrategy, nodes, ValidateCPUBurstStrategy, nil)
}

// ValidateCPUBurstStrategy checks the fields of one CPU burst strategy.
func ValidateCPUBurstStrategy(path *field.Path, s *slov1alpha1.CPUBurstStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateEnum(path.Child("policy"), s.Policy, true,
		slov1alpha1.CPUBurstNone, slov1alpha1.CPUBurstOnly, slov1alpha1.CFSQuotaBurstOnly, slov1alpha1.CPUBurstAuto)...)
	errs = append(errs, validateRange(path.Child("cpuBurstPercent"), s.CPUBurstPercent, 1, 10000)...)
	errs = append(errs, validateMin(path.Child("cfsQuotaBurstPercent"), s.CFSQuotaBurstPercent, 100)...)
	errs = append(errs, validateMin(path.Child("cfsQuotaBurstPeriodSeconds"), s.CFSQuotaBurstPeriodSeconds, -1)...)
	errs = append(errs, validatePercent(path.Child("sharePoolThresholdPercent"), s.SharePoolThresholdPercent)...)
	return errs
}

// ValidateSystemCfg checks system-config: each strategy's fields, each node selector, and that no two node
// strategies select the same nodes.
func ValidateSystemCfg(path *field.Path, cfg *SystemCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	nodes := make([]nodeStrategy[slov1alpha1.SystemStrategy], len(cfg.NodeStrategies))
	for i, n := range cfg.NodeStrategies {
		nodes[i] = nodeStrategy[slov1alpha1.SystemStrategy]{profile: n.NodeCfgProfile, strategy: n.SystemStrategy}
	}
	return validateLayered(path, DefaultSystemStrategy(), cfg.ClusterStrategy, nodes, ValidateSystemStrategy, nil)
}

// ValidateSystemStrategy checks the fields of one system strategy.
func ValidateSystemStrategy(path *field.Path, s *slov1alpha1.SystemStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateMin(path.Child("minFreeKbytesFactor"), s.MinFreeKbytesFactor, 1)...)
	errs = append(errs, validateRange(path.Child("watermarkScaleFactor"), s.WatermarkScaleFactor, 1, 400)...)
	errs = append(errs, validateRange(path.Child("memcgReapBackGround"), s.MemcgReapBackGround, 0, 1)...)
	errs = append(errs, validateRange(path.Child("schedGroupIdentityEnabled"), s.SchedGroupIdentityEnabled, 0, 1)...)
	errs = append(errs, validateMin(path.Child("schedIdleSaverWmark"), s.SchedIdleSaverWmark, 0)...)
	errs = append(errs, validateRange(path.Child("pageCacheLimitEnabled"), s.PageCacheLimitEnabled, 0, 1)...)
	for _, name := range slices.Sorted(maps.Keys(s.SchedFeatures)) {
		if name == "" || strings.ContainsAny(name, " \t\n/") {
			errs = append(errs, field.Invalid(path.Child("schedFeatures").Key(name), name, "must be the name of a scheduler feature"))
		}
	}
	if s.TotalNetworkBandwidth.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("totalNetworkBandwidth"), s.TotalNetworkBandwidth.String(), "must not be negative"))
	}
	return errs
}

// ValidateHostApplicationCfg checks host-application-config: each application, each node selector, and that no
// two node configurations select the same nodes.
func ValidateHostApplicationCfg(path *field.Path, cfg *HostApplicationCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	errs := validateHostApplications(path.Child("applications"), cfg.Applications)
	profiles := make([]NodeCfgProfile, len(cfg.NodeConfigs))
	for i := range cfg.NodeConfigs {
		errs = append(errs, validateHostApplications(path.Child("nodeConfigs").Index(i).Child("applications"), cfg.NodeConfigs[i].Applications)...)
		profiles[i] = cfg.NodeConfigs[i].NodeCfgProfile
	}
	return append(errs, validateNodeProfiles(path.Child("nodeConfigs"), profiles)...)
}

// validateHostApplications checks a list of host applications: unique non-empty names (the node agent reports
// their usage by name) and known priority, QoS and cgroup base values.
func validateHostApplications(path *field.Path, apps []slov1alpha1.HostApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]int, len(apps))
	for i, app := range apps {
		p := path.Index(i)
		switch j, dup := seen[app.Name]; {
		case app.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "the node agent reports host applications by name"))
		case dup:
			errs = append(errs, field.Invalid(p.Child("name"), app.Name, fmt.Sprintf("is also the name of %s", path.Index(j))))
		default:
			seen[app.Name] = i
		}
		errs = append(errs, validateEnum(p.Child("priority"), extension.PriorityClass(app.Priority), true,
			extension.PriorityProd, extension.PriorityMid, extension.PriorityBatch, extension.PriorityFree)...)
		errs = append(errs, validateEnum(p.Child("qos"), extension.QoSClass(app.QoS), true,
			extension.QoSLSE, extension.QoSLSR, extension.QoSLS, extension.QoSBE, extension.QoSSystem)...)
		if app.CgroupPath != nil {
			errs = append(errs, validateEnum(p.Child("cgroupPath", "base"), app.CgroupPath.Base, true,
				slov1alpha1.CgroupBaseTypeRoot, slov1alpha1.CgroupBaseTypeKubepods,
				slov1alpha1.CgroupBaseTypeKubeBurstable, slov1alpha1.CgroupBaseTypeKubeBesteffort)...)
		}
	}
	return errs
}

// nodeStrategy is a node strategy of one of the {clusterStrategy, nodeStrategies} keys.
// +kubebuilder:object:generate=false
type nodeStrategy[T any] struct {
	profile  NodeCfgProfile
	strategy *T
}

// validateLayered validates a {clusterStrategy, nodeStrategies} key. fields checks a strategy's own fields and
// runs on each strategy as written; relations checks rules across fields and runs on each strategy as it applies
// (defaults ← cluster ← node). A node strategy is not blamed for a relation error the cluster strategy has too.
func validateLayered[T any, PT deepCopier[T]](path *field.Path, defaults, cluster PT, nodes []nodeStrategy[T],
	fields, relations func(*field.Path, PT) field.ErrorList) field.ErrorList {
	clusterPath := path.Child("clusterStrategy")
	errs := fields(clusterPath, cluster)
	clusterMerged := Merge(defaults, cluster)
	var clusterRelations field.ErrorList
	if relations != nil {
		clusterRelations = relations(clusterPath, clusterMerged)
		errs = append(errs, clusterRelations...)
	}
	clusterKeys := make(map[string]bool, len(clusterRelations))
	for _, e := range clusterRelations {
		clusterKeys[relationKey(clusterPath, e)] = true
	}
	nodesPath := path.Child("nodeStrategies")
	profiles := make([]NodeCfgProfile, len(nodes))
	for i, n := range nodes {
		p := nodesPath.Index(i)
		errs = append(errs, fields(p, n.strategy)...)
		if relations != nil && n.strategy != nil {
			for _, e := range relations(p, Merge(clusterMerged, n.strategy)) {
				if !clusterKeys[relationKey(p, e)] {
					errs = append(errs, e)
				}
			}
		}
		profiles[i] = n.profile
	}
	return append(errs, validateNodeProfiles(nodesPath, profiles)...)
}

// relationKey identifies a relation error by its field relative to root, its type, value and detail, so that the
// same error found under another root compares equal.
func relationKey(root *field.Path, e *field.Error) string {
	return fmt.Sprintf("%s|%s|%v|%s", strings.TrimPrefix(e.Field, root.String()), e.Type, e.BadValue, e.Detail)
}

// validateNodeProfiles checks that every node strategy selects nodes with a valid, non-empty selector and that no
// two strategies select the same nodes. Since the first matching strategy wins, an overlap would silently shadow
// the later strategy on some nodes; Koordinator's ConfigMap webhook rejects it, and so does Koord, in the webhook
// and when loading.
//
// Overlap is found as Koordinator finds it, on "virtual nodes": for each selector, the label sets it requires
// (its matchLabels, each combination of its In values, and for Exists any value the other selectors use for the
// key). Two strategies overlap when a virtual node of one is selected by the other. Selectors on different label
// keys, such as pool=a and gpu=true, are not reported: whether a real node carries both is not known here.
func validateNodeProfiles(path *field.Path, profiles []NodeCfgProfile) field.ErrorList {
	var errs field.ErrorList
	valid := make([]bool, len(profiles))
	for i, p := range profiles {
		sel := path.Index(i).Child("nodeSelector")
		if p.NodeSelector == nil || (len(p.NodeSelector.MatchLabels) == 0 && len(p.NodeSelector.MatchExpressions) == 0) {
			errs = append(errs, field.Required(sel, "a node strategy must select nodes by matchLabels or matchExpressions"))
			continue
		}
		selErrs := metav1validation.ValidateLabelSelector(p.NodeSelector, metav1validation.LabelSelectorValidationOptions{}, sel)
		errs = append(errs, selErrs...)
		valid[i] = len(selErrs) == 0
	}
	return append(errs, validateNoOverlap(path, profiles, valid)...)
}

func validateNoOverlap(path *field.Path, profiles []NodeCfgProfile, valid []bool) field.ErrorList {
	candidates := candidateValues(profiles, valid)
	virtual := make([][]map[string]string, len(profiles))
	for i, p := range profiles {
		if valid[i] {
			virtual[i] = virtualNodes(p.NodeSelector, candidates)
		}
	}
	var errs field.ErrorList
	for j := range profiles {
		if !valid[j] {
			continue
		}
		for i := range j {
			if !valid[i] {
				continue
			}
			example, ok := overlap(virtual[i], profiles[j].NodeSelector)
			if !ok {
				example, ok = overlap(virtual[j], profiles[i].NodeSelector)
			}
			if ok {
				errs = append(errs, field.Forbidden(path.Index(j).Child("nodeSelector"), fmt.Sprintf(
					"node strategy %s overlaps node strategy %s: both select a node labelled %q; the first match would win, so node strategies must not overlap",
					profileName(path, j, profiles[j]), profileName(path, i, profiles[i]), example)))
			}
		}
	}
	return errs
}

// profileName names a node strategy in messages: its name and index, or its index.
func profileName(path *field.Path, i int, p NodeCfgProfile) string {
	if p.Name == "" {
		return path.Index(i).String()
	}
	return fmt.Sprintf("%q (%s)", p.Name, path.Index(i))
}

// overlap returns the first of nodes that sel selects, formatted as a label list.
func overlap(nodes []map[string]string, sel *metav1.LabelSelector) (string, bool) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "", false
	}
	for _, n := range nodes {
		if s.Matches(labels.Set(n)) {
			return labels.Set(n).String(), true
		}
	}
	return "", false
}

// existsPlaceholder is the label value a virtual node gets for an Exists requirement when no selector names a
// value for the key.
const existsPlaceholder = "koord-any-value"

// candidateValues collects, per label key, the values the valid selectors name, for Exists requirements.
func candidateValues(profiles []NodeCfgProfile, valid []bool) map[string][]string {
	out := map[string][]string{}
	add := func(k, v string) {
		if !slices.Contains(out[k], v) {
			out[k] = append(out[k], v)
		}
	}
	for i, p := range profiles {
		if !valid[i] {
			continue
		}
		for k, v := range p.NodeSelector.MatchLabels {
			add(k, v)
		}
		for _, r := range p.NodeSelector.MatchExpressions {
			for _, v := range r.Values {
				add(r.Key, v)
			}
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// virtualNodes returns up to maxVirtualNodes label sets that sel selects, built from the labels it requires.
func virtualNodes(sel *metav1.LabelSelector, candidates map[string][]string) []map[string]string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil
	}
	type choice struct {
		key    string
		values []string
	}
	var choices []choice
	for _, r := range sel.MatchExpressions {
		if _, fixed := sel.MatchLabels[r.Key]; fixed {
			continue
		}
		switch r.Operator {
		case metav1.LabelSelectorOpIn:
			choices = append(choices, choice{r.Key, r.Values})
		case metav1.LabelSelectorOpExists:
			choices = append(choices, choice{r.Key, append(slices.Clone(candidates[r.Key]), existsPlaceholder)})
		}
	}
	nodes := []map[string]string{{}}
	for k, v := range sel.MatchLabels {
		nodes[0][k] = v
	}
	for _, c := range choices {
		var next []map[string]string
		for _, n := range nodes {
			if _, set := n[c.key]; set {
				next = append(next, n)
				continue
			}
			for _, v := range c.values {
				if len(next) == maxVirtualNodes {
					break
				}
				m := make(map[string]string, len(n)+1)
				for k, v := range n {
					m[k] = v
				}
				m[c.key] = v
				next = append(next, m)
			}
		}
		nodes = next
	}
	return slices.DeleteFunc(nodes, func(n map[string]string) bool { return !s.Matches(labels.Set(n)) })
}

// validatePercent checks an optional percentage in [0, 100].
func validatePercent(path *field.Path, v *int64) field.ErrorList {
	return validateRange(path, v, 0, 100)
}

// validateRange checks an optional integer in [lo, hi].
func validateRange(path *field.Path, v *int64, lo, hi int64) field.ErrorList {
	if v == nil || (*v >= lo && *v <= hi) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be between %d and %d", lo, hi))}
}

// validateMin checks an optional integer is at least lo.
func validateMin(path *field.Path, v *int64, lo int64) field.ErrorList {
	if v == nil || *v >= lo {
		return nil
	}
	return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be greater than or equal to %d", lo))}
}

// validateLess checks that lower < upper when both are set. The error is reported on lower and names upper's
// value, which may come from another layer of the configuration.
func validateLess(path *field.Path, lowerName, upperName string, lower, upper *int64) field.ErrorList {
	if lower == nil || upper == nil || *lower < *upper {
		return nil
	}
	return field.ErrorList{field.Invalid(path.Child(lowerName), *lower,
		fmt.Sprintf("must be less than %s (%d)", upperName, *upper))}
}

// validateEnum checks v is one of values, or empty when allowEmpty.
func validateEnum[T ~string](path *field.Path, v T, allowEmpty bool, values ...T) field.ErrorList {
	if (allowEmpty && v == "") || slices.Contains(values, v) {
		return nil
	}
	supported := make([]string, len(values))
	for i, s := range values {
		supported[i] = string(s)
	}
	return field.ErrorList{field.NotSupported(path, string(v), supported)}
}
