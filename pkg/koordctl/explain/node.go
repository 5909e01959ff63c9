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

package explain

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// NodeExplanation is `koordctl explain node`: how koord-manager computed the node's batch and mid resources,
// the NodeSLO in force, usage against its thresholds, and what koord-scheduler holds on the node.
type NodeExplanation struct {
	Name string `json:"name"`
	// Allocatable are the node's batch and mid resources as its status has them.
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	// Colocation is koord-manager's last calculation (the koord.dev/colocation-resources annotation); nil when
	// koord-manager has not computed the node.
	Colocation *extension.ColocationExplanation `json:"colocation,omitempty"`
	// Terms are the calculation of batch-cpu and batch-memory, mid-cpu and mid-memory, term by term.
	Terms []ResourceTerms `json:"terms,omitempty"`
	// SLO is the node's NodeSLO thresholds in force; nil when it has none.
	SLO *slov1alpha1.ResourceThresholdStrategy `json:"slo,omitempty"`
	// Usage is the node's usage as its NodeMetric last reported it.
	Usage *NodeUsage `json:"usage,omitempty"`
	// Reservations are the Reservations placed on the node.
	Reservations []ReservationSummary `json:"reservations,omitempty"`
	// NUMA are the node's NUMA zones from its NodeResourceTopology.
	NUMA []NUMAZone `json:"numa,omitempty"`
	// Devices are the node's devices from its Device object, with what is allocated on each.
	Devices []DeviceSummary `json:"devices,omitempty"`
	// Warnings are inputs that could not be read.
	Warnings []string `json:"warnings,omitempty"`

	now time.Time
}

// ResourceTerms is one reclaimed resource's calculation.
type ResourceTerms struct {
	// Resource is the node resource computed (kubernetes.io/batch-cpu, ...).
	Resource string `json:"resource"`
	// Formula is the calculation in words, Terms its inputs in order.
	Formula string `json:"formula"`
	Terms   []Term `json:"terms"`
	// Computed is the formula's result in the node resource's unit, Written what koord-manager wrote (its
	// explanation), Allocatable what the node offers now; Consistent tells whether the three agree.
	Computed    string `json:"computed,omitempty"`
	Written     string `json:"written,omitempty"`
	Allocatable string `json:"allocatable,omitempty"`
	Consistent  bool   `json:"consistent"`
	// Note says why the resource was removed or differs.
	Note string `json:"note,omitempty"`
}

// Term is one input of a calculation.
type Term struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// NodeUsage is a node's reported usage against the thresholds that act on it.
type NodeUsage struct {
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
	// CPU and Memory are the node's usage, and Percent of its allocatable.
	CPU           string `json:"cpu,omitempty"`
	CPUPercent    int64  `json:"cpuPercent"`
	Memory        string `json:"memory,omitempty"`
	MemoryPercent int64  `json:"memoryPercent"`
	// LoadAwareThresholds are the node's own LoadAwareScheduling thresholds (its usage-thresholds annotation);
	// nil when koord-scheduler's args apply.
	LoadAwareThresholds map[corev1.ResourceName]int64 `json:"loadAwareThresholds,omitempty"`
}

// ReservationSummary is a Reservation on a node.
type ReservationSummary struct {
	Name        string              `json:"name"`
	Phase       string              `json:"phase"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	Allocated   corev1.ResourceList `json:"allocated,omitempty"`
	Owners      []string            `json:"owners,omitempty"`
}

// NUMAZone is one NUMA node of a node.
type NUMAZone struct {
	Name        string              `json:"name"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
	Available   corev1.ResourceList `json:"available,omitempty"`
}

// DeviceSummary is one device of a node.
type DeviceSummary struct {
	Type      string              `json:"type"`
	ID        string              `json:"id"`
	Health    bool                `json:"health"`
	NUMANode  *int32              `json:"numaNode,omitempty"`
	PCIe      string              `json:"pcie,omitempty"`
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Pods are the pods allocated a part of the device, as "namespace/name".
	Pods []string `json:"pods,omitempty"`
}

