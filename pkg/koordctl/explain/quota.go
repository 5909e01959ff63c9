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
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
	sigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// QuotaSummary is one ElasticQuota's figures as koord-scheduler last wrote them.
type QuotaSummary struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Parent is the parent quota ("" for a tree's root).
	Parent string `json:"parent,omitempty"`
	// IsParent tells whether the quota has children (and so takes no pods).
	IsParent bool `json:"isParent,omitempty"`
	// AllowLent tells whether the quota lends its unused min to others.
	AllowLent bool `json:"allowLentResource"`
	// TreeID is the quota tree (multi-tree quotas), "" for the default tree.
	TreeID string `json:"treeID,omitempty"`
	// Min, Max and SharedWeight are the spec; Runtime (what it may use now) and Request (what its pods ask
	// for, capped at max) koord-scheduler's annotations; Used its status.
	Min          corev1.ResourceList `json:"min,omitempty"`
	Max          corev1.ResourceList `json:"max,omitempty"`
	SharedWeight corev1.ResourceList `json:"sharedWeight,omitempty"`
	Runtime      corev1.ResourceList `json:"runtime,omitempty"`
	Request      corev1.ResourceList `json:"request,omitempty"`
	Used         corev1.ResourceList `json:"used,omitempty"`
	// Warnings are annotations that could not be read.
	Warnings []string `json:"warnings,omitempty"`
}

// QuotaResource explains one resource of a quota: how its runtime relates to its min, max and request.
type QuotaResource struct {
	Resource string `json:"resource"`
	Min      string `json:"min,omitempty"`
	Max      string `json:"max,omitempty"`
	Request  string `json:"request,omitempty"`
	Runtime  string `json:"runtime,omitempty"`
	Used     string `json:"used,omitempty"`
	// Why words which bound set the runtime.
	Why string `json:"why,omitempty"`
}

// QuotaExplanation is `koordctl explain quota`: the quota, its resources one by one, and its place in the tree.
type QuotaExplanation struct {
	QuotaSummary `json:",inline"`
	Resources    []QuotaResource `json:"resources"`
	// Ancestors are the quota's parents, root first; Children its direct children.
	Ancestors []QuotaSummary `json:"ancestors,omitempty"`
	Children  []QuotaSummary `json:"children,omitempty"`
	// Pods is how many pods name the quota in their quota label (pods charged by namespace are not counted).
	Pods int `json:"pods"`
}

// summarize reads a quota.
func summarize(q *sigsv1alpha1.ElasticQuota) QuotaSummary {
	s := QuotaSummary{
		Name: q.Name, Namespace: q.Namespace, Parent: extension.GetParentQuotaName(q), IsParent: extension.IsParentQuota(q),
		AllowLent: extension.IsAllowLentResource(q), TreeID: extension.GetQuotaTreeID(q),
		Min: q.Spec.Min, Max: q.Spec.Max, Used: q.Status.Used,
	}
	var err error
	for _, a := range []struct {
		dst *corev1.ResourceList
		get func(metav1.Object) (corev1.ResourceList, error)
	}{{&s.Runtime, extension.GetRuntime}, {&s.Request, extension.GetRequest}, {&s.SharedWeight, extension.GetSharedWeight}} {
		if *a.dst, err = a.get(q); err != nil {
			s.Warnings = append(s.Warnings, err.Error())
		}
	}
	return s
}

// quotas lists every ElasticQuota by name (names are unique across the cluster, as Koordinator requires).
func (e *Explainer) quotas(ctx context.Context) (map[string]*sigsv1alpha1.ElasticQuota, error) {
	list, err := e.Koord.SchedulingSigsV1alpha1().ElasticQuotas(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ElasticQuotas: %w", err)
	}
	out := make(map[string]*sigsv1alpha1.ElasticQuota, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// quotaOf returns the quota the pod is charged to, resolved as koord-scheduler resolves it; nil when the
// cluster has no quotas.
func (e *Explainer) quotaOf(ctx context.Context, pod *corev1.Pod) (*QuotaSummary, error) {
	all, err := e.quotas(ctx)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	name := extension.GetQuotaName(pod)
	switch {
	case name != "":
		if all[name] == nil {
			name = extension.DefaultQuotaName
		}
	case all[pod.Namespace] != nil && all[pod.Namespace].Namespace == pod.Namespace:
		name = pod.Namespace
	default:
		name = extension.DefaultQuotaName
		names := make([]string, 0, len(all))
		for n := range all {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if nss, err := extension.GetAnnotationQuotaNamespaces(all[n]); err == nil && slices.Contains(nss, pod.Namespace) {
				name = n
				break
			}
		}
	}
	q := all[name]
	if q == nil {
		return &QuotaSummary{Name: name, Warnings: []string{fmt.Sprintf("quota %q does not exist", name)}}, nil
	}
	s := summarize(q)
	return &s, nil
}

// Quota explains the ElasticQuota name. Quota names are unique in the cluster; namespace, when not empty,
// must be the quota's.
func (e *Explainer) Quota(ctx context.Context, namespace, name string) (*QuotaExplanation, error) {
	all, err := e.quotas(ctx)
	if err != nil {
		return nil, err
	}
	q := all[name]
	if q == nil || (namespace != "" && q.Namespace != namespace) {
		return nil, fmt.Errorf("ElasticQuota %q not found%s", name, inNamespace(namespace))
	}
	x := &QuotaExplanation{QuotaSummary: summarize(q)}
	x.Resources = quotaResources(x.QuotaSummary)
	seen := map[string]bool{name: true}
	for p := all[x.Parent]; p != nil && !seen[p.Name]; p = all[extension.GetParentQuotaName(p)] {
		seen[p.Name] = true
		x.Ancestors = append([]QuotaSummary{summarize(p)}, x.Ancestors...)
	}
	for _, c := range all {
		if c.Name != name && extension.GetParentQuotaName(c) == name {
			x.Children = append(x.Children, summarize(c))
		}
	}
	slices.SortFunc(x.Children, func(a, b QuotaSummary) int { return strings.Compare(a.Name, b.Name) })
	pods, err := e.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: extension.LabelQuotaName + "=" + name})
	if err != nil {
		x.Warnings = append(x.Warnings, fmt.Sprintf("list the quota's pods: %v", err))
	} else {
		x.Pods = len(pods.Items)
	}
	return x, nil
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in namespace " + ns
}

