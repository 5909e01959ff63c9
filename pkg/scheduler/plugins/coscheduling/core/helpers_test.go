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

package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
)

// now is the time of the fake clock tests start with.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// defaults are the defaults of the tests' caches.
var defaults = Defaults{WaitTime: 10 * time.Minute, MatchPolicy: extension.GangMatchPolicyOnceSatisfied}

// newTestCache returns an empty cache with the test defaults and a fake clock at now.
func newTestCache() (*Cache, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(now)
	return NewCache(defaults, clk), clk
}

// pod is a pod in namespace default with the given annotations (key=value pairs).
func pod(name string, annotations ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:         "default",
		Name:              name,
		UID:               types.UID(name),
		CreationTimestamp: metav1.NewTime(now),
	}}
	if len(annotations) > 0 {
		p.Annotations = map[string]string{}
		for i := 0; i+1 < len(annotations); i += 2 {
			p.Annotations[annotations[i]] = annotations[i+1]
		}
	}
	return p
}

// gangPod is a pod of the annotation gang gang with minimum minMember and the extra annotations.
func gangPod(name, gang, minMember string, annotations ...string) *corev1.Pod {
	return pod(name, append([]string{extension.AnnotationGangName, gang, extension.AnnotationGangMinNum, minMember}, annotations...)...)
}

// pgMember is a pod of the PodGroup pg.
func pgMember(name, pg string) *corev1.Pod {
	p := pod(name)
	p.Labels = map[string]string{v1alpha1.PodGroupLabel: pg}
	return p
}

// podGroup is a PodGroup in namespace default with minMember and the given annotations.
func podGroup(name string, minMember int32, annotations ...string) *v1alpha1.PodGroup {
	pg := &v1alpha1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
		Spec:       v1alpha1.PodGroupSpec{MinMember: minMember, ScheduleTimeoutSeconds: ptr.To[int32](30)},
	}
	if len(annotations) > 0 {
		pg.Annotations = map[string]string{}
		for i := 0; i+1 < len(annotations); i += 2 {
			pg.Annotations[annotations[i]] = annotations[i+1]
		}
	}
	return pg
}

// boundTo returns p bound to a node.
func boundTo(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.Spec.NodeName = "node-1"
	return p
}

// gid is the ID of gang name in namespace default.
func gid(name string) ID { return ID{Namespace: "default", Name: name} }
