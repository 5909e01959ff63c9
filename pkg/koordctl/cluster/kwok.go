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

package cluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"

	"github.com/koord-dev/koord/pkg/sim"
)

// Fake nodes.
const (
	// NodeLabel and NodeLabelValue mark the nodes KWOK manages and the simulated agents report for.
	NodeLabel = "type"
	// NodeLabelValue is the value of NodeLabel.
	NodeLabelValue = "kwok"
	// NodeNamePrefix starts every fake node's name; the node's index follows.
	NodeNamePrefix = "kwok-node-"
	// nodeLeaseDurationSeconds is the lease KWOK keeps for each node (renewed every quarter of it), as a
	// kubelet's default.
	nodeLeaseDurationSeconds = 40
	// nodeWorkers is how many nodes are created at once.
	nodeWorkers = 32
)

// AnnotationPodCompleteDelay on a pod of a Job is how long, in wall time (a Go duration), the fake node runs
// it before it completes; without it the pod completes at once. It is KWOK's own key.
const AnnotationPodCompleteDelay = "pod-complete.stage.kwok.x-k8s.io/delay"

// DefaultKWOKStages are the KWOK stages a local cluster runs unless Options.KWOKStages replaces them: KWOK's
// own defaults, as kwokctl uses them, but for pod completion. Nodes become Ready and keep a lease; pods bound
// to them become Running; pods of Jobs complete, after AnnotationPodCompleteDelay; deleted pods go.
func DefaultKWOKStages() string {
	return strings.Join([]string{
		nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeatWithLease,
		podfast.DefaultPodReady,
		podCompleteStage,
		podfast.DefaultPodDelete,
	}, "\n---\n")
}

// podCompleteStage is KWOK's fast pod-complete stage with the delay of its general one: a running pod of a Job
// completes (exit code 0, phase Succeeded) after AnnotationPodCompleteDelay.
const podCompleteStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values:
      - 'Job'
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["` + AnnotationPodCompleteDelay + `"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $root := . }}
      containerStatuses:
      {{ range $index, $item := .spec.containers }}
      - image: {{ $item.image | Quote }}
        name: {{ $item.name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
`

// kwokArgs are KWOK's flags: the administrator kubeconfig, the stage file, the nodes it manages.
func kwokArgs(kubeconfig, stages string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + stages,
		"--manage-nodes-with-label-selector=" + NodeLabel + "=" + NodeLabelValue,
		"--node-lease-duration-seconds=" + strconv.Itoa(nodeLeaseDurationSeconds),
	}
}

// NodeName returns the name of the fake node with index i.
func NodeName(i int) string { return NodeNamePrefix + strconv.Itoa(i) }

// FakeNode returns fake node i as the cluster creates it: labelled for KWOK, with the capacity given (also its
// allocatable) and a pod CIDR of its own, 10.<1+i/256>.<i%256>.0/24, so that KWOK hands every pod a distinct IP.
// A node with a multiple of 4 CPUs has 2 sockets (one NUMA node each) of 2 threads per core, which the
// simulated agent reports as its NodeResourceTopology.
func FakeNode(i int, cpu, memory resource.Quantity, pods int64) *corev1.Node {
	name := NodeName(i)
	list := corev1.ResourceList{
		corev1.ResourceCPU:              cpu.DeepCopy(),
		corev1.ResourceMemory:           memory.DeepCopy(),
		corev1.ResourcePods:             *resource.NewQuantity(pods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: resource.MustParse("500Gi"),
	}
	cidr := fmt.Sprintf("10.%d.%d.0/24", 1+i/256, i%256)
	annotations := map[string]string{
		"kwok.x-k8s.io/node":           "fake",
		"node.alpha.kubernetes.io/ttl": "0",
	}
	if n := cpu.Value(); n >= 4 && n%4 == 0 {
		annotations[sim.AnnotationCPUTopology] = fmt.Sprintf("2x%dx2", n/4)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				NodeLabel:              NodeLabelValue,
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
			},
			Annotations: annotations,
		},
		Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		Status: corev1.NodeStatus{
			Capacity:    list,
			Allocatable: list.DeepCopy(),
			Phase:       corev1.NodePending,
		},
	}
}

// createNodes creates fake nodes 0..n-1 with nodeWorkers at once; nodes that exist already are kept. It
// reports progress as "created/n".
func createNodes(ctx context.Context, kube kubernetes.Interface, n int, cpu, memory resource.Quantity, pods int64, devices string, update func(string)) error {
	var mu sync.Mutex
	var errs []error
	created := 0
	workqueue.ParallelizeUntil(ctx, nodeWorkers, n, func(i int) {
		node := FakeNode(i, cpu, memory, pods)
		if devices != "" {
			node.Annotations[sim.AnnotationDevices] = devices
		}
		_, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if len(errs) < 5 {
				errs = append(errs, fmt.Errorf("create node %s: %w", NodeName(i), err))
			}
			return
		}
		created++
		if created%50 == 0 || created == n {
			update(fmt.Sprintf("%d/%d created", created, n))
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitNodesReady waits until n fake nodes are Ready, reporting "ready/n Ready". It fails when KWOK exits or
// when no node has become Ready for stallTimeout.
func (c *Cluster) waitNodesReady(ctx context.Context, kube kubernetes.Interface, kwok *process, n int, update func(string)) error {
	selector := NodeLabel + "=" + NodeLabelValue
	return c.waitProgress(ctx, 500*time.Millisecond, kwok, func(ctx context.Context) (int, error) {
		list, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"})
		if err != nil {
			return 0, err
		}
		ready := 0
		for i := range list.Items {
			if nodeReady(&list.Items[i]) {
				ready++
			}
		}
		update(fmt.Sprintf("%d/%d Ready", ready, n))
		return ready, nil
	}, n, "nodes Ready")
}

// startKWOK writes the stage file, starts KWOK, creates the nodes and waits until they are Ready.
func (c *Cluster) startKWOK(ctx context.Context, kube kubernetes.Interface, stages string, update func(string)) error {
	path := filepath.Join(c.runDir, "kwok.yaml")
	if err := writeFile(path, []byte(stages), 0o600); err != nil {
		return err
	}
	p, err := c.startProcess(ctx, "kwok", kwokArgs(c.kubeconfigPath, path))
	if err != nil {
		return err
	}
	if err := createNodes(ctx, kube, c.opts.Nodes, c.opts.NodeCPU, c.opts.NodeMemory, c.opts.NodePods, c.opts.NodeDevices, update); err != nil {
		return err
	}
	return c.waitNodesReady(ctx, kube, p, c.opts.Nodes, update)
}
