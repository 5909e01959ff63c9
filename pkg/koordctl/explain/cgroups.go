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
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/pkg/koordlet/podcgroups"
)

// DefaultKoordletPort is the port of koordlet's metrics endpoint (--metrics-bind-address, the chart's
// koordlet.metrics.port), which serves a pod's cgroup settings.
const DefaultKoordletPort = 9316

// annotationKWOKNode marks a node KWOK simulates: it has no kubelet, cgroups or koordlet.
const annotationKWOKNode = "kwok.x-k8s.io/node"

// cgroupsTimeout bounds the request to koordlet.
const cgroupsTimeout = 5 * time.Second

// cgroupsOf asks the koordlet of pod's node, through the apiserver's node proxy, for the pod's cgroup settings.
// It returns them, or why they could not be read.
func (e *Explainer) cgroupsOf(ctx context.Context, pod *corev1.Pod) (*podcgroups.Pod, string) {
	node, err := e.Kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Sprintf("get node %s: %v", pod.Spec.NodeName, err)
	}
	if node.Annotations[annotationKWOKNode] != "" {
		return nil, fmt.Sprintf("node %s is simulated (KWOK): it has no cgroups", node.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, cgroupsTimeout)
	defer cancel()
	raw, err := e.Kube.CoreV1().RESTClient().Get().
		AbsPath("/api/v1/nodes", node.Name+":"+strconv.Itoa(e.KoordletPort), "proxy", podcgroups.URLPath(pod.Namespace, pod.Name)).
		Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Sprintf("koordlet of node %s (port %d, through the apiserver's node proxy, which needs the nodes/proxy permission) did not answer: %v",
			node.Name, e.KoordletPort, err)
	}
	out := &podcgroups.Pod{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Sprintf("koordlet of node %s answered something else than cgroup settings: %v", node.Name, err)
	}
	return out, ""
}

// printCgroups prints the settings as a table, one row per cgroup, and under it what could not be read.
func printCgroups(p *printer, c *podcgroups.Pod) {
	settings := []*podcgroups.Settings{&c.Pod}
	rows := [][]string{cgroupRow("pod", &c.Pod)}
	for i := range c.Containers {
		settings = append(settings, &c.Containers[i].Settings)
		rows = append(rows, cgroupRow(c.Containers[i].Name, &c.Containers[i].Settings))
	}
	p.table([]string{"cgroup", "cpu shares", "cfs quota", "cpuset", "cpu.idle", "bvt", "memory limit", "memory.min/low/high"}, rows)
	for _, s := range settings {
		for _, e := range s.Errors {
			p.printf("  %s: %s\n", s.Dir, e)
		}
	}
}

// cgroupRow formats one cgroup's settings; a knob the kernel lacks is "-".
func cgroupRow(name string, s *podcgroups.Settings) []string {
	quota := "-"
	if s.CFSQuotaUs != nil && s.CFSPeriodUs != nil {
		quota = "unlimited"
		if q, period := *s.CFSQuotaUs, *s.CFSPeriodUs; q >= 0 && period > 0 {
			quota = fmt.Sprintf("%d/%d (%s cores)", q, period, strconv.FormatFloat(float64(q)/float64(period), 'f', -1, 64))
		}
	}
	cpuset := "-"
	if s.CPUSet != nil {
		cpuset = *s.CPUSet
	}
	return []string{name, intOr(s.CPUShares), quota, cpuset, intOr(s.CPUIdle), intOr(s.BVTWarpNs), bytesOr(s.MemoryLimitBytes),
		bytesOr(s.MemoryMinBytes) + "/" + bytesOr(s.MemoryLowBytes) + "/" + bytesOr(s.MemoryHighBytes)}
}

func intOr(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func bytesOr(v *int64) string {
	switch {
	case v == nil:
		return "-"
	case *v < 0:
		return "max"
	}
	return resource.NewQuantity(*v, resource.BinarySI).String()
}
