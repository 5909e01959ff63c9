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

package cpuqos

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/util/sysfile"
)

// Name is the strategy's name in logs and metrics.
const Name = "cpuqos"

// Features are the feature gates of the strategy's policies.
type Features struct {
	// GroupIdentity enables the groupIdentity policy.
	GroupIdentity bool
	// CoreSched enables the coreSched policy.
	CoreSched bool
}

// Strategy writes the CPU QoS knobs. Create it with New.
type Strategy struct {
	cg          *cgroup.Manager
	features    Features
	procRoot    string
	coreSched   CoreScheduler
	annotations *qosmanager.AnnotationReporter

	// said holds the "not supported" messages already logged.
	said map[string]bool
	// knobs spares the reads of knobs already set: each is read back every qosmanager.DefaultVerifyEvery rounds.
	knobs *qosmanager.KnobCache
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithCoreScheduler sets how core scheduling cookies are read and set; KernelCoreScheduler by default.
func WithCoreScheduler(cs CoreScheduler) Option { return func(s *Strategy) { s.coreSched = cs } }

// WithAnnotationReporter reports malformed koordinator.sh/cpuQOS annotations through r.
func WithAnnotationReporter(r *qosmanager.AnnotationReporter) Option {
	return func(s *Strategy) { s.annotations = r }
}

// New returns the strategy writing through cg, with the policies f enables, on the node whose /proc is at
// procRoot.
func New(cg *cgroup.Manager, f Features, procRoot string, opts ...Option) *Strategy {
	s := &Strategy{cg: cg, features: f, procRoot: procRoot, coreSched: KernelCoreScheduler{},
		annotations: qosmanager.NewAnnotationReporter(nil), said: map[string]bool{},
		knobs: qosmanager.NewKnobCache(0)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Name implements qosmanager.Strategy.
func (s *Strategy) Name() string { return Name }

// Run implements qosmanager.Strategy. An invalid NodeSLO is an error and nothing is written.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	strategy, err := st.ResourceQOS()
	if err != nil {
		return err
	}
	rule := NewRule(strategy)
	s.knobs.StartRound()
	var hostApps []slov1alpha1.HostApplicationSpec
	if st.NodeSLO != nil {
		hostApps = st.NodeSLO.Spec.HostApplications
	}
	// Each policy's knobs are written with the rule when it is in force, and with the none values (0)
	// otherwise, so that a change of policy reverts the other's.
	none := Rule{Policy: rule.Policy}
	var errs []error
	if s.features.GroupIdentity {
		r := none
		if rule.Policy == slov1alpha1.CPUQOSPolicyGroupIdentity {
			r = rule
		}
		errs = append(errs, s.groupIdentity(ctx, r, st.Pods, hostApps))
	}
	if s.features.CoreSched {
		r := none
		if rule.Policy == slov1alpha1.CPUQOSPolicyCoreSched {
			r = rule
		}
		errs = append(errs, s.cpuIdle(ctx, r, hostApps), s.cookies(ctx, r, st.Pods))
	}
	s.annotations.Retain(st.Pods)
	return errors.Join(errs...)
}

var kubeQoSClasses = []corev1.PodQOSClass{corev1.PodQOSGuaranteed, corev1.PodQOSBurstable, corev1.PodQOSBestEffort}

// groupIdentity writes cpu.bvt.warp_ns.
func (s *Strategy) groupIdentity(ctx context.Context, r Rule, pods []*corev1.Pod, hostApps []slov1alpha1.HostApplicationSpec) error {
	l := s.cg.Layout()
	if _, err := s.cg.Int(ctx, "/", cgroup.KnobCPUBVTWarpNs); err != nil {
		if errors.Is(err, cgroup.ErrNotSupported) || errors.Is(err, cgroup.ErrNotFound) {
			if r.Enabled() {
				s.sayOnce(ctx, "groupIdentity", "cpu.bvt.warp_ns is missing (group identity is an Anolis OS kernel feature)")
			}
			return nil
		}
		return err
	}
	var errs []error
	if r.Enabled() {
		// Turned on, never off here: core scheduling turns it off when it needs to.
		errs = append(errs, s.sysctl(ctx, "sched_group_identity_enabled", true))
	}
	for _, kube := range kubeQoSClasses {
		errs = append(errs, s.set(ctx, l.QoSDir(kube), cgroup.KnobCPUBVTWarpNs, r.KubeQoSDirGroupIdentity(kube)))
	}
	for _, pod := range pods {
		cfg, err := slov1alpha1.GetPodCPUQoSConfig(pod)
		if err != nil {
			s.annotations.Report(ctx, pod, extension.AnnotationPodCPUQoS, err)
			cfg = nil
		}
		if r.Policy != slov1alpha1.CPUQOSPolicyGroupIdentity || !r.Enabled() {
			cfg = nil // the annotation takes effect only while the policy is on
		}
		dir := l.PodDir(extension.GetKubeQoSClass(pod), pod.UID)
		errs = append(errs, s.set(ctx, dir, cgroup.KnobCPUBVTWarpNs, r.PodGroupIdentity(pod, cfg)))
	}
	errs = append(errs, s.hostApps(ctx, hostApps, cgroup.KnobCPUBVTWarpNs, func(p ClassParams) int64 { return p.GroupIdentity }, r))
	return errors.Join(errs...)
}

// cpuIdle writes cpu.idle of kubelet's QoS cgroups and of host applications.
func (s *Strategy) cpuIdle(ctx context.Context, r Rule, hostApps []slov1alpha1.HostApplicationSpec) error {
	l := s.cg.Layout()
	if _, err := s.cg.Int(ctx, l.QoSDir(corev1.PodQOSBestEffort), cgroup.KnobCPUIdle); err != nil {
		if errors.Is(err, cgroup.ErrNotSupported) {
			if r.Enabled() {
				s.sayOnce(ctx, "cpu.idle", "cpu.idle is missing (cgroup idle needs Linux 5.15)")
			}
			return nil
		}
		return skipErr(err)
	}
	var errs []error
	for _, kube := range kubeQoSClasses {
		if kube == corev1.PodQOSGuaranteed {
			// kubepods holds every pod: it is idle only when every class is.
			continue
		}
		errs = append(errs, s.set(ctx, l.QoSDir(kube), cgroup.KnobCPUIdle, r.KubeQoSDirIdle(kube)))
	}
	errs = append(errs, s.hostApps(ctx, hostApps, cgroup.KnobCPUIdle, func(p ClassParams) int64 { return p.Idle }, r))
	return errors.Join(errs...)
}

// hostApps writes knob of each host application from its class's parameters.
func (s *Strategy) hostApps(ctx context.Context, apps []slov1alpha1.HostApplicationSpec, knob cgroup.IntKnob,
	value func(ClassParams) int64, r Rule) error {
	var errs []error
	for i := range apps {
		dir, err := collector.HostAppDir(s.cg.Layout(), &apps[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, s.set(ctx, dir, knob, value(r.HostApp(extension.QoSClass(apps[i].QoS)))))
	}
	return errors.Join(errs...)
}

// cookies sets the core scheduling cookies of the pods' processes.
func (s *Strategy) cookies(ctx context.Context, r Rule, pods []*corev1.Pod) error {
	if err := s.coreSched.Supported(); err != nil {
		if r.Enabled() {
			s.sayOnce(ctx, "coreSched", err.Error())
		}
		return nil
	}
	if r.Enabled() {
		if err := s.sysctl(ctx, "sched_group_identity_enabled", false); err != nil {
			return fmt.Errorf("core scheduling needs group identity off: %w", err)
		}
	}
	l := s.cg.Layout()
	index := map[string]int{}
	var groups []cookieGroup
	var clear []int
	var errs []error
	for _, pod := range pods {
		kube := extension.GetKubeQoSClass(pod)
		var pids []int
		for _, c := range qosmanager.Containers(pod) {
			dir, err := l.ContainerDir(kube, pod.UID, c.Status.ContainerID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p, err := s.cg.Procs(ctx, dir)
			if err = skipErr(err); err != nil {
				errs = append(errs, err)
			}
			pids = append(pids, p...)
		}
		group, ok := r.CoreSchedGroup(pod)
		if !ok {
			clear = append(clear, pids...)
			continue
		}
		i, ok := index[group]
		if !ok {
			i = len(groups)
			index[group] = i
			groups = append(groups, cookieGroup{name: group})
		}
		groups[i].pids = append(groups[i].pids, pids...)
	}
	errs = append(errs, syncCookies(ctx, s.coreSched, groups, clear))
	return errors.Join(errs...)
}

// set writes v to knob in dir unless it is known to be there (read back every qosmanager.DefaultVerifyEvery
// rounds); cgroups that are gone and knobs the kernel lacks are skipped.
func (s *Strategy) set(ctx context.Context, dir string, knob cgroup.IntKnob, v int64) error {
	return s.knobs.Apply(dir, knob.Name, v, func() (bool, error) { return s.cg.SetInt(ctx, dir, knob, v) })
}

// sysctl sets /proc/sys/kernel/<name> to 1 or 0 when the kernel has it; a kernel without it is fine.
func (s *Strategy) sysctl(ctx context.Context, name string, on bool) error {
	path := filepath.Join(s.procRoot, "sys", "kernel", name)
	cur, err := sysfile.ReadInt(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	want := int64(0)
	if on {
		want = 1
	}
	if cur == want {
		return nil
	}
	if err := sysfile.WriteInt(path, want); err != nil {
		return fmt.Errorf("sysctl kernel.%s=%d: %w", name, want, err)
	}
	klog.FromContext(ctx).Info("Set a kernel scheduler setting", "sysctl", "kernel."+name, "value", want)
	return nil
}

// sayOnce logs that a feature the NodeSLO enables is not supported on this kernel, once per feature.
func (s *Strategy) sayOnce(ctx context.Context, feature, why string) {
	if s.said[feature] {
		return
	}
	s.said[feature] = true
	klog.FromContext(ctx).Info("CPU QoS feature not supported on this kernel; the setting is ignored", "feature", feature, "reason", why)
}

// skipErr drops the errors of cgroups that are gone and knobs the kernel lacks.
func skipErr(err error) error {
	if errors.Is(err, cgroup.ErrNotFound) || errors.Is(err, cgroup.ErrNotSupported) {
		return nil
	}
	return err
}
