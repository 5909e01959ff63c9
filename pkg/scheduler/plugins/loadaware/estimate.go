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

package loadaware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/loadaware/cache"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// stateKey keys the podState of the pod being scheduled in the CycleState; whichever of Filter, Score and
// Reserve comes first in a cycle writes it.
const stateKey fwk.StateKey = "Filter" + Name

// podSignature is what Filter and Score look at in a pod; SignPod signs pods with it.
type podSignature struct {
	// Estimate is the pod's estimated usage.
	Estimate quantity.Vector
	// Prod says whether it is a koord-prod pod.
	Prod bool
	// DaemonSet says whether a DaemonSet owns it; the filter lets such pods through.
	DaemonSet bool
}

// podState is what the plugin knows about the pod being scheduled.
type podState struct {
	podSignature
	// now is when the cycle first needed the state: the cycle judges the age of NodeMetrics and assignments
	// against it, for every node alike.
	now time.Time
	// cycle and pod identify the cycle the state was computed in.
	cycle fwk.CycleState
	pod   *corev1.Pod
}

// Clone returns s: it is never modified once written.
func (s *podState) Clone() fwk.StateData { return s }

// podStateOf returns the state of pod in cycle, computing and storing it on first use. kube-scheduler runs
// one scheduling cycle at a time and calls Filter and Score for every node in it, so the plugin also keeps
// the last state at hand, which saves a CycleState lookup per node.
func (p *Plugin) podStateOf(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod) *podState {
	if ps := p.current.Load(); ps != nil && ps.pod == pod && ps.cycle == cycle && cycle != nil {
		return ps
	}
	if cycle != nil {
		if s, err := cycle.Read(stateKey); err == nil {
			if ps, ok := s.(*podState); ok {
				return ps
			}
		}
	}
	var sig podSignature
	if signed := p.signed.Load(); signed != nil && signed.pod == pod {
		// kube-scheduler signs the pod at the start of the cycle.
		sig = signed.podSignature
	} else {
		sig = p.signatureOf(klog.FromContext(ctx), pod)
	}
	ps := &podState{podSignature: sig, now: p.clock.Now(), cycle: cycle, pod: pod}
	if cycle != nil {
		cycle.Write(stateKey, ps)
		p.current.Store(ps)
	}
	return ps
}

// signedPod is the last pod SignPod signed, with its signature.
type signedPod struct {
	podSignature
	pod *corev1.Pod
}

func (p *Plugin) signatureOf(logger klog.Logger, pod *corev1.Pod) podSignature {
	return podSignature{
		Estimate:  p.estimate(logger, pod),
		Prod:      extension.GetPodPriorityClassWithDefault(pod) == extension.PriorityProd,
		DaemonSet: isDaemonSetPod(pod),
	}
}

// estimate estimates pod's usage, with the pod's own scaling factors when the args allow them.
func (p *Plugin) estimate(logger klog.Logger, pod *corev1.Pod) quantity.Vector {
	var custom map[corev1.ResourceName]int64
	if p.args.AllowCustomizeEstimation {
		var err error
		if custom, err = customScalingFactors(pod.Annotations); err != nil {
			logger.V(4).Info("Ignored malformed estimation annotation", "pod", klog.KObj(pod), "err", err)
		}
	}
	return p.estimator.Estimate(pod, custom)
}

// assignedPod describes pod, assigned to a node at assignedAt, for the assign cache.
func (p *Plugin) assignedPod(logger klog.Logger, pod *corev1.Pod, estimate quantity.Vector, assignedAt time.Time) cache.AssignedPod {
	a := cache.AssignedPod{
		Key:                      types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name},
		UID:                      pod.UID,
		Estimate:                 estimate,
		Prod:                     extension.GetPodPriorityClassWithDefault(pod) == extension.PriorityProd,
		AssignedAt:               assignedAt,
		InitializedAt:            conditionTrueSince(pod, corev1.PodInitialized),
		EstimateAfterScheduled:   p.estimateAfterScheduled,
		EstimateAfterInitialized: p.estimateAfterInitialized,
	}
	if p.args.AllowCustomizeEstimation {
		for _, s := range []struct {
			key string
			to  *time.Duration
		}{
			{extension.AnnotationCustomEstimatedSecondsAfterPodScheduled, &a.EstimateAfterScheduled},
			{extension.AnnotationCustomEstimatedSecondsAfterInitialized, &a.EstimateAfterInitialized},
		} {
			d, ok, err := customSeconds(pod.Annotations, s.key)
			if err != nil {
				logger.V(4).Info("Ignored malformed estimation annotation", "pod", klog.KObj(pod), "err", err)
			}
			if ok {
				*s.to = d
			}
		}
	}
	return a
}

// customScalingFactors parses a pod's load-estimated-scaling-factors annotation, a JSON object of
// percentages by resource. It returns nil without an error when the annotation is missing.
func customScalingFactors(annotations map[string]string) (map[corev1.ResourceName]int64, error) {
	raw, ok := annotations[extension.AnnotationCustomEstimatedScalingFactors]
	if !ok {
		return nil, nil
	}
	var factors map[corev1.ResourceName]int64
	if err := json.Unmarshal([]byte(raw), &factors); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", extension.AnnotationCustomEstimatedScalingFactors, err)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(factors)) {
		if v := factors[name]; v < 0 || v > 100 {
			errs = append(errs, fmt.Errorf("annotation %s: %s: %d is not a percentage in [0, 100]", extension.AnnotationCustomEstimatedScalingFactors, name, v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return factors, nil
}

// customSeconds parses a pod's estimation seconds annotation key, a non-negative integer.
func customSeconds(annotations map[string]string, key string) (time.Duration, bool, error) {
	raw, ok := annotations[key]
	if !ok {
		return 0, false, nil
	}
	s, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || s < 0 {
		return 0, false, fmt.Errorf("annotation %s: %q is not a non-negative number of seconds", key, raw)
	}
	return time.Duration(s) * time.Second, true, nil
}

// isDaemonSetPod reports whether a DaemonSet owns pod.
func isDaemonSetPod(pod *corev1.Pod) bool {
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}

// conditionTrueSince returns when pod's condition typ last became true, or zero when it is not true.
func conditionTrueSince(pod *corev1.Pod, typ corev1.PodConditionType) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
