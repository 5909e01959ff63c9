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

package apis

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	schedulingsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/client/informers/externalversions"
)

// TestGeneratedClient exercises the generated clientset, informers and listers against the real apiserver:
// a cluster-scoped kind (NodeMetric) and a namespaced one from the third-party group (ElasticQuota).
func TestGeneratedClient(t *testing.T) {
	ctx := t.Context()
	cs, err := versioned.NewForConfig(env.Config)
	if err != nil {
		t.Fatalf("new clientset: %v", err)
	}
	factory := externalversions.NewSharedInformerFactory(cs, 0)
	nodeMetrics := factory.Slo().V1alpha1().NodeMetrics()
	quotas := factory.SchedulingSigs().V1alpha1().ElasticQuotas()
	// Touch the informers before Start so that the factory runs them.
	nodeMetricInformer, quotaInformer := nodeMetrics.Informer(), quotas.Informer()
	factory.Start(ctx.Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(ctx.Done(), nodeMetricInformer.HasSynced, quotaInformer.HasSynced) {
		t.Fatal("informer caches did not sync")
	}

	nm, err := cs.SloV1alpha1().NodeMetrics().Create(ctx, &slov1alpha1.NodeMetric{
		ObjectMeta: metav1.ObjectMeta{Name: "client-test-node"},
		Spec: slov1alpha1.NodeMetricSpec{CollectPolicy: &slov1alpha1.NodeMetricCollectPolicy{
			ReportIntervalSeconds: new(int64(60)),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create NodeMetric: %v", err)
	}
	updateTime := metav1.NewTime(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	nm.Status = slov1alpha1.NodeMetricStatus{
		UpdateTime: &updateTime,
		NodeMetric: &slov1alpha1.NodeMetricInfo{NodeUsage: slov1alpha1.ResourceMap{ResourceList: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1500m"),
		}}},
	}
	if _, err := cs.SloV1alpha1().NodeMetrics().UpdateStatus(ctx, nm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update NodeMetric status: %v", err)
	}

	eq, err := cs.SchedulingSigsV1alpha1().ElasticQuotas("default").Create(ctx, &schedulingsigsv1alpha1.ElasticQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "client-test-quota", Labels: map[string]string{"quota.scheduling.koordinator.sh/parent": "root"}},
		Spec: schedulingsigsv1alpha1.ElasticQuotaSpec{
			Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create ElasticQuota: %v", err)
	}

	// The listers see what was written, status included.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := nodeMetrics.Lister().Get("client-test-node")
		if err != nil || got.Status.UpdateTime == nil {
			return false, nil
		}
		_, err = quotas.Lister().ElasticQuotas("default").Get("client-test-quota")
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("listers did not observe the objects: %v", err)
	}
	got, _ := nodeMetrics.Lister().Get("client-test-node")
	if diff := cmp.Diff("1500m", got.Status.NodeMetric.NodeUsage.Cpu().String()); diff != "" {
		t.Errorf("node cpu usage in the lister (-want +got):\n%s", diff)
	}
	selector := labels.SelectorFromSet(labels.Set{"quota.scheduling.koordinator.sh/parent": "root"})
	listed, err := quotas.Lister().ElasticQuotas("default").List(selector)
	if err != nil || len(listed) != 1 || listed[0].Name != eq.Name {
		t.Errorf("lister List by label = %v, %v; want [%s]", listed, err, eq.Name)
	}

	if err := cs.SloV1alpha1().NodeMetrics().Delete(ctx, nm.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete NodeMetric: %v", err)
	}
	if err := cs.SchedulingSigsV1alpha1().ElasticQuotas("default").Delete(ctx, eq.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete ElasticQuota: %v", err)
	}
}
