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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// pciRoot matches the PCI root (host bridge) in a device's sysfs path, e.g. pci0000:3a.
var pciRoot = regexp.MustCompile(`pci[0-9a-fA-F]{4}:[0-9a-fA-F]{2}`)

// pciTopology places the PCI device busID (domain:bus:device.function, lower case) from sysfs under sysRoot:
// its NUMA node (devices/<busID>/numa_node; -1, a machine without NUMA, is node 0) and its PCIe root, the host
// bridge its sysfs path goes through (Koordinator's pcieID). The socket is not known from PCI: -1, as
// Koordinator reports it.
func pciTopology(sysRoot, busID string) (*schedulingv1alpha1.DeviceTopology, error) {
	dir := filepath.Join(sysRoot, "bus", "pci", "devices", busID)
	b, err := os.ReadFile(filepath.Join(dir, "numa_node"))
	if err != nil {
		return nil, fmt.Errorf("PCI device %s: %w", busID, err)
	}
	node, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("PCI device %s: numa_node %q: %w", busID, strings.TrimSpace(string(b)), err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("PCI device %s: %w", busID, err)
	}
	root := pciRoot.FindString(real)
	if root == "" {
		return nil, fmt.Errorf("PCI device %s: no PCI root in its sysfs path %s", busID, real)
	}
	return &schedulingv1alpha1.DeviceTopology{SocketID: -1, NodeID: int32(max(node, 0)), PCIEID: root, BusID: busID}, nil
}

// normalizeBusID turns an NVML bus ID ("00000000:3B:00.0") into sysfs's form ("0000:3b:00.0").
func normalizeBusID(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	domain, rest, ok := strings.Cut(id, ":")
	if !ok {
		return id
	}
	if len(domain) > 4 {
		domain = domain[len(domain)-4:]
	}
	return domain + ":" + rest
}
