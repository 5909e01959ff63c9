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
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

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
