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

package koordlet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/koordlet/cgroup"
)

// TestDeviceReport: koordlet, as its shipped role, reports the devices its --device-file declares as the node's
// Device, owned by the node; a GPU marked unhealthy in the file turns unhealthy in the Device; a file that no
// longer parses leaves the last good report in place.
func TestDeviceReport(t *testing.T) {
	n := newNode(t, nodeConfig{version: cgroup.V1, driver: cgroup.Cgroupfs, cpus: 4, allocatableCPU: "4", memory: 8 << 30})
	file := filepath.Join(t.TempDir(), "devices.yaml")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gpus := func(health1 string) string {
		return `labels: {node.koordinator.sh/gpu-model: A100-SXM4-80GB, node.koordinator.sh/gpu-vendor: nvidia}
devices:
- {type: gpu, id: GPU-0, minor: 0, health: true, resources: {koordinator.sh/gpu-core: "100", koordinator.sh/gpu-memory: 80Gi, koordinator.sh/gpu-memory-ratio: "100"},
   topology: {socketID: -1, nodeID: 0, pcieID: pci0000:00, busID: "0000:10:00.0"}}
- {type: gpu, id: GPU-1, minor: 1, health: ` + health1 + `, resources: {koordinator.sh/gpu-core: "100", koordinator.sh/gpu-memory: 80Gi, koordinator.sh/gpu-memory-ratio: "100"},
   topology: {socketID: -1, nodeID: 0, pcieID: pci0000:00, busID: "0000:11:00.0"}}
- {type: rdma, id: "0000:18:00.0", minor: 0, health: true, resources: {koordinator.sh/rdma: "100"},
   topology: {socketID: -1, nodeID: 0, pcieID: pci0000:00, busID: "0000:18:00.0"}}
`
	}
	write(gpus("true"))
	startAgentWith(t, koordletConfig(t), n, func(o *koordlet.Options) {
		o.DeviceFile = file
		o.DeviceReportInterval = time.Second
	})

	d := &schedulingv1alpha1.Device{}
	health := func() []bool {
		var out []bool
		for _, dev := range d.Spec.Devices {
			out = append(out, dev.Health)
		}
		return out
	}
	eventually(t, "no Device with the file's three devices", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, d)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && len(d.Spec.Devices) == 3, err
	})
	if refs := d.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Node" || refs[0].Name != n.name {
		t.Errorf("owner references %+v, want the node", refs)
	}
	if got := d.Labels[extension.LabelGPUModel]; got != "A100-SXM4-80GB" {
		t.Errorf("gpu-model label %q, want A100-SXM4-80GB", got)
	}
	// Sorted by type, then minor.
	var order []string
	for _, dev := range d.Spec.Devices {
		order = append(order, string(dev.Type)+"/"+dev.UUID)
	}
	if want := []string{"gpu/GPU-0", "gpu/GPU-1", "rdma/0000:18:00.0"}; !slices.Equal(order, want) {
		t.Errorf("devices %v, want %v", order, want)
	}

	write(gpus("false"))
	eventually(t, "GPU 1 did not turn unhealthy", func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: n.name}, d); err != nil {
			return false, err
		}
		h := health()
		return len(h) == 3 && h[0] && !h[1] && h[2], nil
	})

	// A broken file: the Device keeps its devices (checked over a few reports).
	write("devices: [")
	rv := d.ResourceVersion
	time.Sleep(3 * time.Second)
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: n.name}, d); err != nil {
		t.Fatal(err)
	}
	if d.ResourceVersion != rv || len(d.Spec.Devices) != 3 {
		t.Errorf("a broken device file changed the Device: resourceVersion %s → %s, %d devices", rv, d.ResourceVersion, len(d.Spec.Devices))
	}
}
