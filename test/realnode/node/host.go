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

package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
)

// lockFile serializes real nodes on the machine: one kubelet owns the global kubepods cgroup tree.
const lockFile = "/run/koord-realnode.lock"

// Tools the node needs from the machine, and the Debian packages that hold them.
var hostTools = map[string]string{
	"runc":             "runc",
	"iptables":         "iptables",
	"iptables-save":    "iptables",
	"iptables-restore": "iptables",
	"conntrack":        "conntrack",
	"ip":               "iproute2",
}

// cniPlugins are the CNI plugins of Debian's containernetworking-plugins the node's network uses.
var cniPlugins = []string{"bridge", "host-local", "loopback"}

// preflight checks that the node can run here and takes the machine's real-node lock.
func preflight(opts Options) (func(), error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a real node needs root (kubelet, containerd, cgroups, iptables)")
	}
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("another real node runs on this machine (%s is locked): one kubelet per machine", lockFile)
	}
	unlock := func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); _ = f.Close() }
	if err := checkHost(opts); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// checkHost refuses a machine where a kubelet runs, and names what the node needs and does not find.
func checkHost(opts Options) error {
	if pids := processesNamed("kubelet"); len(pids) > 0 {
		return fmt.Errorf("a kubelet already runs on this machine (pid %v): it owns the kubepods cgroups, and a second one would kill its containers", pids)
	}
	var missing []string
	for tool, pkg := range hostTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, fmt.Sprintf("%s (Debian package %s)", tool, pkg))
		}
	}
	for _, p := range cniPlugins {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			missing = append(missing, fmt.Sprintf("/usr/lib/cni/%s (Debian package containernetworking-plugins)", p))
		}
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			missing = append(missing, filepath.Join(opts.BinDir, b)+" (make bin)")
		}
	}
	for _, b := range []string{"kubelet", "kube-proxy", "containerd", "ctr", "containerd-shim-runc-v2"} {
		if _, err := os.Stat(filepath.Join(opts.NodeBinDir, b)); err != nil {
			missing = append(missing, filepath.Join(opts.NodeBinDir, b)+" (make test-realnode builds it)")
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("missing: %s", strings.Join(missing, ", "))
	}
	if entries, err := os.ReadDir(opts.Dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty", opts.Dir)
	}
	return nil
}

// hostState is what Start found on the machine, for Stop to restore and Leftovers to compare against.
type hostState struct {
	iptables, ip6tables string
	ipForward           string
	netns               []string
	logContainers       []string
	logContainersExist  bool
	// cgroups are the kubepods and k8s.io cgroups that existed already (left by a crashed run, or another
	// containerd's): the former are removed, the latter kept.
	cgroups []string
}

const (
	ipForwardFile    = "/proc/sys/net/ipv4/ip_forward"
	netnsDir         = "/run/netns"
	logContainersDir = "/var/log/containers"
)

func snapshotHost() (*hostState, error) {
	h := &hostState{}
	var err error
	if h.iptables, err = iptablesSave("iptables-save"); err != nil {
		return nil, err
	}
	if h.ip6tables, err = iptablesSave("ip6tables-save"); err != nil {
		return nil, err
	}
	fwd, err := os.ReadFile(ipForwardFile)
	if err != nil {
		return nil, err
	}
	h.ipForward = strings.TrimSpace(string(fwd))
	h.netns = dirNames(netnsDir)
	h.logContainers = dirNames(logContainersDir)
	_, err = os.Stat(logContainersDir)
	h.logContainersExist = err == nil
	h.cgroups = kubepodsCgroups(nil)
	return h, nil
}

var counters = regexp.MustCompile(`\[\d+:\d+\]`)

// iptablesSave returns the rules without comments and counters, and without tables that hold nothing (no
// rules, only built-in chains that accept), which is what a table nobody has touched looks like.
func iptablesSave(tool string) (string, error) {
	out, err := exec.Command(tool).Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	var b strings.Builder
	for _, t := range iptablesTables(string(out)) {
		if !t.empty() {
			b.WriteString(strings.Join(t.lines, "\n") + "\n")
		}
	}
	return b.String(), nil
}

// iptablesTable is one table of iptables-save's output.
type iptablesTable struct {
	name  string
	lines []string
}

var builtinChains = map[string]bool{"PREROUTING": true, "INPUT": true, "FORWARD": true, "OUTPUT": true, "POSTROUTING": true}

