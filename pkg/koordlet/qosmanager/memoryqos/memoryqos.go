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
	// knobs spares the reads of knobs already set: each is read back every qosmanager.DefaultVerifyEvery rounds.
	knobs *qosmanager.KnobCache
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
	s := &Strategy{cg: cg, annotations: qosmanager.NewAnnotationReporter(nil), knobs: qosmanager.NewKnobCache(0)}
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
	s.knobs.StartRound()
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
		pods = append(pods, PodWithConfig{Pod: pod, Config: PodConfig(strategy, pod, ann), Request: PodRequest(pod)})
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
		errs = append(errs, s.apply(ctx, l.PodDir(kube, p.Pod.UID), PodKnobs(p.Request, p.Config)))
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
// skipped (the cgroup Manager logs the latter once). Knobs known to hold their value are not read again but
// every qosmanager.DefaultVerifyEvery rounds.
func (s *Strategy) apply(ctx context.Context, dir string, k Knobs) error {
	var errs []error
	for _, kn := range knobs {
		v := kn.value(&k)
		if v == nil || s.knobs.Fresh(dir, kn.name, *v) {
			continue
		}
		_, err := writeKnob(ctx, s.cg, dir, kn.name, kn.knob, *v)
		if err := s.knobs.Record(dir, kn.name, *v, err); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Apply writes the set knobs of k to dir through cg, each read first and written only when it differs, and
// reports whether it wrote any. Cgroups that are gone and knobs the kernel lacks are skipped. The runtime hooks
// use it at pod start; the strategy itself reads back only every qosmanager.DefaultVerifyEvery rounds.
func Apply(ctx context.Context, cg *cgroup.Manager, dir string, k Knobs) (bool, error) {
	var errs []error
	wrote := false
	for _, kn := range knobs {
		v := kn.value(&k)
		if v == nil {
			continue
		}
		w, err := writeKnob(ctx, cg, dir, kn.name, kn.knob, *v)
		if err != nil && !errors.Is(err, cgroup.ErrNotFound) && !errors.Is(err, cgroup.ErrNotSupported) {
			errs = append(errs, err)
		}
		wrote = wrote || w
	}
	return wrote, errors.Join(errs...)
}

// writeKnob writes v to the knob named name (an IntKnob unless it is one of the memory protection knobs).
func writeKnob(ctx context.Context, cg *cgroup.Manager, dir, name string, knob cgroup.IntKnob, v int64) (bool, error) {
	switch name {
	case knobMin:
		return cg.SetMemoryMin(ctx, dir, v)
	case knobLow:
		return cg.SetMemoryLow(ctx, dir, v)
	case knobHigh:
		return cg.SetMemoryHigh(ctx, dir, v)
	}
	return cg.SetInt(ctx, dir, knob, v)
}

// The memory protection knobs, which the cgroup Manager sets by their own methods.
const (
	knobMin  = "memory.min"
	knobLow  = "memory.low"
	knobHigh = "memory.high"
)

// knobs are the knobs apply writes, in order, with the field of Knobs each takes its value from.
var knobs = []struct {
	name  string
	knob  cgroup.IntKnob
	value func(*Knobs) *int64
}{
	{name: knobMin, value: func(k *Knobs) *int64 { return k.Min }},
	{name: knobLow, value: func(k *Knobs) *int64 { return k.Low }},
	{name: knobHigh, value: func(k *Knobs) *int64 { return k.High }},
	{name: cgroup.KnobMemoryWmarkRatio.Name, knob: cgroup.KnobMemoryWmarkRatio, value: func(k *Knobs) *int64 { return k.WmarkRatio }},
	{name: cgroup.KnobMemoryWmarkScaleFactor.Name, knob: cgroup.KnobMemoryWmarkScaleFactor, value: func(k *Knobs) *int64 { return k.WmarkScaleFactor }},
	{name: cgroup.KnobMemoryWmarkMinAdj.Name, knob: cgroup.KnobMemoryWmarkMinAdj, value: func(k *Knobs) *int64 { return k.WmarkMin }},
	{name: cgroup.KnobMemoryUsePriorityOOM.Name, knob: cgroup.KnobMemoryUsePriorityOOM, value: func(k *Knobs) *int64 { return k.UsePriorityOOM }},
	{name: cgroup.KnobMemoryPriority.Name, knob: cgroup.KnobMemoryPriority, value: func(k *Knobs) *int64 { return k.Priority }},
	{name: cgroup.KnobMemoryOOMGroup.Name, knob: cgroup.KnobMemoryOOMGroup, value: func(k *Knobs) *int64 { return k.OOMGroup }},
}
