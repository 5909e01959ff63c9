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

package resctrl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager/qostest"
)

// BenchmarkRun is one round over 50 pods × 3 containers of two threads each (a third of the pods BE) with
// resctrl on for every class, in the steady state: the groups hold their schemata and threads.
func BenchmarkRun(b *testing.B) {
	ctx := klog.NewContext(context.Background(), ktesting.NewLogger(b, ktesting.NewConfig(ktesting.Verbosity(2))))
	root := b.TempDir()
	for name, content := range intel {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fs := cgrouptest.NewFS(b, cgroup.V1, cgroup.Cgroupfs)
	var pods []*corev1.Pod
	tid := 1000
	for i := range 50 {
		qos, kube := extension.QoSLS, corev1.PodQOSBurstable
		if i%3 == 2 {
			qos, kube = extension.QoSBE, corev1.PodQOSBestEffort
		}
		p := qostest.Pod(fmt.Sprintf("p%d", i), qostest.QoS(qos), qostest.KubeQoS(kube))
		for c := range 3 {
			id := fmt.Sprintf("containerd://p%d-%d", i, c)
			qostest.Container(fmt.Sprintf("c%d", c), id, nil, nil)(p)
			dir := fs.AddContainer(kube, p.UID, id)
			fs.WriteFile(dir, "tasks", fmt.Sprintf("%d\n%d\n", tid, tid+1))
			tid += 2
		}
		pods = append(pods, p)
	}
	s := New(root, cgroup.NewManager(fs.Layout()))
	st := qostest.State(qostest.Node("16", "64Gi"), qostest.NodeSLO(slov1alpha1.NodeSLOSpec{ResourceQOSStrategy: resctrl(on(), on(), on())}),
		qostest.Cache(), pods...)
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