// Node explains the node name.
func (e *Explainer) Node(ctx context.Context, name string) (*NodeExplanation, error) {
	node, err := e.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", name, err)
	}
	x := &NodeExplanation{Name: name, now: e.now()}
	for _, n := range []corev1.ResourceName{extension.BatchCPU, extension.BatchMemory, extension.MidCPU, extension.MidMemory} {
		if q, ok := node.Status.Allocatable[n]; ok {
			if x.Allocatable == nil {
				x.Allocatable = corev1.ResourceList{}
			}
			x.Allocatable[n] = q
		}
	}
	if c, err := extension.GetColocationExplanation(node.Annotations); err != nil {
		x.Warnings = append(x.Warnings, err.Error())
	} else if c != nil {
		x.Colocation = c
		x.Terms = colocationTerms(c, node.Status.Allocatable)
	} else {
		x.Warnings = append(x.Warnings, "koord-manager has not computed this node's batch and mid resources (no "+extension.AnnotationColocationExplanation+" annotation): is koord-manager running, and colocation enabled?")
	}

	if slo, err := e.Koord.SloV1alpha1().NodeSLOs().Get(ctx, name, metav1.GetOptions{}); err == nil {
		x.SLO = slo.Spec.ResourceUsedThresholdWithBE
	} else if !apierrors.IsNotFound(err) {
		x.Warnings = append(x.Warnings, fmt.Sprintf("get NodeSLO: %v", err))
	}
	x.Usage, x.Warnings = e.nodeUsage(ctx, node, x.Warnings)

	if list, err := e.Koord.SchedulingV1alpha1().Reservations().List(ctx, metav1.ListOptions{}); err != nil {
		x.Warnings = append(x.Warnings, fmt.Sprintf("list Reservations: %v", err))
	} else {
		for _, r := range list.Items {
			if r.Status.NodeName != name {
				continue
			}
			s := ReservationSummary{Name: r.Name, Phase: string(r.Status.Phase), Allocatable: r.Status.Allocatable, Allocated: r.Status.Allocated}
			for _, o := range r.Status.CurrentOwners {
				s.Owners = append(s.Owners, o.Namespace+"/"+o.Name)
			}
			x.Reservations = append(x.Reservations, s)
		}
		slices.SortFunc(x.Reservations, func(a, b ReservationSummary) int { return strings.Compare(a.Name, b.Name) })
	}

	if nrt, err := e.Koord.TopologyV1alpha1().NodeResourceTopologies().Get(ctx, name, metav1.GetOptions{}); err == nil {
		for _, z := range nrt.Zones {
			if z.Type != "Node" {
				continue
			}
			zone := NUMAZone{Name: z.Name, Allocatable: corev1.ResourceList{}, Available: corev1.ResourceList{}}
			for _, r := range z.Resources {
				zone.Allocatable[corev1.ResourceName(r.Name)] = r.Allocatable
				zone.Available[corev1.ResourceName(r.Name)] = r.Available
			}
			x.NUMA = append(x.NUMA, zone)
		}
	} else if !apierrors.IsNotFound(err) {
		x.Warnings = append(x.Warnings, fmt.Sprintf("get NodeResourceTopology: %v", err))
	}

	x.Devices, x.Warnings = e.devices(ctx, name, x.Warnings)
	return x, nil
}

// colocationTerms lays out the calculation koord-manager explained, and checks its results against the node.
func colocationTerms(c *extension.ColocationExplanation, allocatable corev1.ResourceList) []ResourceTerms {
	out := make([]ResourceTerms, 0, 4)
	for _, r := range []struct {
		batch, mid corev1.ResourceName
		policy     string
		e          *extension.ColocationResourceExplanation
		milli      bool
	}{
		{extension.BatchCPU, extension.MidCPU, c.Policy.CPU, &c.CPU, true},
		{extension.BatchMemory, extension.MidMemory, c.Policy.Memory, &c.Memory, false},
	} {
		out = append(out, batchTerms(r.batch, r.policy, r.e, r.milli, allocatable, c.Degraded), midTerms(r.mid, r.e, r.milli, allocatable, c.Degraded, c.MidDegraded))
	}
	return out
}