// quotaResources lists every resource the quota names, with why its runtime is what it is.
func quotaResources(s QuotaSummary) []QuotaResource {
	names := map[corev1.ResourceName]bool{}
	for _, l := range []corev1.ResourceList{s.Min, s.Max, s.Runtime, s.Request, s.Used} {
		for n := range l {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, string(n))
	}
	sort.Strings(sorted)
	out := make([]QuotaResource, 0, len(sorted))
	for _, n := range sorted {
		rn := corev1.ResourceName(n)
		r := QuotaResource{Resource: n, Min: qstr(s.Min, rn), Max: qstr(s.Max, rn), Request: qstr(s.Request, rn), Runtime: qstr(s.Runtime, rn), Used: qstr(s.Used, rn)}
		r.Why = runtimeWhy(s, rn)
		out = append(out, r)
	}
	return out
}

// runtimeWhy words which bound set a resource's runtime, following koord-scheduler's computation: a quota gets
// its request up to max, its min at least while it requests that much, and beyond min a share of what its
// parent has left, by shared weight.
func runtimeWhy(s QuotaSummary, n corev1.ResourceName) string {
	if s.IsParent && s.Runtime == nil {
		return ""
	}
	runtime, hasRuntime := s.Runtime[n]
	if !hasRuntime {
		return "no runtime written yet (koord-scheduler's quota status writer runs in its leader)"
	}
	request := s.Request[n]
	min, max := s.Min[n], s.Max[n]
	_, hasMax := s.Max[n]
	switch {
	case runtime.Cmp(request) >= 0:
		if hasMax && request.Cmp(max) >= 0 {
			return "capped at max"
		}
		return "whole request"
	case runtime.Cmp(min) <= 0 && !min.IsZero():
		return fmt.Sprintf("min only: the parent has nothing left to share for the %s more requested", diff(request, runtime))
	default:
		return fmt.Sprintf("min plus a shared-weight share of the parent's spare; %s of the request not covered", diff(request, runtime))
	}
}

func diff(a, b resource.Quantity) string {
	a.Sub(b)
	return a.String()
}

func qstr(l corev1.ResourceList, n corev1.ResourceName) string {
	q, ok := l[n]
	if !ok {
		return ""
	}
	return q.String()
}

func (s *QuotaSummary) printFields(p *printer) {
	parent := s.Parent
	if s.IsParent {
		parent += " (a parent quota: takes no pods)"
	}
	p.fields("namespace", s.Namespace, "parent", parent, "tree", s.TreeID, "lends unused min", strconv.FormatBool(s.AllowLent),
		"min", formatResources(s.Min), "max", formatResources(s.Max), "runtime", formatResources(s.Runtime),
		"request", formatResources(s.Request), "used", formatResources(s.Used))
	if len(s.Warnings) > 0 {
		p.bullets(s.Warnings)
	}
}

func (x *QuotaExplanation) printTable(p *printer) {
	p.section("ElasticQuota " + x.Name)
	x.printFields(p)
	p.fields("shared weight", formatResources(x.SharedWeight), "pods naming it", strconv.Itoa(x.Pods))
	if len(x.Resources) > 0 {
		p.section("Runtime by resource")
		rows := make([][]string, 0, len(x.Resources))
		for _, r := range x.Resources {
			rows = append(rows, []string{r.Resource, dash(r.Min), dash(r.Max), dash(r.Request), dash(r.Runtime), dash(r.Used), r.Why})
		}
		p.table([]string{"resource", "min", "max", "request", "runtime", "used", "why"}, rows)
	}
	p.section("Tree")
	var rows [][]string
	depth := 0
	row := func(s QuotaSummary, mark string) {
		rows = append(rows, []string{strings.Repeat("  ", depth) + s.Name + mark, formatResources(s.Min), formatResources(s.Max), formatResources(s.Runtime), formatResources(s.Used)})
	}
	for _, a := range x.Ancestors {
		row(a, "")
		depth++
	}
	row(x.QuotaSummary, " *")
	depth++
	for _, c := range x.Children {
		row(c, "")
	}
	p.table([]string{"quota", "min", "max", "runtime", "used"}, rows)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
