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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
)

// Name is the strategy's name in logs and metrics.
const Name = "resctrl"

// DefaultRoot is where the resctrl filesystem is mounted.
const DefaultRoot = "/sys/fs/resctrl"

// The resctrl groups of the QoS classes, directories under the resctrl root, named as Koordinator names them so
// that a node moved from Koordinator keeps its groups.
const (
	// GroupLSR holds the threads of LSR and LSE pods.
	GroupLSR = "LSR"
	// GroupLS holds the threads of LS pods.
	GroupLS = "LS"
	// GroupBE holds the threads of BE pods.
	GroupBE = "BE"
)

// group is the resctrl group of one QoS class.
type group struct {
	// name is the group's directory under the resctrl root.
	name string
	// field is the class's field of the ResourceQOSStrategy.
	field string
	// class points at the class's field in a strategy.
	class func(*slov1alpha1.ResourceQOSStrategy) **slov1alpha1.ResourceQOS
}

// groups are the groups the strategy manages, in the order it writes them.
var groups = []group{
	{name: GroupLSR, field: "lsrClass", class: func(s *slov1alpha1.ResourceQOSStrategy) **slov1alpha1.ResourceQOS { return &s.LSRClass }},
	{name: GroupLS, field: "lsClass", class: func(s *slov1alpha1.ResourceQOSStrategy) **slov1alpha1.ResourceQOS { return &s.LSClass }},
	{name: GroupBE, field: "beClass", class: func(s *slov1alpha1.ResourceQOSStrategy) **slov1alpha1.ResourceQOS { return &s.BEClass }},
}

// groupOf returns the group of a pod's QoS class: LSE pods share LSR's, as in Koordinator; SYSTEM pods and pods
// of no class have none ("").
func groupOf(pod *corev1.Pod) string {
	switch qosmanager.PodQoS(pod) {
	case extension.QoSLSE, extension.QoSLSR:
		return GroupLSR
	case extension.QoSLS:
		return GroupLS
	case extension.QoSBE:
		return GroupBE
	}
	return ""
}

// Strategy gives each QoS class its share of the last-level cache and of memory bandwidth through resctrl.
// Create it with New.
type Strategy struct {
	root    string
	cg      *cgroup.Manager
	metrics *Metrics

	config qosmanager.LastGood[slov1alpha1.ResourceQOSStrategy]
	// unavailableLogged is set once the absence of resctrl has been logged.
	unavailableLogged bool
	// offLogged holds the features already logged as off.
	offLogged sets.Set[string]

	// round counts the rounds; every qosmanager.DefaultVerifyEvery-th (the first included) is a full one, which
	// reads the node's resctrl info and every pod's threads again.
	round int
	// info is the node's resctrl info as the last full round read it.
	info *nodeInfo
	// scanned holds the containers, by ID, whose threads a round has moved: their later threads inherit the
	// group, so only new containers are read between full rounds.
	scanned sets.Set[string]
}

// Option configures a Strategy.
type Option func(*Strategy)

// WithMetrics sets the collectors the strategy records into.
func WithMetrics(m *Metrics) Option { return func(s *Strategy) { s.metrics = m } }