func (t iptablesTable) empty() bool {
	for _, l := range t.lines {
		switch {
		case strings.HasPrefix(l, "-A"):
			return false
		case strings.HasPrefix(l, ":"):
			f := strings.Fields(strings.TrimPrefix(l, ":"))
			if len(f) < 2 || !builtinChains[f[0]] || f[1] != "ACCEPT" {
				return false
			}
		}
	}
	return true
}

func iptablesTables(save string) []iptablesTable {
	var tables []iptablesTable
	for _, l := range strings.Split(save, "\n") {
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		l = counters.ReplaceAllString(l, "[0:0]")
		if strings.HasPrefix(l, "*") {
			tables = append(tables, iptablesTable{name: strings.TrimPrefix(l, "*")})
		}
		if len(tables) > 0 {
			tables[len(tables)-1].lines = append(tables[len(tables)-1].lines, l)
		}
	}
	return tables
}

// restoreIptables puts the rules of tool (iptables or ip6tables) back as they were: the saved tables are
// restored whole, and tables that were empty then are emptied.
func restoreIptables(tool, saved string) error {
	now, err := exec.Command(tool + "-save").Output()
	if err != nil {
		return fmt.Errorf("%s-save: %w", tool, err)
	}
	had := map[string]bool{}
	for _, t := range iptablesTables(saved) {
		had[t.name] = true
	}
	var errs []error
	for _, t := range iptablesTables(string(now)) {
		if had[t.name] {
			continue
		}
		for _, args := range [][]string{{"-t", t.name, "-F"}, {"-t", t.name, "-X"}} {
			if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, out))
			}
		}
		for _, l := range t.lines {
			if f := strings.Fields(strings.TrimPrefix(l, ":")); strings.HasPrefix(l, ":") && len(f) > 1 && builtinChains[f[0]] && f[1] != "ACCEPT" {
				_ = exec.Command(tool, "-t", t.name, "-P", f[0], "ACCEPT").Run()
			}
		}
	}
	if strings.TrimSpace(saved) != "" {
		cmd := exec.Command(tool + "-restore")
		cmd.Stdin = strings.NewReader(saved)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s-restore: %w: %s", tool, err, out))
		}
	}
	return errors.Join(errs...)
}

func dirNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Stop takes the node down in reverse order: the controllers and kube-proxy, kubelet, every pod sandbox
// through CRI (which tears down its network), containerd, any shim left; then it unmounts what is left under
// the node's directory, removes the kubepods cgroups and restores iptables, ip_forward, network namespaces and
// /var/log/containers as Start found them.
func (n *Node) Stop(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	var errs []error
	byName := map[string]*process{}
	for _, p := range n.procs {
		byName[p.name] = p
	}
	stop := func(names ...string) {
		for _, name := range names {
			if p := byName[name]; p != nil {
				if err := p.stop(15 * time.Second); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	stop("kube-scheduler", "kube-controller-manager", "kube-proxy", "kubelet")
	if byName["containerd"] != nil {
		if err := n.removeSandboxes(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	stop("containerd", "kube-apiserver", "etcd")
	if n.opts.Dir != "" {
		for _, pid := range processesMentioning(n.opts.Dir) {
			logger.Info("Killing a process left behind", "pid", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
		if err := unmountUnder(n.opts.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeCgroups(n.host.keptCgroups()); err != nil {
		errs = append(errs, err)
	}
	if n.host != nil {
		errs = append(errs, n.host.restore()...)
	}
	if n.unlock != nil {
		n.unlock()
		n.unlock = nil
	}
	return errors.Join(errs...)
}

// removeSandboxes stops and removes every pod sandbox through CRI, as kubelet would, so that the CNI plugins
// tear down each pod's network namespace and veth.
func (n *Node) removeSandboxes(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+n.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("CRI: %w", err)
	}
	defer func() { _ = conn.Close() }()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("CRI ListPodSandbox: %w", err)
	}
	var errs []error
	for _, s := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("CRI StopPodSandbox %s: %w", s.Metadata.GetName(), err))
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("CRI RemovePodSandbox %s: %w", s.Metadata.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

func (h *hostState) restore() []error {
	var errs []error
	for tool, rules := range map[string]string{"iptables": h.iptables, "ip6tables": h.ip6tables} {
		if err := restoreIptables(tool, rules); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.WriteFile(ipForwardFile, []byte(h.ipForward+"\n"), 0o644); err != nil {
		errs = append(errs, err)
	}
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		if out, err := exec.Command("ip", "link", "delete", Bridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("delete bridge %s: %w: %s", Bridge, err, out))
		}
	}
	for _, ns := range dirNames(netnsDir) {
		if !slices.Contains(h.netns, ns) {
			if out, err := exec.Command("ip", "netns", "delete", ns).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("delete network namespace %s: %w: %s", ns, err, out))
			}
		}
	}
	for _, l := range dirNames(logContainersDir) {
		if !slices.Contains(h.logContainers, l) {
			_ = os.Remove(filepath.Join(logContainersDir, l))
		}
	}
	if !h.logContainersExist {
		_ = os.Remove(logContainersDir)
	}
	return errs
}

// Leftovers lists what the node left on the machine after Stop: processes, mounts, cgroups, iptables rules,
// the bridge, network namespaces, ip_forward. Empty means the host is as Start found it.
func (n *Node) Leftovers() []string {
	var out []string
	if n.opts.Dir != "" {
		for _, pid := range processesMentioning(n.opts.Dir) {
			out = append(out, fmt.Sprintf("process %d", pid))
		}
		for _, m := range mountsUnder(n.opts.Dir) {
			out = append(out, "mount "+m)
		}
	}
	for _, c := range kubepodsCgroups(n.host.keptCgroups()) {
		out = append(out, "cgroup "+c)
	}
	if n.host == nil {
		return out
	}
	for tool, before := range map[string]string{"iptables-save": n.host.iptables, "ip6tables-save": n.host.ip6tables} {
		if now, err := iptablesSave(tool); err != nil || now != before {
			out = append(out, tool+" differs from before the node started")
		}
	}
	if fwd, _ := os.ReadFile(ipForwardFile); strings.TrimSpace(string(fwd)) != n.host.ipForward {
		out = append(out, "net.ipv4.ip_forward changed")
	}
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		out = append(out, "bridge "+Bridge)
	}
	for _, ns := range dirNames(netnsDir) {
		if !slices.Contains(n.host.netns, ns) {
			out = append(out, "network namespace "+ns)
		}
	}
	return out
}

// processesNamed returns the PIDs whose command name is name.
func processesNamed(name string) []int {
	var pids []int
	for _, pid := range allPIDs() {
		comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == name {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesMentioning returns the PIDs, other than this process, whose command line contains s.
func processesMentioning(s string) []int {
	var pids []int
	self := os.Getpid()
	for _, pid := range allPIDs() {
		if pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func allPIDs() []int {
	var pids []int
	for _, name := range dirNames("/proc") {
		if pid, err := strconv.Atoi(name); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mountsUnder returns the mount points under dir, deepest first.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			points = append(points, fields[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	return points
}

func unmountUnder(dir string) error {
	var errs []error
	for _, m := range mountsUnder(dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// cgroupRoots are the hierarchies under /sys/fs/cgroup: each v1 controller and the v2 mount, if any.
func cgroupRoots() []string {
	var roots []string
	for _, name := range dirNames("/sys/fs/cgroup") {
		roots = append(roots, filepath.Join("/sys/fs/cgroup", name))
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		roots = []string{"/sys/fs/cgroup"}
	}
	return roots
}

// kubepodsCgroups returns the kubepods cgroups, and containerd's k8s.io cgroups other than keep, that exist.
func kubepodsCgroups(keep []string) []string {
	var out []string
	for _, r := range cgroupRoots() {
		for _, name := range []string{"kubepods", "k8s.io"} {
			p := filepath.Join(r, name)
			if fi, err := os.Stat(p); err == nil && fi.IsDir() && (name == "kubepods" || !slices.Contains(keep, p)) {
				out = append(out, p)
			}
		}
	}
	return out
}

func (h *hostState) keptCgroups() []string {
	if h == nil {
		return nil
	}
	return h.cgroups
}

// removeCgroups kills what still runs in the kubepods trees and removes them, deepest first.
func removeCgroups(keep []string) error {
	var errs []error
	for _, root := range kubepodsCgroups(keep) {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if procs, err := os.ReadFile(filepath.Join(dirs[i], "cgroup.procs")); err == nil {
				for _, f := range strings.Fields(string(procs)) {
					if pid, err := strconv.Atoi(f); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
			var err error
			for range 50 {
				if err = syscall.Rmdir(dirs[i]); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

func runOutput(ctx context.Context, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