// batchTerms is one batch resource's calculation (pkg/manager/controller/noderesource/calculator).
func batchTerms(name corev1.ResourceName, policy string, e *extension.ColocationResourceExplanation, milli bool, allocatable corev1.ResourceList, degraded string) ResourceTerms {
	t := ResourceTerms{Resource: string(name)}
	used, usedName := e.SystemUsed, "systemUsed"
	hp, hpName := e.HPUsed, "hpUsed"
	switch policy {
	case "request":
		used, usedName, hp, hpName = e.NodeReserved, "nodeReserved", e.HPRequest, "hpRequest"
	case "maxUsageRequest":
		hp, hpName = e.HPMaxUsedReq, "hpMaxUsedReq"
	}
	t.Formula = fmt.Sprintf("capacity - safetyMargin - %s - %s (policy %s), at least 0", usedName, hpName, policyOr(policy))
	t.Terms = []Term{{"capacity", qs(e.Capacity)}, {"reclaimPercent", i64s(e.ReclaimPercent)}, {"safetyMargin", qs(e.SafetyMargin)},
		{"nodeReserved", qs(e.NodeReserved)}, {"systemUsed", qs(e.SystemUsed)}, {"hpRequest", qs(e.HPRequest)}, {"hpUsed", qs(e.HPUsed)}, {"hpMaxUsedReq", qs(e.HPMaxUsedReq)}}
	if e.ThresholdCap != nil {
		t.Formula += ", at most thresholdCap"
		t.Terms = append(t.Terms, Term{"thresholdCap", qs(e.ThresholdCap)})
	}
	if e.NormalizationRatio != "" {
		t.Formula += ", times normalizationRatio"
		t.Terms = append(t.Terms, Term{"normalizationRatio", e.NormalizationRatio})
	}
	var computed *resource.Quantity
	if e.Capacity != nil && e.SafetyMargin != nil && used != nil && hp != nil {
		v := e.Capacity.DeepCopy()
		v.Sub(*e.SafetyMargin)
		v.Sub(*used)
		v.Sub(*hp)
		if v.Sign() < 0 {
			v = resource.MustParse("0")
		}
		if e.ThresholdCap != nil && v.Cmp(*e.ThresholdCap) > 0 {
			v = e.ThresholdCap.DeepCopy()
		}
		if e.NormalizationRatio != "" {
			if ratio, err := strconv.ParseFloat(e.NormalizationRatio, 64); err == nil && ratio > 1 {
				v = *resource.NewMilliQuantity(int64(float64(v.MilliValue())*ratio+0.999), v.Format)
			}
		}
		computed = &v
	}
	t.finish(computed, e.Batch, allocatable, name, milli, degraded)
	return t
}

