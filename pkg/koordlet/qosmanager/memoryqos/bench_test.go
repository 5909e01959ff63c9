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
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// BenchmarkRun is one round over 50 pods × 3 containers on an Anolis-like cgroup v1 tree (every knob present),
// memory QoS on for every class, in the steady state: every knob already has its value.
func BenchmarkRun(b *testing.B) {
	ctx := klog.NewContext(context.Background(), ktesting.NewLogger(b, ktesting.NewConfig(ktesting.Verbosity(2))))
	fs := cgrouptest.NewFS(b, cgroup.V1, cgroup.Cgroupfs, cgrouptest.WithKnobs(cgrouptest.AnolisKnobs))
	s := New(cgroup.NewManager(fs.Layout()))
	var pods []*corev1.Pod
	for i := range 50 {
		p := qostest.Pod(fmt.Sprintf("p%d", i), qostest.QoS(extension.QoSLS), qostest.KubeQoS(corev1.PodQOSBurstable))
		for c := range 3 {
			id := fmt.Sprintf("containerd://p%d-%d", i, c)
			qostest.Container(fmt.Sprintf("c%d", c), id, qostest.Resources("memory", "128Mi"), qostest.Resources("memory", "256Mi"))(p)
			fs.AddContainer(corev1.PodQOSBurstable, p.UID, id)
		}
		pods = append(pods, p)
	}
	on := &slov1alpha1.MemoryQOSCfg{Enable: ptr.To(true), MemoryQOS: slov1alpha1.MemoryQOS{
		MinLimitPercent: ptr.To[int64](50), LowLimitPercent: ptr.To[int64](80), ThrottlingPercent: ptr.To[int64](90),
	}}
	st := qostest.State(qostest.Node("16", "64Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: &slov1alpha1.ResourceQOSStrategy{
		LSRClass: &slov1alpha1.ResourceQOS{MemoryQOS: on}, LSClass: &slov1alpha1.ResourceQOS{MemoryQOS: on}, BEClass: &slov1alpha1.ResourceQOS{MemoryQOS: on},
	}}), qostest.Cache(), pods...)
	if err := s.Run(ctx, st); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Run(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
}
