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

package memoryqos

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

// cfg returns memory QoS knobs with min, low and throttling percents and the other knobs of None.
func cfg(minPct, lowPct, throttlingPct int64) slov1alpha1.MemoryQOS {
	c := None()
	c.MinLimitPercent, c.LowLimitPercent, c.ThrottlingPercent = &minPct, &lowPct, &throttlingPct
	return c
}

func lsPod(request, limit string) *corev1.Pod {
	var limits corev1.ResourceList
	if limit != "" {
		limits = qostest.Resources("memory", limit)
	}
	return qostest.Pod("ls", qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable),
		qostest.Container("main", "", qostest.Resources("memory", request), limits))
}

func TestContainerKnobs(t *testing.T) {
	bePod := qostest.Pod("be", qostest.QoS(extension.QoSBE), qostest.KubeQoS(corev1.PodQOSBestEffort),
		qostest.Container("main", "", qostest.Resources("kubernetes.io/batch-memory", "1Gi"), qostest.Resources("kubernetes.io/batch-memory", "2Gi")))
	tests := map[string]struct {
		pod  *corev1.Pod
		cfg  slov1alpha1.MemoryQOS
		want Knobs
	}{
		"request 1Gi limit 2Gi, min 50 low 80 throttling 50": {
			pod: lsPod("1Gi", "2Gi"), cfg: cfg(50, 80, 50),
			want: Knobs{Min: ptr.To(512 * mi), Low: ptr.To(gi * 80 / 100), High: ptr.To(1536 * mi)},
		},
		"low below min is raised to min": {
			pod: lsPod("1Gi", "2Gi"), cfg: cfg(60, 20, 0),
			want: Knobs{Min: ptr.To(1 * gi * 60 / 100), Low: ptr.To(1 * gi * 60 / 100), High: ptr.To[int64](Unlimited)},
		},
		"low 0 stays 0 (off)": {
			pod: lsPod("1Gi", "2Gi"), cfg: cfg(60, 0, 0),
			want: Knobs{Min: ptr.To(1 * gi * 60 / 100), Low: ptr.To[int64](0), High: ptr.To[int64](Unlimited)},
		},
		"no limit: the node's allocatable memory stands for it": {
			pod: lsPod("1Gi", ""), cfg: cfg(0, 0, 10),
			// 1Gi + (8Gi − 1Gi) × 10 %, rounded down to a page.
			want: Knobs{Min: ptr.To[int64](0), Low: ptr.To[int64](0), High: ptr.To((gi + 7*gi/10) / 4096 * 4096)},
		},
		"BE pods use batch-memory": {
			pod: bePod, cfg: cfg(100, 100, 100),
			want: Knobs{Min: ptr.To(gi), Low: ptr.To(gi), High: ptr.To(2 * gi)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ContainerKnobs(tc.pod, &tc.pod.Spec.Containers[0], tc.cfg, 8*gi)
			// The knobs other than min, low and high come from cfg as they are.
			tc.want.WmarkRatio, tc.want.WmarkScaleFactor, tc.want.WmarkMin = tc.cfg.WmarkRatio, tc.cfg.WmarkScalePermill, tc.cfg.WmarkMinAdj
			tc.want.Priority, tc.want.UsePriorityOOM, tc.want.OOMGroup = tc.cfg.Priority, tc.cfg.PriorityEnable, tc.cfg.OomKillGroup
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ContainerKnobs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodKnobsHaveNoHigh(t *testing.T) {
	got := PodKnobs(PodRequest(lsPod("1Gi", "2Gi")), cfg(50, 50, 50))
	if got.High != nil || *got.Min != 512*mi || *got.Low != 512*mi {
		t.Errorf("PodKnobs = min %v low %v high %v, want 512Mi, 512Mi and no memory.high", got.Min, got.Low, got.High)
	}
}

func TestPodConfig(t *testing.T) {
	enabled := configuration.DefaultResourceQOSStrategy()
	enabled.LSClass.MemoryQOS.Enable = ptr.To(true)
	enabled.LSClass.MemoryQOS.MinLimitPercent = ptr.To[int64](40)
	disabled := configuration.DefaultResourceQOSStrategy()
	auto := configuration.DefaultResourceQOSStrategy().LSClass.MemoryQOS.MemoryQOS
	withMin := func(c slov1alpha1.MemoryQOS, v int64) slov1alpha1.MemoryQOS { c.MinLimitPercent = &v; return c }
	tests := map[string]struct {
		strategy *slov1alpha1.ResourceQOSStrategy
		ann      *slov1alpha1.PodMemoryQOSConfig
		want     slov1alpha1.MemoryQOS
	}{
		"class enabled":             {strategy: enabled, want: enabled.LSClass.MemoryQOS.MemoryQOS},
		"class disabled: none":      {strategy: disabled, want: None()},
		"policy none":               {strategy: enabled, ann: &slov1alpha1.PodMemoryQOSConfig{Policy: slov1alpha1.PodMemoryQOSPolicyNone}, want: None()},
		"policy auto, class off":    {strategy: disabled, ann: &slov1alpha1.PodMemoryQOSConfig{Policy: slov1alpha1.PodMemoryQOSPolicyAuto}, want: auto},
		"policy auto with a knob":   {strategy: disabled, ann: &slov1alpha1.PodMemoryQOSConfig{Policy: slov1alpha1.PodMemoryQOSPolicyAuto, MemoryQOS: slov1alpha1.MemoryQOS{MinLimitPercent: ptr.To[int64](70)}}, want: withMin(auto, 70)},
		"default policy with knobs": {strategy: enabled, ann: &slov1alpha1.PodMemoryQOSConfig{MemoryQOS: slov1alpha1.MemoryQOS{MinLimitPercent: ptr.To[int64](90)}}, want: withMin(enabled.LSClass.MemoryQOS.MemoryQOS, 90)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PodConfig(tc.strategy, lsPod("1Gi", "2Gi"), tc.ann)); diff != "" {
				t.Errorf("PodConfig (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQoSDirKnobsSumThePods(t *testing.T) {
	strategy := configuration.DefaultResourceQOSStrategy()
	strategy.BEClass.MemoryQOS.Enable = ptr.To(true)
	strategy.BEClass.MemoryQOS.OomKillGroup = ptr.To[int64](1)
	guaranteed := qostest.Pod("g", qostest.QoS(extension.QoSLSR), qostest.KubeQoS(corev1.PodQOSGuaranteed),
		qostest.Container("main", "", qostest.Resources("memory", "2Gi"), qostest.Resources("memory", "2Gi")))
	pods := []PodWithConfig{
		{Pod: guaranteed, Config: cfg(50, 100, 0), Request: 2 * gi},
		{Pod: lsPod("1Gi", "2Gi"), Config: cfg(100, 0, 0), Request: gi},
	}
	got := QoSDirKnobs(strategy, pods)
	none := None()
	want := map[corev1.PodQOSClass]Knobs{
		corev1.PodQOSGuaranteed: {Min: ptr.To(2 * gi), Low: ptr.To(2 * gi), Priority: none.Priority, UsePriorityOOM: none.PriorityEnable, OOMGroup: none.OomKillGroup},
		corev1.PodQOSBurstable:  {Min: ptr.To(gi), Low: ptr.To[int64](0), Priority: none.Priority, UsePriorityOOM: none.PriorityEnable, OOMGroup: none.OomKillGroup},
		corev1.PodQOSBestEffort: {Priority: ptr.To[int64](0), UsePriorityOOM: ptr.To[int64](0), OOMGroup: ptr.To[int64](1)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("QoSDirKnobs (-want +got):\n%s", diff)
	}
}

// TestPodRequestIsKubernetes: the memory request of a pod that is not BE is the one Kubernetes computes.
func TestPodRequestIsKubernetes(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	mem := func(v string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: qostest.Resources("memory", v)}
	}
	tests := map[string]corev1.PodSpec{
		"apps only": {Containers: []corev1.Container{{Name: "a", Resources: mem("1Gi")}, {Name: "b", Resources: mem("512Mi")}}},
		"an init container above the apps": {
			InitContainers: []corev1.Container{{Name: "init", Resources: mem("3Gi")}},
			Containers:     []corev1.Container{{Name: "a", Resources: mem("1Gi")}},
		},
		"sidecars before and after an init container": {
			InitContainers: []corev1.Container{
				{Name: "s1", Resources: mem("256Mi"), RestartPolicy: &always},
				{Name: "init", Resources: mem("2Gi")},
				{Name: "s2", Resources: mem("512Mi"), RestartPolicy: &always},
			},
			Containers: []corev1.Container{{Name: "a", Resources: mem("1Gi")}},
		},
		"overhead": {
			Containers: []corev1.Container{{Name: "a", Resources: mem("1Gi")}},
			Overhead:   qostest.Resources("memory", "128Mi"),
		},
		"no requests": {Containers: []corev1.Container{{Name: "a"}}},
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: spec}
			want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
			if got := PodRequest(pod); got != want.Memory().Value() {
				t.Errorf("PodRequest = %d, want Kubernetes' %d", got, want.Memory().Value())
			}
		})
	}
}
