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
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/extension"
	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// GPULib is what the GPU source needs of NVML. NewNVML returns the real one; tests give recorded answers.
type GPULib interface {
	// Init loads and initialises the library: an error wrapping ErrUnavailable when it is not installed.
	Init() error
	// Shutdown releases it.
	Shutdown() error
	// DriverVersion is the driver's version.
	DriverVersion() (string, error)
	// Count is the number of GPUs.
	Count() (int, error)
	// GPU describes the GPU of index i (0 ≤ i < Count).
	GPU(i int) (GPU, error)
}

// GPU is what NVML says of one GPU.
type GPU struct {
	// UUID is NVML's "GPU-..." identifier.
	UUID string
	// Minor is the minor number of /dev/nvidia<minor>.
	Minor int
	// MemoryBytes is the GPU's memory.
	MemoryBytes int64
	// BusID is its PCI address as NVML gives it ("00000000:3B:00.0").
	BusID string
	// Name is the product name, e.g. "NVIDIA A100-SXM4-80GB".
	Name string
}

// GPUSource finds GPUs through a GPULib. Create it with NewGPUSource.
type GPUSource struct {
	lib     GPULib
	sysRoot string

	mu     sync.Mutex
	inited bool
	// known are the GPUs seen healthy, by index: a GPU NVML cannot describe any more is reported unhealthy
	// under what it was.
	known map[int]schedulingv1alpha1.DeviceInfo
}

// NewGPUSource returns the GPU source reading lib, with PCI topology from sysRoot (the host's /sys).
func NewGPUSource(lib GPULib, sysRoot string) *GPUSource {
	return &GPUSource{lib: lib, sysRoot: sysRoot, known: map[int]schedulingv1alpha1.DeviceInfo{}}
}

// Name implements Source.
func (s *GPUSource) Name() string { return "nvml" }

// Discover implements Source: every GPU NVML counts, healthy when NVML describes it; one it cannot describe
// any more (a GPU fallen off the bus) stays reported under its last description with health false and a
// Healthy=False condition saying why, and comes back healthy when NVML describes it again. The labels are the
// vendor, the model (when every GPU is of one) and the driver version.
func (s *GPUSource) Discover(ctx context.Context) (Found, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inited {
		if err := s.lib.Init(); err != nil {
			return Found{}, fmt.Errorf("initialise NVML: %w", err)
		}
		s.inited = true
	}
	n, err := s.lib.Count()
	if err != nil {
		return Found{}, fmt.Errorf("count the GPUs: %w", err)
	}
	var found Found
	models := map[string]bool{}
	for i := range n {
		g, err := s.lib.GPU(i)
		if err != nil {
			last, ok := s.known[i]
			if !ok {
				klog.FromContext(ctx).Error(err, "Could not describe a GPU; it is not reported", "index", i)
				continue
			}
			last = *last.DeepCopy()
			last.Health = false
			last.Conditions = []metav1.Condition{{Type: "Healthy", Status: metav1.ConditionFalse, Reason: "NVMLQueryFailed", Message: err.Error()}}
			found.Devices = append(found.Devices, last)
			continue
		}
		d := schedulingv1alpha1.DeviceInfo{
			Type:   schedulingv1alpha1.GPU,
			UUID:   g.UUID,
			Minor:  ptr.To(int32(g.Minor)),
			Health: true,
			Resources: corev1.ResourceList{
				extension.ResourceGPUCore:        *resource.NewQuantity(100, resource.DecimalSI),
				extension.ResourceGPUMemory:      *resource.NewQuantity(g.MemoryBytes, resource.BinarySI),
				extension.ResourceGPUMemoryRatio: *resource.NewQuantity(100, resource.DecimalSI),
			},
		}
		if g.BusID != "" {
			topo, err := pciTopology(s.sysRoot, normalizeBusID(g.BusID))
			if err != nil {
				klog.FromContext(ctx).V(2).Info("Reporting a GPU without its PCI topology", "uuid", g.UUID, "err", err)
			} else {
				d.Topology = topo
			}
		}
		s.known[i] = d
		found.Devices = append(found.Devices, d)
		models[gpuModel(g.Name)] = true
	}
	if len(found.Devices) == 0 {
		return found, nil
	}
	found.Labels = map[string]string{extension.LabelGPUVendor: "nvidia"}
	if len(models) == 1 {
		for m := range models {
			if m != "" {
				found.Labels[extension.LabelGPUModel] = m
			}
		}
	}
	if v, err := s.lib.DriverVersion(); err == nil && v != "" {
		found.Labels[extension.LabelGPUDriverVersion] = v
	}
	return found, nil
}

// Close shuts NVML down if it was initialised.
func (s *GPUSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.inited {
		return nil
	}
	s.inited = false
	return s.lib.Shutdown()
}

// gpuModel is Koordinator's model label of an NVML product name: without "NVIDIA ", spaces as dashes.
func gpuModel(name string) string {
	return strings.ReplaceAll(strings.TrimSpace(strings.TrimPrefix(name, "NVIDIA ")), " ", "-")
}

// errNoNVML is what NewNVML's library says when it cannot be loaded.
var errNoNVML = errors.New("the NVML library (libnvidia-ml.so.1) is not installed")