// midTerms is one mid resource's calculation (pkg/manager/controller/noderesource/calculator), evaluated from
// its terms when the explanation has the percent koord-manager applied.
func midTerms(name corev1.ResourceName, e *extension.ColocationResourceExplanation, milli bool, allocatable corev1.ResourceList, degraded, midDegraded string) ResourceTerms {
	t := ResourceTerms{Resource: string(name),
		Formula: "min(max(min(prodReclaimable, nodeUnused), 0) + unallocated x midUnallocatedPercent, midThresholdCap), at least 0",
		Terms: []Term{{"prodReclaimable", qs(e.ProdReclaimable)}, {"nodeUnused", qs(e.NodeUnused)}, {"unallocated", qs(e.Unallocated)},
			{"midUnallocatedPercent", i64s(e.MidUnallocatedPercent)}, {"midThresholdCap", qs(e.MidThresholdCap)}},
	}
	// Amounts in the calculator's unit: milli-cores (as cpu), bytes (as memory).
	unit := corev1.ResourceMemory
	if milli {
		unit = corev1.ResourceCPU
	}
	amount := func(q *resource.Quantity) int64 { return quantity.Value(unit, *q) }
	var computed *resource.Quantity
	static := e.ProdReclaimable == nil && e.NodeUnused == nil && e.Unallocated == nil
	switch {
	case static:
		// Static mode: a share of the capacity.
		t.Formula = "min(capacity x midStaticPercent, midThresholdCap), at least 0 (static mode)"
		t.Terms = []Term{{"capacity", qs(e.Capacity)}, {"midStaticPercent", i64s(e.MidStaticPercent)}, {"midThresholdCap", qs(e.MidThresholdCap)}}
		if e.Capacity != nil && e.MidStaticPercent != nil && e.MidThresholdCap != nil {
			computed = ptr.To(quantity.Quantity(unit, max(min(quantity.PercentOf(amount(e.Capacity), *e.MidStaticPercent), amount(e.MidThresholdCap)), 0)))
		}
	case e.ProdReclaimable != nil && e.NodeUnused != nil && e.Unallocated != nil && e.MidUnallocatedPercent != nil && e.MidThresholdCap != nil:
		v := max(min(amount(e.ProdReclaimable), amount(e.NodeUnused)), 0) + quantity.PercentOf(amount(e.Unallocated), *e.MidUnallocatedPercent)
		computed = ptr.To(quantity.Quantity(unit, max(min(v, amount(e.MidThresholdCap)), 0)))
	}
	if midDegraded != "" && degraded == "" {
		degraded = midDegraded
	}
	// An explanation written before koord-manager recorded the percent has no computed value: the result is
	// taken as written.
	t.finish(computed, e.Mid, allocatable, name, milli, degraded)
	return t
}

// finish fills the results and checks them: the written value against the computed one (when the formula
// could be evaluated) and against the node's allocatable, in the node resource's unit.
func (t *ResourceTerms) finish(computed, written *resource.Quantity, allocatable corev1.ResourceList, name corev1.ResourceName, milli bool, degraded string) {
	unit := func(q *resource.Quantity) *resource.Quantity {
		if q == nil || !milli {
			return q
		}
		return resource.NewQuantity(q.MilliValue(), resource.DecimalSI)
	}
	computed, written = unit(computed), unit(written)
	t.Computed, t.Written = qs(computed), qs(written)
	alloc, hasAlloc := allocatable[name]
	if hasAlloc {
		t.Allocatable = alloc.String()
	}
	switch {
	case degraded != "" && written == nil:
		t.Note = "removed: " + degraded
		t.Consistent = !hasAlloc || alloc.IsZero()
	case written == nil:
		t.Consistent = !hasAlloc
	default:
		t.Consistent = hasAlloc && alloc.Cmp(*written) == 0 && (computed == nil || computed.Cmp(*written) == 0)
		if !t.Consistent {
			switch {
			case computed != nil && computed.Cmp(*written) != 0:
				t.Note = fmt.Sprintf("the terms give %s, koord-manager wrote %s: its explanation is inconsistent", computed, written)
			default:
				t.Note = fmt.Sprintf("the node offers %s, koord-manager last wrote %s: the node changed since, or a write is pending", dash(t.Allocatable), written)
			}
		}
	}
}

func policyOr(p string) string {
	if p == "" {
		return "usage"
	}
	return p
}

func qs(q *resource.Quantity) string {
	if q == nil {
		return ""
	}
	return q.String()
}

