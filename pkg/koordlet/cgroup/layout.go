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

package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Version is the cgroup hierarchy version.
type Version int

// cgroup hierarchy versions.
const (
	// V1 is the legacy hierarchy: one mount per controller under the root.
	V1 Version = 1
	// V2 is the unified hierarchy: one tree with cgroup.controllers at its root.
	V2 Version = 2
)

// String returns "v1" or "v2".
func (v Version) String() string {
	switch v {
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return fmt.Sprintf("Version(%d)", int(v))
}

// Driver is kubelet's cgroup driver, which decides how its cgroups are named.
type Driver string

// kubelet cgroup drivers.
const (
	// Cgroupfs names cgroups as plain paths: /kubepods/burstable/pod<uid>/<id>.
	Cgroupfs Driver = "cgroupfs"
	// Systemd names cgroups as slices and scopes:
	// /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope.
	Systemd Driver = "systemd"
)

// v1Controllers are the cgroup v1 controllers koordlet uses, each mounted at
// <root>/<controller>.
var v1Controllers = []string{"cpu", "cpuacct", "cpuset", "memory"}

// DetectVersion reports the cgroup version mounted at root: V2 when
// <root>/cgroup.controllers exists, V1 when root is a directory without it
// (a hybrid mount with the unified tree at <root>/unified counts as V1).
func DetectVersion(root string) (Version, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return V2, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("detecting cgroup version under %s: %w", root, err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return 0, fmt.Errorf("detecting cgroup version under %s: %w", root, err)
	}
	if !info.IsDir() {
		return 0, fmt.Errorf("detecting cgroup version: %s is not a directory", root)
	}
	return V1, nil
}

// DetectDriver reports kubelet's cgroup driver from the directory it created
// under parent (kubelet's --cgroup-root, "" meaning "/") in the CPU hierarchy:
// kubepods.slice means systemd, kubepods means cgroupfs. When both exist,
// systemd wins, as in Koordinator. It fails, naming both paths, when neither
// exists.
func DetectDriver(root string, v Version, parent string) (Driver, error) {
	base := root
	if v == V1 {
		base = filepath.Join(root, "cpu")
	}
	base = filepath.Join(base, cleanParent(parent))
	systemd := filepath.Join(base, "kubepods.slice")
	cgroupfs := filepath.Join(base, "kubepods")
	if isDir(systemd) {
		return Systemd, nil
	}
	if isDir(cgroupfs) {
		return Cgroupfs, nil
	}
	return "", fmt.Errorf("detecting the kubelet cgroup driver: neither %s (systemd) nor %s (cgroupfs) is a directory", systemd, cgroupfs)
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// cleanParent returns parent as a clean absolute cgroup path; "" and "/" give
// "/".
func cleanParent(parent string) string {
	return path.Clean("/" + parent)
}

// Layout names kubelet's cgroup hierarchy. All directories its methods return
// are cgroup paths relative to a controller root, beginning with "/".
//
// Naming follows kubelet: the QoS directory is decided by the Kubernetes QoS
// class (Guaranteed pods sit directly under kubepods), systemd names escape
// "-" in the pod UID as "_", and container directories carry the runtime's
// prefix under systemd. Parent is prepended verbatim under both drivers; with
// systemd kubelet is normally run with --cgroup-root=/, which gives the usual
// /kubepods.slice.
type Layout struct {
	// Root is the cgroup mount point, e.g. /sys/fs/cgroup or /host-cgroup.
	Root string
	// Version is the cgroup version mounted at Root.
	Version Version
	// Driver is kubelet's cgroup driver.
	Driver Driver
	// Parent is kubelet's --cgroup-root; "" means "/".
	Parent string
}

// KubepodsDir returns kubelet's top pod cgroup: /kubepods or /kubepods.slice
// under Parent. Guaranteed pods live directly in it.
func (l Layout) KubepodsDir() string {
	name := "kubepods"
	if l.Driver == Systemd {
		name = "kubepods.slice"
	}
	return path.Join(cleanParent(l.Parent), name)
}

// qosName returns the kubelet name component of a QoS class: "" for
// Guaranteed (and any value kubelet would not create a directory for),
// "burstable" or "besteffort".
func qosName(qos corev1.PodQOSClass) string {
	switch qos {
	case corev1.PodQOSBurstable:
		return "burstable"
	case corev1.PodQOSBestEffort:
		return "besteffort"
	}
	return ""
}

// QoSDir returns the directory of a Kubernetes QoS class: KubepodsDir for
// Guaranteed, its burstable or besteffort child otherwise
// (kubepods-burstable.slice under systemd). Values other than Burstable and
// BestEffort are treated as Guaranteed.
func (l Layout) QoSDir(qos corev1.PodQOSClass) string {
	q := qosName(qos)
	if q == "" {
		return l.KubepodsDir()
	}
	if l.Driver == Systemd {
		return path.Join(l.KubepodsDir(), "kubepods-"+q+".slice")
	}
	return path.Join(l.KubepodsDir(), q)
}

// PodDir returns the directory of a pod: <QoSDir>/pod<uid> under cgroupfs,
// <QoSDir>/kubepods[-<qos>]-pod<uid with "-" replaced by "_">.slice under
// systemd.
func (l Layout) PodDir(qos corev1.PodQOSClass, uid types.UID) string {
	if l.Driver == Systemd {
		prefix := "kubepods-"
		if q := qosName(qos); q != "" {
			prefix += q + "-"
		}
		return path.Join(l.QoSDir(qos), prefix+"pod"+strings.ReplaceAll(string(uid), "-", "_")+".slice")
	}
	return path.Join(l.QoSDir(qos), "pod"+string(uid))
}

// systemdScopePrefix maps a CRI runtime name (the scheme of a container ID)
// to the prefix of its container scopes under the systemd driver.
var systemdScopePrefix = map[string]string{
	"containerd": "cri-containerd-",
	"docker":     "docker-",
	"cri-o":      "crio-",
	"pouch":      "pouch-",
}

// ContainerDir returns the directory of a container, given its ID as the
// kubelet reports it in status ("containerd://abc"). Under cgroupfs it is
// <PodDir>/<id> (<PodDir>/crio-<id> for CRI-O, which names its cgroups that
// way); under systemd <PodDir>/<prefix><id>.scope with the runtime's prefix
// (cri-containerd-, docker-, crio-, pouch-). It fails on a malformed ID, and
// under systemd on a runtime whose scope names it does not know.
func (l Layout) ContainerDir(qos corev1.PodQOSClass, uid types.UID, containerID string) (string, error) {
	runtime, id, err := ParseContainerID(containerID)
	if err != nil {
		return "", err
	}
	var name string
	switch {
	case l.Driver == Systemd:
		prefix, ok := systemdScopePrefix[runtime]
		if !ok {
			return "", fmt.Errorf("container ID %q: runtime %q has no known systemd scope name", containerID, runtime)
		}
		name = prefix + id + ".scope"
	case runtime == "cri-o":
		name = "crio-" + id
	default:
		name = id
	}
	return path.Join(l.PodDir(qos, uid), name), nil
}

// ParseContainerID splits a container ID as the kubelet reports it
// ("<runtime>://<id>") into its runtime and ID. It fails when either part is
// empty or the ID could not be a cgroup directory name.
func ParseContainerID(containerID string) (runtime, id string, err error) {
	runtime, id, ok := strings.Cut(containerID, "://")
	switch {
	case !ok:
		return "", "", fmt.Errorf("container ID %q: want <runtime>://<id>", containerID)
	case runtime == "":
		return "", "", fmt.Errorf("container ID %q: empty runtime", containerID)
	case id == "":
		return "", "", fmt.Errorf("container ID %q: empty id", containerID)
	case strings.ContainsAny(id, "/\x00") || id == "." || id == "..":
		return "", "", fmt.Errorf("container ID %q: id is not a valid directory name", containerID)
	}
	return runtime, id, nil
}

// controllerOf returns the cgroup v1 controller that holds a knob, from the
// knob's name: cpuacct.*, cpu.*, cpuset.*, memory.*. Other names (cgroup.*,
// tasks) are not controller-specific and get "cpu".
func controllerOf(knob string) string {
	c, _, _ := strings.Cut(knob, ".")
	switch c {
	case "cpuacct", "cpu", "cpuset", "memory":
		return c
	}
	return "cpu"
}

// DirPath returns the absolute path of dir in the hierarchy that holds knob:
// <Root>/<controller>/<dir> on v1, <Root>/<dir> on v2.
func (l Layout) DirPath(dir, knob string) string {
	if l.Version == V1 {
		return filepath.Join(l.Root, controllerOf(knob), dir)
	}
	return filepath.Join(l.Root, dir)
}

// KnobPath returns the absolute path of the file knob (e.g. "cpu.shares") in
// dir.
func (l Layout) KnobPath(dir, knob string) string {
	if !cleanAbs(l.Root) || !cleanAbs(dir) {
		return filepath.Join(l.DirPath(dir, knob), knob)
	}
	// The common case, in one allocation: both paths are already clean.
	root := l.Root
	if root == "/" {
		root = ""
	}
	if dir == "/" {
		dir = ""
	}
	if l.Version == V1 {
		return root + "/" + controllerOf(knob) + dir + "/" + knob
	}
	return root + dir + "/" + knob
}

// cleanAbs reports whether p is an absolute path that filepath.Clean would
// leave alone.
func cleanAbs(p string) bool {
	return strings.HasPrefix(p, "/") && (p == "/" || !strings.HasSuffix(p, "/")) &&
		!strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..")
}

// ControllerDirs returns the absolute paths of dir in every hierarchy
// koordlet uses: one per controller (cpu, cpuacct, cpuset, memory) on v1, a
// single one on v2. Tests use it to build or remove a hierarchy and to attach
// processes.
func (l Layout) ControllerDirs(dir string) []string {
	if l.Version != V1 {
		return []string{filepath.Join(l.Root, dir)}
	}
	out := make([]string, 0, len(v1Controllers))
	for _, c := range v1Controllers {
		out = append(out, filepath.Join(l.Root, c, dir))
	}
	return out
}
