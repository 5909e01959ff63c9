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

package elasticquota

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
	"github.com/koord-dev/koord/pkg/scheduler/metrics"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/elasticquota/cache"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/plugintest"
	utiltesting "github.com/koord-dev/koord/pkg/util/testing"
)

func TestReserveUnreserve(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	incoming := utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "4")).Obj()
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil), quotas, nodes, append(pods, incoming))
	used := func() string {
		for _, s := range f.plugin.manager.Statuses() {
			if s.Name == "team-a" {
				q := s.Used.List()[corev1.ResourceCPU]
				return q.String()
			}
		}
		return ""
	}
	if got := used(); got != "30" {
		t.Fatalf("used before Reserve = %s, want 30", got)
	}
	if s := f.plugin.Reserve(f.Ctx, framework.NewCycleState(), incoming, "n1"); !s.IsSuccess() {
		t.Fatal(s)
	}
	if got := used(); got != "34" {
		t.Errorf("used after Reserve = %s, want 34", got)
	}
	f.plugin.Unreserve(f.Ctx, framework.NewCycleState(), incoming, "n1")
	if got := used(); got != "30" {
		t.Errorf("used after Unreserve = %s, want 30", got)
	}
}

func TestWriteStatuses(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil), quotas, nodes, pods)
	f.plugin.writeStatuses(f.Ctx)
	plugintest.Eventually(t, func() bool {
		eq, err := f.plugin.quotaLister.ElasticQuotas("quotas").Get("team-a")
		return err == nil && eq.Annotations[extension.AnnotationRuntime] != ""
	})
	eq, err := f.Koord.SchedulingSigsV1alpha1().ElasticQuotas("quotas").Get(f.Ctx, "team-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"used":    eq.Status.Used.Cpu().String(),
		"runtime": eq.Annotations[extension.AnnotationRuntime],
		"request": eq.Annotations[extension.AnnotationRequest],
	}
	want := map[string]string{"used": "30", "runtime": `{"cpu":"30"}`, "request": `{"cpu":"30"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("team-a (-want,+got):\n%s", diff)
	}
	// Once the informer has caught up with what was written, writing patches nothing: no hot loop.
	patches := func() []string {
		f.Koord.ClearActions()
		f.plugin.writeStatuses(f.Ctx)
		var out []string
		for _, a := range f.Koord.Actions() {
			if a.GetVerb() == "patch" {
				out = append(out, a.(clienttesting.PatchAction).GetName())
			}
		}
		return out
	}
	plugintest.Eventually(t, func() bool { return len(patches()) == 0 })
	// A pod going away changes team-a's numbers: exactly team-a is patched (annotations, then status).
	f.plugin.manager.DeletePod("a-low")
	if diff := cmp.Diff([]string{"team-a", "team-a"}, patches()); diff != "" {
		t.Errorf("patches after a change (-want,+got):\n%s", diff)
	}
}

func TestRevoke(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	// b asks for 15 more (request 20): a's runtime drops to 10 + 10 = 20 (see TestPreFilter), a uses 30.
	pods = append(pods, utiltesting.MakePod("b2").Label(extension.LabelQuotaName, "team-b").Priority(10).Req(utiltesting.Resources("cpu", "15")).Obj())
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs](t, func(a *configv1.ElasticQuotaArgs) { a.MonitorAllQuotas = new(bool); *a.MonitorAllQuotas = true }), quotas, nodes, pods)
	r := &revoker{p: f.plugin, overSince: map[string]time.Time{}}
	evictions := func() []string {
		var out []string
		for _, a := range f.Kube.Actions() {
			if a.GetVerb() == "create" && a.GetSubresource() == "eviction" {
				out = append(out, a.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction).Name)
			}
		}
		return out
	}
	r.revoke(f.Ctx)
	f.Clock.Step(119 * time.Second)
	r.revoke(f.Ctx)
	if got := evictions(); len(got) != 0 {
		t.Fatalf("evictions before delayEvictTime = %v", got)
	}
	f.Clock.Step(time.Second)
	r.revoke(f.Ctx)
	// a-low (20, priority 10) goes first and is enough: 10 <= 20.
	if diff := cmp.Diff([]string{"a-low"}, evictions()); diff != "" {
		t.Errorf("evictions (-want,+got):\n%s", diff)
	}
	want := `Warning QuotaOverUsedRevoked Evicted: quota "team-a" used more than its runtime quota for 2m0s: cpu used 30 > 20`
	select {
	case got := <-f.Events.Events:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("event (-want,+got):\n%s", diff)
		}
	default:
		t.Error("no event recorded")
	}
	// The evicted pod is still there until it terminates; the quota is not checked again before delayEvictTime.
	f.Kube.ClearActions()
	f.Clock.Step(time.Second)
	r.revoke(f.Ctx)
	if got := evictions(); len(got) != 0 {
		t.Errorf("evictions right after the last = %v, want none", got)
	}
}

func TestEnsureBuiltinQuotas(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil), quotas, nodes, pods)
	f.plugin.ensureBuiltinQuotas(f.Ctx)
	list, err := f.Koord.SchedulingSigsV1alpha1().ElasticQuotas("koordinator-system").List(f.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, eq := range list.Items {
		got = append(got, eq.Name)
	}
	want := []string{extension.DefaultQuotaName, extension.RootQuotaName, extension.SystemQuotaName}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("built-in quotas (-want,+got):\n%s", diff)
	}
	// Once the informer has them, nothing is created again.
	plugintest.Eventually(t, func() bool {
		l, err := f.plugin.quotaLister.ElasticQuotas("koordinator-system").List(labels.Everything())
		return err == nil && len(l) == 3
	})
	f.Koord.ClearActions()
	f.plugin.ensureBuiltinQuotas(f.Ctx)
	if got := f.Koord.Actions(); len(got) != 0 {
		t.Errorf("actions on the second call = %v, want none", got)
	}
}

// TestInvalidQuota checks that a quota whose annotation does not parse keeps its last good configuration and
// is reported once, as a Warning event naming the annotation.
func TestInvalidQuota(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil), quotas, nodes, pods)
	bad := quotas[0].DeepCopy()
	bad.Spec.Max = utiltesting.Resources("cpu", "5")
	bad.Annotations[extension.AnnotationSharedWeight] = "{cpu"
	if _, err := f.Koord.SchedulingSigsV1alpha1().ElasticQuotas("quotas").Update(f.Ctx, bad, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `Warning InvalidElasticQuota Ignored, the last good configuration stays: quota "team-a": annotation "quota.scheduling.koordinator.sh/shared-weight": invalid character 'c' looking for beginning of object key string`
	select {
	case got := <-f.Events.Events:
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("event (-want,+got):\n%s", diff)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event recorded")
	}
	// Max stays 40: the incoming pod (not yet seen by the pod informer, counted by PreFilter) borrows a 31st
	// cpu, where the rejected max would cap team-a at 5.
	if _, s := f.plugin.PreFilter(f.Ctx, framework.NewCycleState(), utiltesting.MakePod("incoming").Label(extension.LabelQuotaName, "team-a").Priority(50).Req(utiltesting.Resources("cpu", "1")).Obj(), nil); !s.IsSuccess() {
		t.Errorf("PreFilter = %v, want Success under the last good max", s)
	}
	bad.Labels["touched"] = "again"
	if _, err := f.Koord.SchedulingSigsV1alpha1().ElasticQuotas("quotas").Update(f.Ctx, bad, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	plugintest.Eventually(t, func() bool {
		eq, err := f.plugin.quotaLister.ElasticQuotas("quotas").Get("team-a")
		return err == nil && eq.Labels["touched"] == "again"
	})
	select {
	case got := <-f.Events.Events:
		t.Errorf("second event for the same error: %s", got)
	default:
	}
}

// TestQuotaGauges: the status writer sets each quota's runtime, used and request gauges, and drops the gauges
// of a quota that is gone.
func TestQuotaGauges(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	env := plugintest.New(t, plugintest.WithObjectsOf(quotas), plugintest.WithObjectsOf(nodes), plugintest.WithObjectsOf(pods))
	m := metrics.NewMetrics()
	p := plugintest.Plugin[*Plugin](t, env, NewFactory(env.CRDs, plugins.WithClock(env.Clock), plugins.WithFeatures(plfeature.Features{}), plugins.WithMetrics(m)),
		plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil))
	p.writeStatuses(env.Ctx)
	for typ, want := range map[string]float64{"runtime": 30000, "used": 30000, "request": 30000} {
		if got := testutil.ToFloat64(m.QuotaResources.WithLabelValues("team-a", "cpu", typ)); got != want {
			t.Errorf("team-a cpu %s = %v, want %v (millicores)", typ, got, want)
		}
	}
	// Koordinator's gauge: team-a is a leaf of the root quota in the default tree.
	for field, want := range map[string]float64{"runtime": 30000, "allocated": 30000, "request": 30000, "min": 10000, "max": 40000} {
		if got := testutil.ToFloat64(m.QuotaStatus.WithLabelValues("team-a", "cpu", "", "false", extension.RootQuotaName, field)); got != want {
			t.Errorf("scheduler_elastic_quota_status of team-a cpu %s = %v, want %v (millicores)", field, got, want)
		}
	}
	if got := testutil.ToFloat64(m.QuotaStatus.WithLabelValues("child", "cpu", "", "false", "parent", "max")); got != 40000 {
		t.Errorf("scheduler_elastic_quota_status of child cpu max = %v, want 40000 with parent \"parent\"", got)
	}
	p.gauged[[3]string{"gone", "cpu", "used"}] = true
	m.QuotaResources.WithLabelValues("gone", "cpu", "used").Set(1)
	p.writeStatuses(env.Ctx)
	if n := testutil.CollectAndCount(m.QuotaResources, "koord_scheduler_elastic_quota_resource"); n == 0 {
		t.Fatal("no gauges")
	}
	if _, ok := p.gauged[[3]string{"gone", "cpu", "used"}]; ok {
		t.Error("the gauge of a quota that is gone is kept")
	}
}

// TestRevokeForgetsGonePods: a victim the apiserver no longer has (its deletion missed, e.g. while the apiserver
// restarted) is forgotten rather than kept charged to the quota, which would stay over its runtime for good.
func TestRevokeForgetsGonePods(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	pods = append(pods, utiltesting.MakePod("b2").Label(extension.LabelQuotaName, "team-b").Priority(10).Req(utiltesting.Resources("cpu", "15")).Obj())
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs](t, func(a *configv1.ElasticQuotaArgs) { a.MonitorAllQuotas = new(bool); *a.MonitorAllQuotas = true }), quotas, nodes, pods)
	f.Kube.PrependReactor("create", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewNotFound(corev1.Resource("pods"), a.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction).Name)
	})
	overTeamA := func() bool {
		return slices.ContainsFunc(f.plugin.manager.OverUsed(), func(o cache.OverUse) bool { return o.Quota == "team-a" })
	}
	if !overTeamA() {
		t.Fatal("team-a is not over its runtime quota to begin with")
	}
	r := &revoker{p: f.plugin, overSince: map[string]time.Time{}}
	r.revoke(f.Ctx)
	f.Clock.Step(2 * time.Minute)
	r.revoke(f.Ctx)
	// a-low (20 cpu) is gone: team-a uses 10 of its runtime 20.
	if overTeamA() {
		t.Error("team-a is still over its runtime quota after its victim turned out gone")
	}
}

// TestForgetLostPods: a pod charged to team-a after the scheduler's pod informer had lost it (a Reserve that
// came after its deletion, with no Unreserve) keeps team-a's used 5 too high until the forgetter, which runs
// in every replica, has missed it for a whole period; then it is forgotten and counted.
func TestForgetLostPods(t *testing.T) {
	quotas, nodes, pods := twoTenants()
	f := newFixture(t, plugintest.Args[config.ElasticQuotaArgs, configv1.ElasticQuotaArgs](t, nil), quotas, nodes, pods)
	used := func() string {
		for _, s := range f.plugin.manager.Statuses() {
			if s.Name == "team-a" {
				q := s.Used.List()[corev1.ResourceCPU]
				return q.String()
			}
		}
		return "none"
	}
	before := used()
	f.plugin.manager.Reserve(utiltesting.MakePod("lost").UID("lost").Label(extension.LabelQuotaName, "team-a").Req(utiltesting.Resources("cpu", "5")).Obj())
	if got := used(); got == before {
		t.Fatalf("team-a's used = %s with the lost pod reserved, want 5 more", got)
	}
	// The live pods, a-low among them, stay.
	f.plugin.forgetMissing(klog.Background())
	f.plugin.forgetMissing(klog.Background())
	if got := used(); got != before {
		t.Errorf("team-a's used = %s after two rounds, want %s", got, before)
	}
	if got := testutil.ToFloat64(f.plugin.metrics.QuotaForgottenPods); got != 1 {
		t.Errorf("forgotten pods counted %v, want 1", got)
	}

	// The forgetter runs by itself every forgetPeriod.
	f.plugin.manager.Reserve(utiltesting.MakePod("lost-2").UID("lost-2").Label(extension.LabelQuotaName, "team-a").Req(utiltesting.Resources("cpu", "5")).Obj())
	plugintest.Eventually(t, func() bool {
		f.Clock.Step(forgetPeriod)
		return used() == before
	})
}