func i64s(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

// nodeUsage reads the node's NodeMetric and usage thresholds.
func (e *Explainer) nodeUsage(ctx context.Context, node *corev1.Node, warnings []string) (*NodeUsage, []string) {
	nm, err := e.Koord.SloV1alpha1().NodeMetrics().Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, append(warnings, "the node has no NodeMetric: koordlet does not report it")
	}
	if err != nil {
		return nil, append(warnings, fmt.Sprintf("get NodeMetric: %v", err))
	}
	u := &NodeUsage{UpdateTime: nm.Status.UpdateTime}
	if nm.Status.NodeMetric != nil {
		usage := nm.Status.NodeMetric.NodeUsage.ResourceList
		if q, ok := usage[corev1.ResourceCPU]; ok {
			u.CPU = q.String()
			u.CPUPercent = percentOf(q.MilliValue(), node.Status.Allocatable.Cpu().MilliValue())
		}
		if q, ok := usage[corev1.ResourceMemory]; ok {
			u.Memory = q.String()
			u.MemoryPercent = percentOf(q.Value(), node.Status.Allocatable.Memory().Value())
		}
	}
	if t, err := extension.GetCustomUsageThresholds(node.Annotations); err != nil {
		warnings = append(warnings, err.Error())
	} else if t != nil {
		u.LoadAwareThresholds = t.UsageThresholds
	}
	return u, warnings
}

func percentOf(v, of int64) int64 {
	if of <= 0 {
		return 0
	}
	return v * 100 / of
}

// devices reads the node's Device object and the allocations of the pods on the node.
func (e *Explainer) devices(ctx context.Context, node string, warnings []string) ([]DeviceSummary, []string) {
	d, err := e.Koord.SchedulingV1alpha1().Devices().Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, warnings
	}
	if err != nil {
		return nil, append(warnings, fmt.Sprintf("get Device: %v", err))
	}
	out := make([]DeviceSummary, 0, len(d.Spec.Devices))
	index := map[string]int{}
	for _, dev := range d.Spec.Devices {
		id := dev.UUID
		if dev.Minor != nil {
			id = strconv.Itoa(int(*dev.Minor))
		}
		s := DeviceSummary{Type: string(dev.Type), ID: id, Health: dev.Health, Resources: dev.Resources}
		if dev.Topology != nil {
			s.NUMANode, s.PCIe = ptr.To(dev.Topology.NodeID), dev.Topology.PCIEID
		}
		index[s.Type+"/"+s.ID] = len(out)
		out = append(out, s)
	}
	pods, err := e.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return out, append(warnings, fmt.Sprintf("list the node's pods: %v", err))
	}
	for _, pod := range pods.Items {
		allocs, err := extension.GetDeviceAllocations(pod.Annotations)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("pod %s/%s: %v", pod.Namespace, pod.Name, err))
			continue
		}
		for typ, list := range allocs {
			for _, a := range list {
				if i, ok := index[string(typ)+"/"+allocationID(a)]; ok {
					out[i].Pods = append(out[i].Pods, pod.Namespace+"/"+pod.Name)
				}
			}
		}
	}
	return out, warnings
}

