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

package collector

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// Cgroup directories of host applications without a cgroupPath, under the cgroup root, Koordinator's.
const (
	// HostLSDir holds the host applications of the LSE, LSR and LS classes.
	HostLSDir = "host-latency-sensitive"
	// HostBEDir holds the host applications of the BE class.
	HostBEDir = "host-best-effort"
)

// HostAppLister returns the host applications of the node's NodeSLO (spec.hostApplications), nil until the
// NodeSLO is known. The collector does not modify them.
type HostAppLister interface {
	HostApplications() []slov1alpha1.HostApplicationSpec
}

// WithHostApps makes the collector sample the cgroups of the host applications apps lists, as series of
// metriccache.KindHostApp named after each application, and leave their usage out of the system series.
func WithHostApps(apps HostAppLister) Option {
	return func(c *Collector) { c.hostApps = apps }
}

// HostAppDir returns the cgroup directory of a host application, as Koordinator places it: with a cgroupPath,
// <base>/<parentDir>/<relativePath>, base being the cgroup root or kubelet's kubepods, burstable or besteffort
// directory in the layout's driver; without one, host-latency-sensitive/<name> for the LSE, LSR and LS classes,
// host-best-effort/<name> for BE, and <name> under the root otherwise. A path that leaves its base ("..") is an
// error.
func HostAppDir(l cgroup.Layout, app *slov1alpha1.HostApplicationSpec) (string, error) {
	base, rel := "/", ""
	if p := app.CgroupPath; p != nil {
		switch p.Base {
		case slov1alpha1.CgroupBaseTypeKubepods:
			base = l.KubepodsDir()
		case slov1alpha1.CgroupBaseTypeKubeBurstable:
			base = l.QoSDir(corev1.PodQOSBurstable)
		case slov1alpha1.CgroupBaseTypeKubeBesteffort:
			base = l.QoSDir(corev1.PodQOSBestEffort)
		}
		// A leading "/" is relative to the base too, as in Koordinator's filepath.Join.
		rel = path.Clean(strings.TrimLeft(path.Join(p.ParentDir, p.RelativePath), "/"))
	} else {
		switch extension.QoSClass(app.QoS) {
		case extension.QoSLSE, extension.QoSLSR, extension.QoSLS:
			rel = path.Join(HostLSDir, app.Name)
		case extension.QoSBE:
			rel = path.Join(HostBEDir, app.Name)
		default:
			rel = app.Name
		}
		rel = path.Clean(rel)
	}
	if rel == "" || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("host application %q: cgroup path %q is not a directory under %s", app.Name, rel, base)
	}
	return path.Join(base, rel), nil
}

// collectHostApps samples the host applications the lister names, adds their usage to s (so that the system
// series leaves it out) and marks their counters seen.
func (c *Collector) collectHostApps(ctx context.Context, now time.Time, s *sums) []error {
	if c.hostApps == nil {
		return nil
	}
	var errs []error
	for _, app := range c.hostApps.HostApplications() {
		dir, err := HostAppDir(c.cg.Layout(), &app)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ct := c.apps[app.Name]
		if ct == nil || ct.dir != dir {
			ct = &counter{dir: dir}
			c.apps[app.Name] = ct
		}
		ct.seen = c.round
		if err := c.collectHostApp(ctx, app.Name, ct, now, s); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// collectHostApp samples one host application's cgroup. A cgroup that does not exist (the application is not
// running) is skipped quietly, as a pod's.
func (c *Collector) collectHostApp(ctx context.Context, name string, ct *counter, now time.Time, s *sums) error {
	cpu, cpuOK, err := c.sampleCPU(ctx, ct, now)
	if errors.Is(err, cgroup.ErrNotFound) {
		return nil
	}
	if err = skipUnsupported(err); err != nil {
		return fmt.Errorf("host application %s: %w", name, err)
	}
	if cpuOK {
		c.cache.Append(key(metriccache.KindHostApp, name, corev1.ResourceCPU), now, cpu)
		s.cpu += cpu
	}
	mem, err := c.cg.MemoryStats(ctx, ct.dir)
	switch {
	case errors.Is(err, cgroup.ErrNotFound):
	case err == nil:
		c.cache.Append(key(metriccache.KindHostApp, name, corev1.ResourceMemory), now, float64(mem.WorkingSet))
		c.cache.Append(key(metriccache.KindHostApp, name, metriccache.ResourceMemoryWithPageCache), now, float64(mem.Usage))
		s.memory += float64(mem.WorkingSet)
		s.memoryWithCache += float64(mem.Usage)
	case !errors.Is(err, cgroup.ErrNotSupported):
		return fmt.Errorf("host application %s: %w", name, err)
	}
	if c.psi {
		if err := c.collectPSI(ctx, metriccache.KindHostApp, name, nil, ct, now); err != nil {
			return fmt.Errorf("host application %s: %w", name, err)
		}
	}
	return nil
}
