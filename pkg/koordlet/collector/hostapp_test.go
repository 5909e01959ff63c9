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

package collector_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
	"github.com/koord-dev/koord/pkg/koordlet/collector"
	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

func TestHostAppDir(t *testing.T) {
	cgroupfs := cgroup.Layout{Root: "/sys/fs/cgroup", Version: cgroup.V1, Driver: cgroup.Cgroupfs}
	systemd := cgroup.Layout{Root: "/sys/fs/cgroup", Version: cgroup.V2, Driver: cgroup.Systemd}
	tests := map[string]struct {
		layout  cgroup.Layout
		app     slov1alpha1.HostApplicationSpec
		want    string
		wantErr string
	}{
		"LS without a path":  {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "nginx", QoS: "LS"}, want: "/host-latency-sensitive/nginx"},
		"LSR without a path": {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "db", QoS: "LSR"}, want: "/host-latency-sensitive/db"},
		"BE without a path":  {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "yarn", QoS: "BE"}, want: "/host-best-effort/yarn"},
		"no class":           {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "agent"}, want: "/agent"},
		"root base": {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "a",
			CgroupPath: &slov1alpha1.CgroupPath{Base: slov1alpha1.CgroupBaseTypeRoot, ParentDir: "system.slice", RelativePath: "nm.service"}},
			want: "/system.slice/nm.service"},
		"besteffort base, cgroupfs": {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "a",
			CgroupPath: &slov1alpha1.CgroupPath{Base: slov1alpha1.CgroupBaseTypeKubeBesteffort, ParentDir: "hadoop-yarn", RelativePath: "nm"}},
			want: "/kubepods/besteffort/hadoop-yarn/nm"},
		"besteffort base, systemd": {layout: systemd, app: slov1alpha1.HostApplicationSpec{Name: "a",
			CgroupPath: &slov1alpha1.CgroupPath{Base: slov1alpha1.CgroupBaseTypeKubeBesteffort, RelativePath: "yarn.slice"}},
			want: "/kubepods.slice/kubepods-besteffort.slice/yarn.slice"},
		"a leading slash stays under the base": {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "a",
			CgroupPath: &slov1alpha1.CgroupPath{Base: slov1alpha1.CgroupBaseTypeKubepods, ParentDir: "/x", RelativePath: "y"}},
			want: "/kubepods/x/y"},
		"leaving the base": {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "a",
			CgroupPath: &slov1alpha1.CgroupPath{Base: slov1alpha1.CgroupBaseTypeKubepods, ParentDir: "..", RelativePath: "../etc"}},
			wantErr: `host application "a": cgroup path "../../etc" is not a directory under /kubepods`},
		"the base itself": {layout: cgroupfs, app: slov1alpha1.HostApplicationSpec{Name: "a",
			CgroupPath: &slov1alpha1.CgroupPath{Base: slov1alpha1.CgroupBaseTypeKubepods}},
			wantErr: `cgroup path "." is not a directory under /kubepods`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := collector.HostAppDir(tc.layout, &tc.app)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("HostAppDir = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("HostAppDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// apps is a fixed HostAppLister.
type apps []slov1alpha1.HostApplicationSpec

func (a *apps) HostApplications() []slov1alpha1.HostApplicationSpec { return *a }

// TestCollectHostApps: a host application's cgroup is sampled as its own series and left out of the system's,
// an application whose cgroup does not exist is skipped, and one no longer listed loses its series.
func TestCollectHostApps(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fs := cgrouptest.NewFS(t, cgroup.V1, cgroup.Cgroupfs)
	proc := newFakeProc(t)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	cache := metriccache.New(metriccache.Options{})
	listed := apps{{Name: "nginx", QoS: "LS", Priority: "koord-prod"}, {Name: "not-running", QoS: "BE"}}
	nginx := "/host-latency-sensitive/nginx"
	fs.MkDir("/host-latency-sensitive")
	fs.MkDir(nginx)
	col := collector.New(cgroup.NewManager(fs.Layout()), proc.root, cache, &lister{}, collector.WithClock(clk), collector.WithHostApps(&listed))

	proc.stat(4, [8]uint64{1000, 0, 500, 8000, 100, 20, 30, 50})
	proc.meminfo(16*gi, 4*gi, 10*gi)
	fs.SetCPUUsage(nginx, 10*time.Second)
	fs.SetMemory(nginx, 600*mi, 100*mi)
	if err := col.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Step(10 * time.Second)
	// 2 cores of the node; nginx used 5 s of CPU in 10 s: 0.5 cores.
	proc.stat(4, [8]uint64{2500, 0, 900, 9900, 150, 20, 130, 100})
	fs.SetCPUUsage(nginx, 15*time.Second)
	if err := col.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	app := func(r corev1.ResourceName) metriccache.SeriesKey {
		return metriccache.SeriesKey{Kind: metriccache.KindHostApp, ID: "nginx", Resource: r}
	}
	system := func(r corev1.ResourceName) metriccache.SeriesKey {
		return metriccache.SeriesKey{Kind: metriccache.KindSystem, Resource: r}
	}
	keys := []metriccache.SeriesKey{app(corev1.ResourceCPU), app(corev1.ResourceMemory), app(metriccache.ResourceMemoryWithPageCache),
		system(corev1.ResourceCPU), system(corev1.ResourceMemory), system(metriccache.ResourceMemoryWithPageCache),
		{Kind: metriccache.KindHostApp, ID: "not-running", Resource: corev1.ResourceCPU}}
	want := map[string]float64{
		"hostapp/nginx/cpu":                    0.5,
		"hostapp/nginx/memory":                 float64(500 * mi),
		"hostapp/nginx/memory-with-page-cache": float64(600 * mi),
		"system//cpu":                          1.5,
		"system//memory":                       float64(6*gi - 500*mi),
		"system//memory-with-page-cache":       float64(12*gi - 600*mi),
	}
	if diff := cmp.Diff(want, series(t, cache, clk.Now(), keys)); diff != "" {
		t.Errorf("series (-want,+got):\n%s", diff)
	}

	// nginx is removed from the NodeSLO: its series go.
	listed = apps{}
	clk.Step(time.Second)
	if err := col.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := cache.Latest(app(corev1.ResourceCPU)); ok {
		t.Errorf("the series of a host application no longer listed are still there")
	}

	// A path leaving its base is reported, and nothing is read.
	listed = apps{{Name: "bad", CgroupPath: &slov1alpha1.CgroupPath{ParentDir: "../.."}}}
	if err := col.Collect(ctx); err == nil || !strings.Contains(err.Error(), `host application "bad"`) {
		t.Errorf("Collect = %v, want an error naming the host application", err)
	}
}