func (x *NodeExplanation) printTable(p *printer) {
	p.section("Node " + x.Name)
	p.fields("batch and mid allocatable", formatResources(x.Allocatable))
	if c := x.Colocation; c != nil {
		p.fields("computed", age(x.now, c.UpdateTime.Time)+" ago by koord-manager", "degraded", c.Degraded, "mid degraded", c.MidDegraded)
		for _, t := range x.Terms {
			p.section(t.Resource + " = " + t.Formula)
			rows := make([][]string, 0, len(t.Terms)+3)
			for _, term := range t.Terms {
				if term.Value != "" {
					rows = append(rows, []string{term.Name, term.Value})
				}
			}
			rows = append(rows, []string{"= computed", dash(t.Computed)}, []string{"written by koord-manager", dash(t.Written)}, []string{"node allocatable", dash(t.Allocatable)})
			p.table([]string{"term", "value"}, rows)
			check := "consistent"
			if !t.Consistent {
				check = "NOT consistent"
			}
			if t.Note != "" {
				check += ": " + t.Note
			}
			p.printf("  %s\n", check)
		}
		if len(c.Warnings) > 0 {
			p.bullets(c.Warnings)
		}
	}
	if s := x.SLO; s != nil {
		p.section("NodeSLO (resourceUsedThresholdWithBE)")
		p.fields("enable", boolp(s.Enable), "cpuSuppressThresholdPercent", i64s(s.CPUSuppressThresholdPercent), "cpuSuppressMinPercent", i64s(s.CPUSuppressMinPercent),
			"cpuSuppressPolicy", string(s.CPUSuppressPolicy), "cpuSuppressPSIThresholdPercent", i64s(s.CPUSuppressPSIThresholdPercent),
			"memoryEvictThresholdPercent", i64s(s.MemoryEvictThresholdPercent), "memoryEvictLowerPercent", i64s(s.MemoryEvictLowerPercent))
	}
	if u := x.Usage; u != nil {
		p.section("Usage (NodeMetric)")
		reported := "never"
		if u.UpdateTime != nil {
			reported = age(x.now, u.UpdateTime.Time) + " ago"
		}
		cpu, mem := "", ""
		if u.CPU != "" {
			cpu = fmt.Sprintf("%s (%d%% of allocatable%s)", u.CPU, u.CPUPercent, thresholdNote(x.SLO, u.LoadAwareThresholds, corev1.ResourceCPU))
		}
		if u.Memory != "" {
			mem = fmt.Sprintf("%s (%d%% of allocatable%s)", u.Memory, u.MemoryPercent, thresholdNote(x.SLO, u.LoadAwareThresholds, corev1.ResourceMemory))
		}
		p.fields("reported", reported, "cpu", cpu, "memory", mem)
	}
	if len(x.Reservations) > 0 {
		p.section("Reservations")
		rows := make([][]string, 0, len(x.Reservations))
		for _, r := range x.Reservations {
			rows = append(rows, []string{r.Name, r.Phase, formatResources(r.Allocatable), formatResources(r.Allocated), strings.Join(r.Owners, ",")})
		}
		p.table([]string{"name", "phase", "allocatable", "allocated", "owners"}, rows)
	}
	if len(x.NUMA) > 0 {
		p.section("NUMA nodes (NodeResourceTopology)")
		rows := make([][]string, 0, len(x.NUMA))
		for _, z := range x.NUMA {
			rows = append(rows, []string{z.Name, formatResources(z.Allocatable), formatResources(z.Available)})
		}
		p.table([]string{"zone", "allocatable", "available"}, rows)
	}
	if len(x.Devices) > 0 {
		p.section("Devices (Device)")
		rows := make([][]string, 0, len(x.Devices))
		for _, d := range x.Devices {
			numa := "-"
			if d.NUMANode != nil {
				numa = strconv.Itoa(int(*d.NUMANode))
			}
			rows = append(rows, []string{d.Type, d.ID, strconv.FormatBool(d.Health), numa, dash(d.PCIe), formatResources(d.Resources), strings.Join(d.Pods, ",")})
		}
		p.table([]string{"type", "id", "healthy", "numa", "pcie", "resources", "pods"}, rows)
	}
	if len(x.Warnings) > 0 {
		p.section("Warnings")
		p.bullets(x.Warnings)
	}
}

// thresholdNote words the thresholds that act on a resource's usage.
func thresholdNote(slo *slov1alpha1.ResourceThresholdStrategy, loadAware map[corev1.ResourceName]int64, r corev1.ResourceName) string {
	var parts []string
	if v, ok := loadAware[r]; ok {
		parts = append(parts, fmt.Sprintf("LoadAwareScheduling threshold %d%% (node annotation)", v))
	}
	if slo != nil && ptr.Deref(slo.Enable, false) {
		switch r {
		case corev1.ResourceCPU:
			if slo.CPUSuppressThresholdPercent != nil {
				parts = append(parts, fmt.Sprintf("BE suppression above %d%%", *slo.CPUSuppressThresholdPercent))
			}
		case corev1.ResourceMemory:
			if slo.MemoryEvictThresholdPercent != nil {
				parts = append(parts, fmt.Sprintf("BE eviction above %d%%", *slo.MemoryEvictThresholdPercent))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

func boolp(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// allocationID names the device of an allocation as the Device object does: by minor, or by ID for devices
// whose minor means nothing (RDMA NICs).
func allocationID(a *extension.DeviceAllocation) string {
	if a.ID != "" {
		return a.ID
	}
	return strconv.Itoa(int(a.Minor))
}
