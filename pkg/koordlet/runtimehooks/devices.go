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
	"errors"
	"fmt"
	"os"
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

// Devices is how the GPUs and RDMA NICs koord-scheduler allocated to a pod reach its containers at creation
// (gates GPUEnvInject and RDMADeviceInject).
type Devices struct {
	// GPU turns the GPU injection on (GPUEnvInject).
	GPU bool
	// RDMA turns the RDMA injection on (RDMADeviceInject).
	RDMA bool
	// SysRoot is where the node's /sys is: the RDMA devices' uverbs names and numbers are read there.
	SysRoot string
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

// of returns what a container of pod gets for the devices in its device-allocated annotation: the RDMA part
// (see rdma), and the GPU part, as Koordinator's GPU hook gives it: NVIDIA_VISIBLE_DEVICES with the GPUs' minors; the device nodes of the GPUs and the NVIDIA
// control devices that DevRoot has; and with HAMi-core as the pod's isolation provider, for a share of a GPU
// (gpu-memory-ratio below 100), CUDA_DEVICE_MEMORY_LIMIT (gpu-memory, bytes), CUDA_DEVICE_SM_LIMIT (gpu-core),
// LD_PRELOAD of the library, and the library and HAMi-core's lock directory mounted from the node.
func (d Devices) of(pod *corev1.Pod) (containerDevices, error) {
	var out containerDevices
	if !d.GPU && !d.RDMA {
		return out, nil
	}
	alloc, err := extension.GetDeviceAllocations(pod.Annotations)
	if err != nil {
		return out, err
	}
	var errs []error
	if d.GPU {
		errs = append(errs, d.gpu(pod, alloc, &out))
	}
	if d.RDMA {
		errs = append(errs, d.rdma(alloc, &out))
	}
	return out, errors.Join(errs...)
}

// gpu adds the GPU part of what of returns.
func (d Devices) gpu(pod *corev1.Pod, alloc extension.DeviceAllocations, out *containerDevices) error {
	gpus := alloc[extension.DeviceTypeGPU]
	if len(gpus) == 0 {
		return nil
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
		return nil
	}
	res := gpus[0].Resources
	ratio, ok := res[extension.ResourceGPUMemoryRatio]
	if !ok {
		return fmt.Errorf("HAMi-core isolation: the allocation of GPU %d has no %s", gpus[0].Minor, extension.ResourceGPUMemoryRatio)
	}
	if ratio.Value() >= 100 {
		// A whole GPU needs no isolation.
		return nil
	}
	mem, ok := res[extension.ResourceGPUMemory]
	if !ok {
		return fmt.Errorf("HAMi-core isolation: the allocation of GPU %d has no %s", gpus[0].Minor, extension.ResourceGPUMemory)
	}
	out.env = append(out.env, [2]string{"CUDA_DEVICE_MEMORY_LIMIT", strconv.FormatInt(mem.Value(), 10)})
	if core, ok := res[extension.ResourceGPUCore]; ok {
		out.env = append(out.env, [2]string{"CUDA_DEVICE_SM_LIMIT", strconv.FormatInt(core.Value(), 10)})
	}
	out.env = append(out.env, [2]string{"LD_PRELOAD", d.HAMiCoreLibrary})
	for _, path := range []string{d.HAMiCoreLibrary, hamiLockDir} {
		out.mounts = append(out.mounts, &api.Mount{Destination: path, Type: "bind", Source: path, Options: []string{"rbind"}})
	}
	return nil
}

// rdma adds, for the RDMA NICs allocated to the pod, what Koordinator's RDMA hook gives a container: the
// node's rdma_cm, and the uverbs device of each NIC (by its PCI address, the allocation's id) and of each of its
// virtual functions given to the pod, their numbers read from SysRoot. A device that cannot be found is left
// out and named in the error.
func (d Devices) rdma(alloc extension.DeviceAllocations, out *containerDevices) error {
	nics := alloc[extension.DeviceTypeRDMA]
	if len(nics) == 0 {
		return nil
	}
	var errs []error
	add := func(path, devFile string) {
		major, minor, err := sysfsDeviceNumbers(devFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("device %s: %w", path, err))
			return
		}
		out.devices = append(out.devices, &api.LinuxDevice{Path: path, Type: "c", Major: major, Minor: minor,
			FileMode: &api.OptionalFileMode{Value: 0o666}})
	}
	add("/dev/infiniband/rdma_cm", filepath.Join(d.SysRoot, "class", "misc", "rdma_cm", "dev"))
	for _, nic := range nics {
		busIDs := []string{}
		for _, vf := range nic.VirtualFunctions() {
			busIDs = append(busIDs, vf.BusID)
		}
		busIDs = append(busIDs, nic.ID)
		for _, bus := range busIDs {
			if bus == "" {
				errs = append(errs, fmt.Errorf("RDMA device %d: an allocation without a PCI address", nic.Minor))
				continue
			}
			entries, err := os.ReadDir(filepath.Join(d.SysRoot, "bus", "pci", "devices", bus, "infiniband_verbs"))
			if err == nil && len(entries) == 0 {
				err = errors.New("an empty infiniband_verbs directory")
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("RDMA device %s: no uverbs device in sysfs: %w", bus, err))
				continue
			}
			name := entries[0].Name()
			add("/dev/infiniband/"+name, filepath.Join(d.SysRoot, "class", "infiniband_verbs", name, "dev"))
		}
	}
	return errors.Join(errs...)
}

// sysfsDeviceNumbers reads a sysfs dev file ("231:192").
func sysfsDeviceNumbers(path string) (major, minor int64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	maj, mnr, ok := strings.Cut(strings.TrimSpace(string(b)), ":")
	if !ok {
		return 0, 0, fmt.Errorf("%s: %q is not major:minor", path, b)
	}
	if major, err = strconv.ParseInt(maj, 10, 64); err == nil {
		minor, err = strconv.ParseInt(mnr, 10, 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return major, minor, nil
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
