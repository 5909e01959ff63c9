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

package devices

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// RDMASource finds RDMA NICs under sysRoot (the host's /sys): every device of class/infiniband that is a PCI
// physical function, with its virtual functions. Create it with NewRDMASource.
type RDMASource struct {
	sysRoot string
}

// NewRDMASource returns the RDMA source of sysRoot.
func NewRDMASource(sysRoot string) *RDMASource { return &RDMASource{sysRoot: sysRoot} }

// Name implements Source.
func (s *RDMASource) Name() string { return "rdma" }

// ibMinor is the number at the end of an InfiniBand device name: mlx5_1 is minor 1 (Koordinator's rule for
// Mellanox names), and other drivers' names (irdma0, bnxt_re2) their trailing number.
var ibMinor = regexp.MustCompile(`(\d+)$`)

// Discover implements Source: for each InfiniBand device whose PCI device is not a virtual function (no
// physfn), one rdma device with the PCI address as ID, the name's number as minor, koordinator.sh/rdma 100,
// healthy when every port is ACTIVE, its PCI topology and its SR-IOV virtual functions (virtfn<N>, minor N)
// as one VF group. A machine without class/infiniband has none.
func (s *RDMASource) Discover(ctx context.Context) (Found, error) {
	classDir := filepath.Join(s.sysRoot, "class", "infiniband")
	entries, err := os.ReadDir(classDir)
	if errors.Is(err, fs.ErrNotExist) {
		return Found{}, nil
	}
	if err != nil {
		return Found{}, fmt.Errorf("list RDMA devices: %w", err)
	}
	var found Found
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		dev := filepath.Join(classDir, name, "device")
		if _, err := os.Stat(filepath.Join(dev, "physfn")); err == nil {
			continue // a virtual function: reported under its physical function
		}
		real, err := filepath.EvalSymlinks(dev)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Skipped an RDMA device without a PCI device", "device", name, "err", err)
			continue
		}
		busID := filepath.Base(real)
		if seen[busID] {
			continue // a second InfiniBand device of one PCI function (the first, by name, is the PF's)
		}
		m := ibMinor.FindString(name)
		if m == "" {
			klog.FromContext(ctx).V(2).Info("Skipped an RDMA device whose name has no number", "device", name)
			continue
		}
		minor, _ := strconv.Atoi(m)
		seen[busID] = true
		d := schedulingv1alpha1.DeviceInfo{
			Type:      schedulingv1alpha1.RDMA,
			UUID:      busID,
			Minor:     ptr.To(int32(minor)),
			Health:    portsActive(filepath.Join(classDir, name, "ports")),
			Resources: corev1.ResourceList{extension.ResourceRDMA: *resource.NewQuantity(100, resource.DecimalSI)},
		}
		if topo, err := pciTopology(s.sysRoot, busID); err == nil {
			d.Topology = topo
		} else {
			klog.FromContext(ctx).V(2).Info("Reporting an RDMA device without its PCI topology", "device", name, "err", err)
		}
		if vfs := virtualFunctions(real); len(vfs) > 0 {
			d.VFGroups = []schedulingv1alpha1.VirtualFunctionGroup{{VFs: vfs}}
		}
		found.Devices = append(found.Devices, d)
	}
	slices.SortFunc(found.Devices, func(a, b schedulingv1alpha1.DeviceInfo) int { return cmp.Compare(*a.Minor, *b.Minor) })
	return found, nil
}

// portsActive reports whether every port under dir says ACTIVE in its state ("4: ACTIVE").
func portsActive(dir string) bool {
	ports, err := os.ReadDir(dir)
	if err != nil || len(ports) == 0 {
		return false
	}
	for _, p := range ports {
		b, err := os.ReadFile(filepath.Join(dir, p.Name(), "state"))
		if err != nil || !strings.Contains(string(b), "ACTIVE") {
			return false
		}
	}
	return true
}

// virtualFunctions lists the virtfn<N> links of the PCI device dir, by N.
func virtualFunctions(dir string) []schedulingv1alpha1.VirtualFunction {
	links, _ := filepath.Glob(filepath.Join(dir, "virtfn*"))
	var vfs []schedulingv1alpha1.VirtualFunction
	for _, l := range links {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(l), "virtfn"))
		if err != nil {
			continue
		}
		target, err := filepath.EvalSymlinks(l)
		if err != nil {
			continue
		}
		vfs = append(vfs, schedulingv1alpha1.VirtualFunction{Minor: int32(n), BusID: filepath.Base(target)})
	}
	slices.SortFunc(vfs, func(a, b schedulingv1alpha1.VirtualFunction) int { return cmp.Compare(a.Minor, b.Minor) })
	return vfs
}
