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

package cgroup_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup/cgrouptest"
)

// combo is one of the four layouts every test runs on.
type combo struct {
	v cgroup.Version
	d cgroup.Driver
}

func (c combo) String() string { return c.v.String() + "/" + string(c.d) }

var combos = []combo{{cgroup.V1, cgroup.Cgroupfs}, {cgroup.V1, cgroup.Systemd}, {cgroup.V2, cgroup.Cgroupfs}, {cgroup.V2, cgroup.Systemd}}

const testUID = types.UID("8dbf3f4c-2d1a-4f7e-9a0b-6c5d4e3f2a1b")

func TestLayoutNames(t *testing.T) {
	type names struct {
		Kubepods                        string
		QoSGuaranteed, QoSBurstable     string
		QoSBestEffort                   string
		PodGuaranteed, PodBurstable     string
		PodBestEffort                   string
		Containerd, Docker, CRIO, Pouch string
	}
	// The systemd names are what kubelet's CgroupName.ToSystemd produces for
	// {"kubepods", "besteffort", "pod<uid>"}: each level repeats its
	// ancestors' names, and "-" in the UID becomes "_".
	const sysUID = "8dbf3f4c_2d1a_4f7e_9a0b_6c5d4e3f2a1b"
	tests := map[string]struct {
		driver cgroup.Driver
		parent string
		want   names
	}{
		"cgroupfs": {
			driver: cgroup.Cgroupfs,
			want: names{
				Kubepods:      "/kubepods",
				QoSGuaranteed: "/kubepods",
				QoSBurstable:  "/kubepods/burstable",
				QoSBestEffort: "/kubepods/besteffort",
				PodGuaranteed: "/kubepods/pod" + string(testUID),
				PodBurstable:  "/kubepods/burstable/pod" + string(testUID),
				PodBestEffort: "/kubepods/besteffort/pod" + string(testUID),
				Containerd:    "/kubepods/besteffort/pod" + string(testUID) + "/abc123",
				Docker:        "/kubepods/besteffort/pod" + string(testUID) + "/abc123",
				CRIO:          "/kubepods/besteffort/pod" + string(testUID) + "/crio-abc123",
				Pouch:         "/kubepods/besteffort/pod" + string(testUID) + "/abc123",
			},
		},
		"cgroupfs under a parent": {
			driver: cgroup.Cgroupfs,
			parent: "/koord-e2e-xyz",
			want: names{
				Kubepods:      "/koord-e2e-xyz/kubepods",
				QoSGuaranteed: "/koord-e2e-xyz/kubepods",
				QoSBurstable:  "/koord-e2e-xyz/kubepods/burstable",
				QoSBestEffort: "/koord-e2e-xyz/kubepods/besteffort",
				PodGuaranteed: "/koord-e2e-xyz/kubepods/pod" + string(testUID),
				PodBurstable:  "/koord-e2e-xyz/kubepods/burstable/pod" + string(testUID),
				PodBestEffort: "/koord-e2e-xyz/kubepods/besteffort/pod" + string(testUID),
				Containerd:    "/koord-e2e-xyz/kubepods/besteffort/pod" + string(testUID) + "/abc123",
				Docker:        "/koord-e2e-xyz/kubepods/besteffort/pod" + string(testUID) + "/abc123",
				CRIO:          "/koord-e2e-xyz/kubepods/besteffort/pod" + string(testUID) + "/crio-abc123",
				Pouch:         "/koord-e2e-xyz/kubepods/besteffort/pod" + string(testUID) + "/abc123",
			},
		},
		"systemd": {
			driver: cgroup.Systemd,
			parent: "/",
			want: names{
				Kubepods:      "/kubepods.slice",
				QoSGuaranteed: "/kubepods.slice",
				QoSBurstable:  "/kubepods.slice/kubepods-burstable.slice",
				QoSBestEffort: "/kubepods.slice/kubepods-besteffort.slice",
				PodGuaranteed: "/kubepods.slice/kubepods-pod" + sysUID + ".slice",
				PodBurstable:  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + sysUID + ".slice",
				PodBestEffort: "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice",
				Containerd:    "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/cri-containerd-abc123.scope",
				Docker:        "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/docker-abc123.scope",
				CRIO:          "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/crio-abc123.scope",
				Pouch:         "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/pouch-abc123.scope",
			},
		},
		"systemd under a parent": {
			driver: cgroup.Systemd,
			parent: "koord-e2e-xyz/",
			want: names{
				Kubepods:      "/koord-e2e-xyz/kubepods.slice",
				QoSGuaranteed: "/koord-e2e-xyz/kubepods.slice",
				QoSBurstable:  "/koord-e2e-xyz/kubepods.slice/kubepods-burstable.slice",
				QoSBestEffort: "/koord-e2e-xyz/kubepods.slice/kubepods-besteffort.slice",
				PodGuaranteed: "/koord-e2e-xyz/kubepods.slice/kubepods-pod" + sysUID + ".slice",
				PodBurstable:  "/koord-e2e-xyz/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + sysUID + ".slice",
				PodBestEffort: "/koord-e2e-xyz/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice",
				Containerd:    "/koord-e2e-xyz/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/cri-containerd-abc123.scope",
				Docker:        "/koord-e2e-xyz/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/docker-abc123.scope",
				CRIO:          "/koord-e2e-xyz/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/crio-abc123.scope",
				Pouch:         "/koord-e2e-xyz/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + sysUID + ".slice/pouch-abc123.scope",
			},
		},
	}
	for name, tc := range tests {
		// Naming does not depend on the version; every version must give
		// the same names.
		for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
			t.Run(name+"/"+v.String(), func(t *testing.T) {
				l := cgroup.Layout{Root: "/sys/fs/cgroup", Version: v, Driver: tc.driver, Parent: tc.parent}
				container := func(id string) string {
					dir, err := l.ContainerDir(corev1.PodQOSBestEffort, testUID, id)
					if err != nil {
						t.Fatalf("ContainerDir(%q): %v", id, err)
					}
					return dir
				}
				got := names{
					Kubepods:      l.KubepodsDir(),
					QoSGuaranteed: l.QoSDir(corev1.PodQOSGuaranteed),
					QoSBurstable:  l.QoSDir(corev1.PodQOSBurstable),
					QoSBestEffort: l.QoSDir(corev1.PodQOSBestEffort),
					PodGuaranteed: l.PodDir(corev1.PodQOSGuaranteed, testUID),
					PodBurstable:  l.PodDir(corev1.PodQOSBurstable, testUID),
					PodBestEffort: l.PodDir(corev1.PodQOSBestEffort, testUID),
					Containerd:    container("containerd://abc123"),
					Docker:        container("docker://abc123"),
					CRIO:          container("cri-o://abc123"),
					Pouch:         container("pouch://abc123"),
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("names (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

func TestContainerDirErrors(t *testing.T) {
	tests := map[string]struct {
		driver  cgroup.Driver
		id      string
		wantErr string
	}{
		"no scheme":                {driver: cgroup.Cgroupfs, id: "abc123", wantErr: `container ID "abc123": want <runtime>://<id>`},
		"empty runtime":            {driver: cgroup.Cgroupfs, id: "://abc", wantErr: `container ID "://abc": empty runtime`},
		"empty id":                 {driver: cgroup.Systemd, id: "containerd://", wantErr: `container ID "containerd://": empty id`},
		"id with a slash":          {driver: cgroup.Cgroupfs, id: "containerd://a/../b", wantErr: "id is not a valid directory name"},
		"dot dot":                  {driver: cgroup.Cgroupfs, id: "docker://..", wantErr: "id is not a valid directory name"},
		"unknown runtime, systemd": {driver: cgroup.Systemd, id: "rkt://abc", wantErr: `runtime "rkt" has no known systemd scope name`},
		"empty string":             {driver: cgroup.Systemd, id: "", wantErr: `container ID "": want <runtime>://<id>`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l := cgroup.Layout{Root: "/sys/fs/cgroup", Version: cgroup.V1, Driver: tc.driver}
			dir, err := l.ContainerDir(corev1.PodQOSBurstable, testUID, tc.id)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ContainerDir(%q) = %q, %v; want an error containing %q", tc.id, dir, err, tc.wantErr)
			}
		})
	}
	// Under cgroupfs the runtime does not matter: the directory is the ID.
	l := cgroup.Layout{Root: "/sys/fs/cgroup", Version: cgroup.V1, Driver: cgroup.Cgroupfs}
	got, err := l.ContainerDir(corev1.PodQOSBurstable, testUID, "rkt://abc")
	if want := "/kubepods/burstable/pod" + string(testUID) + "/abc"; err != nil || got != want {
		t.Errorf("ContainerDir(rkt://abc) under cgroupfs = %q, %v; want %q", got, err, want)
	}
}

func TestKnobPaths(t *testing.T) {
	tests := map[string]struct {
		root     string
		version  cgroup.Version
		dir      string
		knob     string
		wantPath string
	}{
		"v1 cpu":             {version: cgroup.V1, knob: "cpu.shares", wantPath: "/r/cpu/kubepods/cpu.shares"},
		"v1 cpuacct":         {version: cgroup.V1, knob: "cpuacct.usage", wantPath: "/r/cpuacct/kubepods/cpuacct.usage"},
		"v1 cpuset":          {version: cgroup.V1, knob: "cpuset.cpus", wantPath: "/r/cpuset/kubepods/cpuset.cpus"},
		"v1 memory":          {version: cgroup.V1, knob: "memory.stat", wantPath: "/r/memory/kubepods/memory.stat"},
		"v1 cgroup.*":        {version: cgroup.V1, knob: "cgroup.procs", wantPath: "/r/cpu/kubepods/cgroup.procs"},
		"v2":                 {version: cgroup.V2, knob: "cpuset.cpus", wantPath: "/r/kubepods/cpuset.cpus"},
		"v1 root dir":        {version: cgroup.V1, dir: "/", knob: "cpuset.cpus", wantPath: "/r/cpuset/cpuset.cpus"},
		"v2 root dir":        {version: cgroup.V2, dir: "/", knob: "cpu.stat", wantPath: "/r/cpu.stat"},
		"mount point is /":   {root: "/", version: cgroup.V2, knob: "cpu.stat", wantPath: "/kubepods/cpu.stat"},
		"trailing slash":     {root: "/host-cgroup/", version: cgroup.V1, knob: "cpu.shares", wantPath: "/host-cgroup/cpu/kubepods/cpu.shares"},
		"unclean dir":        {version: cgroup.V2, dir: "/kubepods//burstable/", knob: "cpu.max", wantPath: "/r/kubepods/burstable/cpu.max"},
		"relative mount dir": {root: "r", version: cgroup.V2, knob: "cpu.max", wantPath: "r/kubepods/cpu.max"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root, dir := tc.root, tc.dir
			if root == "" {
				root = "/r"
			}
			if dir == "" {
				dir = "/kubepods"
			}
			l := cgroup.Layout{Root: root, Version: tc.version, Driver: cgroup.Cgroupfs}
			if got := l.KnobPath(dir, tc.knob); got != tc.wantPath {
				t.Errorf("KnobPath = %q, want %q", got, tc.wantPath)
			}
			if got, want := l.DirPath(dir, tc.knob), filepath.Dir(tc.wantPath); got != want {
				t.Errorf("DirPath = %q, want %q", got, want)
			}
		})
	}
	v1 := cgroup.Layout{Root: "/r", Version: cgroup.V1}
	if diff := cmp.Diff([]string{"/r/cpu/x", "/r/cpuacct/x", "/r/cpuset/x", "/r/memory/x"}, v1.ControllerDirs("/x")); diff != "" {
		t.Errorf("v1 ControllerDirs (-want,+got):\n%s", diff)
	}
	v2 := cgroup.Layout{Root: "/r", Version: cgroup.V2}
	if diff := cmp.Diff([]string{"/r/x"}, v2.ControllerDirs("/x")); diff != "" {
		t.Errorf("v2 ControllerDirs (-want,+got):\n%s", diff)
	}
}

func TestDetect(t *testing.T) {
	for _, c := range combos {
		for _, parent := range []string{"", "/koord-e2e-xyz"} {
			t.Run(c.String()+"/parent="+parent, func(t *testing.T) {
				fs := cgrouptest.NewFS(t, c.v, c.d, cgrouptest.WithParent(parent))
				v, err := cgroup.DetectVersion(fs.Root())
				if err != nil || v != c.v {
					t.Fatalf("DetectVersion = %v, %v; want %v", v, err, c.v)
				}
				d, err := cgroup.DetectDriver(fs.Root(), v, parent)
				if err != nil || d != c.d {
					t.Fatalf("DetectDriver = %q, %v; want %q", d, err, c.d)
				}
			})
		}
	}
}

func TestDetectErrors(t *testing.T) {
	t.Run("version: root missing", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "nope")
		if v, err := cgroup.DetectVersion(root); err == nil || !strings.Contains(err.Error(), root) {
			t.Errorf("DetectVersion = %v, %v; want an error naming %s", v, err, root)
		}
	})
	t.Run("version: root is a file", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(root, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if v, err := cgroup.DetectVersion(root); err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("DetectVersion = %v, %v; want a not-a-directory error", v, err)
		}
	})
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run("driver: no kubepods/"+v.String(), func(t *testing.T) {
			root := t.TempDir()
			base := root
			if v == cgroup.V1 {
				base = filepath.Join(root, "cpu")
			}
			d, err := cgroup.DetectDriver(root, v, "/")
			want := "neither " + filepath.Join(base, "kubepods.slice") + " (systemd) nor " + filepath.Join(base, "kubepods") + " (cgroupfs)"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("DetectDriver = %q, %v; want an error containing %q", d, err, want)
			}
		})
	}
	t.Run("driver: wrong parent", func(t *testing.T) {
		fs := cgrouptest.NewFS(t, cgroup.V2, cgroup.Systemd, cgrouptest.WithParent("/a"))
		if d, err := cgroup.DetectDriver(fs.Root(), cgroup.V2, "/b"); err == nil || !strings.Contains(err.Error(), filepath.Join(fs.Root(), "b", "kubepods.slice")) {
			t.Errorf("DetectDriver = %q, %v; want an error naming the path under /b", d, err)
		}
	})
}
