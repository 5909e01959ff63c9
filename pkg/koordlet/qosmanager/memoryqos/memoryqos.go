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
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "memoryqos"

// Strategy writes the memory QoS knobs. Create it with New.
type Strategy struct {
	cg          *cgroup.Manager
	annotations *qosmanager.AnnotationReporter
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithAnnotationReporter reports malformed koordinator.sh/memoryQOS annotations through r (an Event on the pod);
// without it they are only logged.
func WithAnnotationReporter(r *qosmanager.AnnotationReporter) Option {
	return func(s *Strategy) { s.annotations = r }
}

// New returns the strategy writing through cg.
func New(cg *cgroup.Manager, opts ...Option) *Strategy {
	s := &Strategy{cg: cg, annotations: qosmanager.NewAnnotationReporter(nil)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name implements qosmanager.Strategy.
func (s *Strategy) Name() string { return Name }

// Run implements qosmanager.Strategy: it writes the knobs of kubelet's QoS cgroups, then of every pod, then of
// its containers. An invalid NodeSLO is an error and nothing is written; the knobs keep their values.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	strategy, err := st.ResourceQOS()
	if err != nil {
		return err
	}
	var nodeMemory int64
	if st.Node != nil {
		nodeMemory = st.Node.Status.Allocatable.Memory().Value()
	}
	pods := make([]PodWithConfig, 0, len(st.Pods))
	for _, pod := range st.Pods {
		ann, err := slov1alpha1.GetPodMemoryQoSConfig(pod)
		if err != nil {
			s.annotations.Report(ctx, pod, extension.AnnotationPodMemoryQoS, err)
			ann = nil
		}
		pods = append(pods, PodWithConfig{Pod: pod, Config: PodConfig(strategy, pod, ann)})
	}
	s.annotations.Retain(st.Pods)

	var errs []error
	l := s.cg.Layout()
	qosDirs := QoSDirKnobs(strategy, pods)
	for _, kube := range []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		errs = append(errs, s.apply(ctx, l.QoSDir(kube), qosDirs[kube]))
	}
	for _, p := range pods {
		kube := extension.GetKubeQoSClass(p.Pod)
		errs = append(errs, s.apply(ctx, l.PodDir(kube, p.Pod.UID), PodKnobs(p.Pod, p.Config)))
		for _, c := range qosmanager.Containers(p.Pod) {
			dir, err := l.ContainerDir(kube, p.Pod.UID, c.Status.ContainerID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, s.apply(ctx, dir, ContainerKnobs(p.Pod, c.Spec, p.Config, nodeMemory)))
		}
	}
	return errors.Join(errs...)
}

// apply writes the set knobs of k to dir. A cgroup that is gone, and a knob the kernel does not have, are
// skipped (the cgroup Manager logs the latter once).
func (s *Strategy) apply(ctx context.Context, dir string, k Knobs) error {
	var errs []error
	keep := func(_ bool, err error) {
		if err != nil && !errors.Is(err, cgroup.ErrNotFound) && !errors.Is(err, cgroup.ErrNotSupported) {
			errs = append(errs, err)
		}
	}
	if k.Min != nil {
		keep(s.cg.SetMemoryMin(ctx, dir, *k.Min))
	}
	if k.Low != nil {
		keep(s.cg.SetMemoryLow(ctx, dir, *k.Low))
	}
	if k.High != nil {
		keep(s.cg.SetMemoryHigh(ctx, dir, *k.High))
	}
	for _, v := range []struct {
		knob  cgroup.IntKnob
		value *int64
	}{
		{cgroup.KnobMemoryWmarkRatio, k.WmarkRatio},
		{cgroup.KnobMemoryWmarkScaleFactor, k.WmarkScaleFactor},
		{cgroup.KnobMemoryWmarkMinAdj, k.WmarkMin},
		{cgroup.KnobMemoryUsePriorityOOM, k.UsePriorityOOM},
		{cgroup.KnobMemoryPriority, k.Priority},
		{cgroup.KnobMemoryOOMGroup, k.OOMGroup},
	} {
		if v.value != nil {
			keep(s.cg.SetInt(ctx, dir, v.knob, *v.value))
		}
	}
	return errors.Join(errs...)
}
