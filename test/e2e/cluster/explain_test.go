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

package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
	sigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/koordctl/explain"
)

// koordctlExplain runs `koordctl explain KIND NAME -o json` against the local cluster, as a user would (with
// --kubeconfig and -n), and decodes what it prints into out.
func koordctlExplain(ctx context.Context, kind, name string, out any) error {
	cmd := explain.NewCommand()
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs([]string{kind, name, "-n", namespace, "--kubeconfig", env.c.Kubeconfig(), "-o", "json"})
	if err := cmd.ExecuteContext(ctx); err != nil {
		return fmt.Errorf("koordctl explain %s %s: %w (%s)", kind, name, err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("koordctl explain %s %s printed no JSON: %w\n%s", kind, name, err, stdout.String())
	}
	return nil
}

// explainPod waits until `koordctl explain pod` says the pod waits because of plugin, and returns the
// explanation.
func explainPendingPod(ctx context.Context, t *testing.T, name, plugin string) *explain.PodExplanation {
	t.Helper()
	var x *explain.PodExplanation
	eventually(ctx, t, time.Minute, "koordctl explain pod "+name+" names "+plugin, func(ctx context.Context) (bool, string) {
		x = &explain.PodExplanation{}
		if err := koordctlExplain(ctx, "pod", name, x); err != nil {
			return false, err.Error()
		}
		if x.Scheduling == nil || x.Scheduling.Failure == nil {
			return false, fmt.Sprintf("no scheduling failure yet: %+v", x.Scheduling)
		}
		f := x.Scheduling.Failure
		if f.PreFilter != nil && f.PreFilter.Plugin == plugin {
			return true, ""
		}
		return slices.ContainsFunc(f.Rejections, func(r explain.Rejection) bool { return r.Plugin == plugin && r.Nodes > 0 }),
			fmt.Sprintf("failure %+v", *f)
	})
	return x
}

// TestExplainPodRejectedByQuota: a pod asking for more than its ElasticQuota's max is rejected by ElasticQuota
// before any node is looked at, and explain shows the quota and what it lacks.
func TestExplainPodRejectedByQuota(t *testing.T) {
	ctx := t.Context()
	quota := &sigsv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-small", Namespace: namespace},
		Spec: sigsv1alpha1.ElasticQuotaSpec{
			Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
	}
	quotas := env.koord.SchedulingSigsV1alpha1().ElasticQuotas(namespace)
	if _, err := quotas.Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = quotas.Delete(context.WithoutCancel(ctx), quota.Name, metav1.DeleteOptions{}) })

	pod := newPod("e2e-over-quota", "2", "512Mi", withLS, byKoordScheduler, func(p *corev1.Pod) {
		p.Labels[extension.LabelQuotaName] = quota.Name
	})
	createPods(ctx, t, pod)
	x := explainPendingPod(ctx, t, pod.Name, "ElasticQuota")
	if x.Quota == nil || x.Quota.Name != quota.Name {
		t.Errorf("explanation's quota = %+v, want %s", x.Quota, quota.Name)
	}
	if !slices.ContainsFunc(x.Suggestions, func(s string) bool { return strings.Contains(s, quota.Name) }) {
		t.Errorf("no suggestion names quota %s: %q", quota.Name, x.Suggestions)
	}

	q := &explain.QuotaExplanation{}
	if err := koordctlExplain(ctx, "quota", quota.Name, q); err != nil {
		t.Fatal(err)
	}
	if q.Pods != 1 || len(q.Resources) == 0 {
		t.Errorf("koordctl explain quota: %d pods, %d resources; want the pending pod and the quota's resources", q.Pods, len(q.Resources))
	}
}

// TestExplainPodRejectedByGang: one member of a gang of three waits, and explain says how many members the
// gang lacks.
func TestExplainPodRejectedByGang(t *testing.T) {
	ctx := t.Context()
	pod := newPod("e2e-gang-0", "100m", "64Mi", withLS, byKoordScheduler, func(p *corev1.Pod) {
		p.Annotations = map[string]string{extension.AnnotationGangName: "e2e-gang", extension.AnnotationGangMinNum: "3"}
	})
	createPods(ctx, t, pod)
	x := explainPendingPod(ctx, t, pod.Name, "Coscheduling")
	if x.Gang == nil || x.Gang.MinMember != 3 || x.Gang.Members != 1 {
		t.Fatalf("explanation's gang = %+v, want e2e-gang with 1 of min 3 members", x.Gang)
	}
	if !slices.ContainsFunc(x.Suggestions, func(s string) bool { return strings.Contains(s, "needs 2 more member pods") }) {
		t.Errorf("no suggestion says the gang needs 2 more members: %q", x.Suggestions)
	}
	g := &explain.GangExplanation{}
	if err := koordctlExplain(ctx, "gang", "e2e-gang", g); err != nil {
		t.Fatal(err)
	}
	if g.Members != 1 || g.Waiting() != 2 {
		t.Errorf("koordctl explain gang: %d members, %d missing; want 1 and 2", g.Members, g.Waiting())
	}
}

// TestExplainPodRejectedByNUMA: a pod that asks for one NUMA node and more CPUs than a NUMA node of node 0 has
// is rejected there by NodeNUMAResource.
func TestExplainPodRejectedByNUMA(t *testing.T) {
	ctx := t.Context()
	node := cluster.NodeName(0)
	pod := newPod("e2e-numa-too-big", "20", "1Gi", byKoordScheduler, func(p *corev1.Pod) {
		p.Labels[extension.LabelPodQoS] = string(extension.QoSLSR)
		p.Spec.PriorityClassName = string(extension.PriorityProd)
		p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests.DeepCopy()
		p.Spec.NodeSelector = map[string]string{corev1.LabelHostname: node}
		p.Annotations = map[string]string{extension.AnnotationNUMATopologySpec: `{"numaTopologyPolicy":"SingleNUMANode"}`}
	})
	createPods(ctx, t, pod)
	explainPendingPod(ctx, t, pod.Name, "NodeNUMAResource")
}