// New returns the strategy for the resctrl filesystem mounted at root (DefaultRoot, or its host mount), reading
// the pods' threads from the cgroup hierarchy cg's Layout names.
func New(root string, cg *cgroup.Manager, opts ...Option) *Strategy {
	s := &Strategy{root: root, cg: cg, offLogged: sets.New[string](), scanned: sets.New[string]()}
	for _, o := range opts {
		o(s)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	return s
}

// Name implements qosmanager.Strategy.
func (s *Strategy) Name() string { return Name }

// Run implements qosmanager.Strategy: for each class whose resctrlQOS is enabled it creates the class's group,
// writes its schemata when it differs and moves the class's pods' threads that are not in it yet into it; for
// each class that is off it writes back the full schemata of its group, if the group exists. On a node without
// resctrl it does nothing (said once). An invalid resctrl configuration is reported and the last valid one used.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	logger := klog.FromContext(ctx)
	s.round++
	full := s.round%qosmanager.DefaultVerifyEvery == 1 || s.info == nil
	info, ok := nodeInfo{}, true
	if full {
		var err error
		if info, ok, err = readNodeInfo(s.root); err != nil {
			s.info = nil
			return err
		}
		s.info = &info
		if !ok {
			s.info = nil
		}
	} else {
		info = *s.info
	}
	if !ok {
		if !s.unavailableLogged {
			logger.Info("Resctrl is not available on this node; LLC and memory bandwidth QoS are off", "root", s.root)
			s.unavailableLogged = true
		}
		return nil
	}
	s.unavailableLogged = false
	for _, off := range info.off {
		if !s.offLogged.Has(off) {
			logger.Info("Found a resctrl feature unavailable on this node; it is left alone", "feature", off, "root", s.root)
			s.offLogged.Insert(off)
		}
	}

	cfg, cfgErr := s.config.Update(resctrlConfig(st))
	if cfg == nil {
		return cfgErr
	}
	errs := []error{cfgErr}
	pods := map[string][]*corev1.Pod{}
	live := sets.New[string]()
	for _, pod := range st.Pods {
		containers := qosmanager.Containers(pod)
		isNew := false
		for _, c := range containers {
			live.Insert(c.Status.ContainerID)
			isNew = isNew || !s.scanned.Has(c.Status.ContainerID)
		}
		if g := groupOf(pod); g != "" && (full || isNew) {
			pods[g] = append(pods[g], pod)
		}
	}
	// Containers that are gone are forgotten; those of the pods read this round are marked below.
	s.scanned = s.scanned.Intersection(live)
	for _, g := range groups {
		var err error
		if q := *g.class(cfg); q != nil && q.ResctrlQOS != nil && ptr.Deref(q.ResctrlQOS.Enable, false) {
			err = s.apply(ctx, info, g, &q.ResctrlQOS.ResctrlQOS, pods[g.name])
		} else {
			err = s.revert(ctx, info, g)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("resctrl group %s: %w", g.name, err))
		}
	}
	return errors.Join(errs...)
}

// resctrlConfig returns the resctrl part of the node's per-class QoS strategy: the NodeSLO's
// spec.resourceQOSStrategy merged over configuration.DefaultResourceQOSStrategy, keeping only each class's
// resctrlQOS so that errors in other parts do not stop this strategy. It returns an error naming the NodeSLO
// and the fields when the result is invalid (e.g. a start not below its end).
func resctrlConfig(st *qosmanager.State) (*slov1alpha1.ResourceQOSStrategy, error) {
	var in *slov1alpha1.ResourceQOSStrategy
	name := "<none>"
	if st.NodeSLO != nil {
		in, name = st.NodeSLO.Spec.ResourceQOSStrategy, st.NodeSLO.Name
	}
	merged := configuration.Merge(configuration.DefaultResourceQOSStrategy(), in)
	out := &slov1alpha1.ResourceQOSStrategy{}
	for _, g := range groups {
		if q := *g.class(merged); q != nil && q.ResctrlQOS != nil {
			*g.class(out) = &slov1alpha1.ResourceQOS{ResctrlQOS: q.ResctrlQOS}
		}
	}
	if errs := configuration.ValidateResourceQOSStrategy(field.NewPath("spec", "resourceQOSStrategy"), out); len(errs) > 0 {
		return nil, fmt.Errorf("NodeSLO %s: %w", name, errs.ToAggregate())
	}
	return out, nil
}

