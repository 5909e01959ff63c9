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

package runtimehooks

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containerd/nri/pkg/api"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/koord-dev/koord/apis/extension"
)

// GPUEnv is the variable that tells the NVIDIA container runtime which GPUs a container sees.
const GPUEnv = "NVIDIA_VISIBLE_DEVICES"

// DefaultHAMiCoreLibrary is where HAMi-core's library is on the node, as Koordinator has it.
const DefaultHAMiCoreLibrary = "/usr/local/vgpu/libvgpu.so"

// hamiLockDir is the directory HAMi-core's containers share their locks in (mounted from the node, as
// Koordinator mounts it).
const hamiLockDir = "/tmp/vgpulock"

// nvidiaControlDevices are the device nodes every container with a GPU needs besides its GPUs'.
var nvidiaControlDevices = []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}

// Devices is how the GPUs koord-scheduler allocated to a pod reach its containers at creation (gate
// GPUEnvInject).
type Devices struct {
	// GPU turns the GPU injection on.
	GPU bool
	// DevRoot is where the node's /dev is; the device nodes of the GPUs are added to a container when they are
	// there (a koordlet that does not see them leaves the devices to the NVIDIA container runtime).
	DevRoot string
	// HAMiCoreLibrary is HAMi-core's library on the node, preloaded into the containers of pods labelled
	// koordinator.sh/gpu-isolation-provider=HAMi-core that share a GPU.
	HAMiCoreLibrary string

	// numbers returns the major and minor numbers of a character device (the node's, by default); tests set it.
	numbers func(path string) (major, minor int64, ok bool)
}

// containerDevices are what a container gets for its pod's devices.
type containerDevices struct {
	env     [][2]string
	devices []*api.LinuxDevice
	mounts  []*api.Mount
}

func (c containerDevices) empty() bool {
	return len(c.env) == 0 && len(c.devices) == 0 && len(c.mounts) == 0
}

func (c containerDevices) adjust(a *api.ContainerAdjustment) {
	for _, kv := range c.env {
		a.AddEnv(kv[0], kv[1])
	}
	for _, d := range c.devices {
		a.AddDevice(d)
	}
	for _, m := range c.mounts {
		a.AddMount(m)
	}
}

// of returns what a container of pod gets for the GPUs in its device-allocated annotation, as Koordinator's
// GPU hook gives it: NVIDIA_VISIBLE_DEVICES with the GPUs' minors; the device nodes of the GPUs and the NVIDIA
// control devices that DevRoot has; and with HAMi-core as the pod's isolation provider, for a share of a GPU
// (gpu-memory-ratio below 100), CUDA_DEVICE_MEMORY_LIMIT (gpu-memory, bytes), CUDA_DEVICE_SM_LIMIT (gpu-core),
// LD_PRELOAD of the library, and the library and HAMi-core's lock directory mounted from the node.
func (d Devices) of(pod *corev1.Pod) (containerDevices, error) {
	var out containerDevices
	if !d.GPU {
		return out, nil
	}
	alloc, err := extension.GetDeviceAllocations(pod.Annotations)
	if err != nil {
		return out, err
	}
	gpus := alloc[extension.DeviceTypeGPU]
	if len(gpus) == 0 {
		return out, nil
	}
	minors := make([]string, 0, len(gpus))
	for _, g := range gpus {
		minors = append(minors, strconv.Itoa(int(g.Minor)))
	}
	out.env = append(out.env, [2]string{GPUEnv, strings.Join(minors, ",")})

	var names []string
	for _, m := range minors {
		names = append(names, "nvidia"+m)
	}
	for _, name := range append(names, nvidiaControlDevices...) {
		if dev, ok := d.deviceNode(name); ok {
			out.devices = append(out.devices, dev)
		}
	}

	if pod.Labels[extension.LabelGPUIsolationProvider] != extension.GPUIsolationProviderHAMICore {
		return out, nil
	}
	res := gpus[0].Resources
	ratio, ok := res[extension.ResourceGPUMemoryRatio]
	if !ok {
		return out, fmt.Errorf("HAMi-core isolation: the allocation of GPU %d has no %s", gpus[0].Minor, extension.ResourceGPUMemoryRatio)
	}
	if ratio.Value() >= 100 {
		// A whole GPU needs no isolation.
		return out, nil
	}
	mem, ok := res[extension.ResourceGPUMemory]
	if !ok {
		return out, fmt.Errorf("HAMi-core isolation: the allocation of GPU %d has no %s", gpus[0].Minor, extension.ResourceGPUMemory)
	}
	out.env = append(out.env, [2]string{"CUDA_DEVICE_MEMORY_LIMIT", strconv.FormatInt(mem.Value(), 10)})
	if core, ok := res[extension.ResourceGPUCore]; ok {
		out.env = append(out.env, [2]string{"CUDA_DEVICE_SM_LIMIT", strconv.FormatInt(core.Value(), 10)})
	}
	out.env = append(out.env, [2]string{"LD_PRELOAD", d.HAMiCoreLibrary})
	for _, path := range []string{d.HAMiCoreLibrary, hamiLockDir} {
		out.mounts = append(out.mounts, &api.Mount{Destination: path, Type: "bind", Source: path, Options: []string{"rbind"}})
	}
	return out, nil
}

// deviceNode describes /dev/name for a container, with the numbers of the node's device, if DevRoot has it.
func (d Devices) deviceNode(name string) (*api.LinuxDevice, bool) {
	numbers := d.numbers
	if numbers == nil {
		numbers = charDeviceNumbers
	}
	major, minor, ok := numbers(filepath.Join(d.DevRoot, name))
	if !ok {
		return nil, false
	}
	return &api.LinuxDevice{Path: "/dev/" + name, Type: "c", Major: major, Minor: minor, FileMode: &api.OptionalFileMode{Value: 0o666}}, true
}

// charDeviceNumbers returns the numbers of the character device at path.
func charDeviceNumbers(path string) (major, minor int64, ok bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return 0, 0, false
	}
	rdev := uint64(st.Rdev) //nolint:unconvert // Rdev is not uint64 on every platform
	return int64(unix.Major(rdev)), int64(unix.Minor(rdev)), true
}