// apply makes the group of g hold what q asks for and the threads of pods.
func (s *Strategy) apply(ctx context.Context, info nodeInfo, g group, q *slov1alpha1.ResctrlQOS, pods []*corev1.Pod) error {
	dir := filepath.Join(s.root, g.name)
	if err := s.ensureGroup(ctx, info, dir); err != nil {
		return err
	}
	var errs []error
	want, ways, mbPercent, err := classSchemata(info, q)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s.resctrlQOS: %w", g.field, err))
	}
	if err := s.syncSchemata(ctx, g, want); err != nil {
		errs = append(errs, err)
	}
	if ways > 0 {
		s.metrics.cacheWays.WithLabelValues(g.name).Set(float64(ways))
	} else {
		s.metrics.cacheWays.DeleteLabelValues(g.name)
	}
	if mbPercent >= 0 {
		s.metrics.bandwidth.WithLabelValues(g.name).Set(float64(mbPercent))
	} else {
		s.metrics.bandwidth.DeleteLabelValues(g.name)
	}

	var ids []int
	var read []*corev1.Pod
	for _, pod := range pods {
		more, err := podThreads(s.cg.Layout(), pod)
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", klog.KObj(pod), err))
			continue
		}
		ids = append(ids, more...)
		read = append(read, pod)
	}
	moved, err := assignThreads(dir, ids)
	if err != nil {
		errs = append(errs, err)
	} else {
		for _, pod := range read {
			for _, c := range qosmanager.Containers(pod) {
				s.scanned.Insert(c.Status.ContainerID)
			}
		}
	}
	if moved > 0 {
		s.metrics.threads.WithLabelValues(g.name).Add(float64(moved))
		klog.FromContext(ctx).V(4).Info("Moved threads into a resctrl group", "group", g.name, "threads", moved, "pods", len(pods))
	}
	return errors.Join(errs...)
}

// revert writes the full schemata back to the group of g when it exists, so that a class turned off is no
// longer limited; the group and its threads stay (new threads are no longer moved into it).
func (s *Strategy) revert(ctx context.Context, info nodeInfo, g group) error {
	s.metrics.cacheWays.DeleteLabelValues(g.name)
	s.metrics.bandwidth.DeleteLabelValues(g.name)
	if _, err := os.Stat(filepath.Join(s.root, g.name)); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	return s.syncSchemata(ctx, g, fullSchemata(info))
}

// ensureGroup creates the group directory dir when it does not exist.
func (s *Strategy) ensureGroup(ctx context.Context, info nodeInfo, dir string) error {
	err := os.Mkdir(dir, 0o755)
	switch {
	case err == nil:
		klog.FromContext(ctx).V(2).Info("Created a resctrl group", "dir", dir)
		return nil
	case errors.Is(err, fs.ErrExist):
		return nil
	case errors.Is(err, syscall.ENOSPC):
		return fmt.Errorf("%w (all %s CLOSIDs of the node are in use)", err, s.closids(info))
	}
	return err
}

// closids returns the number of CLOSIDs the node has, for errors: the least of the resources', "?" when unknown.
func (s *Strategy) closids(info nodeInfo) string {
	names := make([]string, 0, len(info.cat)+1)
	for _, c := range info.cat {
		names = append(names, c.name)
	}
	if info.mb != nil {
		names = append(names, resourceMB)
	}
	n := uint64(0)
	for _, name := range names {
		v, ok, err := readUint(filepath.Join(s.root, "info", name, "num_closids"), 10)
		if err == nil && ok && (n == 0 || v < n) {
			n = v
		}
	}
	if n == 0 {
		return "?"
	}
	return strconv.FormatUint(n, 10)
}

// syncSchemata writes want to the schemata of the group of g when it holds something else. A group just created
// in a fake tree has no schemata file yet; it is then written.
func (s *Strategy) syncSchemata(ctx context.Context, g group, want groupSchemata) error {
	if len(want) == 0 {
		return nil
	}
	path := filepath.Join(s.root, g.name, schemataFile)
	var cur map[string]map[int]string
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if cur, err = parseSchemata(path, string(b)); err != nil {
			return err
		}
		if same, err := want.matches(path, cur); err != nil || same {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	value := want.String()
	// O_CREATE only matters to a fake tree: the kernel creates schemata with the group.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(value)
	cerr := f.Close()
	if werr != nil {
		// The kernel says why it refused a schemata in info/last_cmd_status.
		if status, err := os.ReadFile(filepath.Join(s.root, "info", "last_cmd_status")); err == nil && len(strings.TrimSpace(string(status))) > 0 {
			return fmt.Errorf("writing %q: %w (kernel: %s)", value, werr, strings.TrimSpace(string(status)))
		}
		return fmt.Errorf("writing %q: %w", value, werr)
	}
	if cerr != nil {
		return cerr
	}
	klog.FromContext(ctx).V(2).Info("Set a resctrl group's schemata", "group", g.name,
		"from", strings.TrimSpace(want.current(cur)), "to", strings.TrimSpace(value))
	return nil
}
