//go:build cgo && linux

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
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVMLAvailable tells whether this build can load NVML (it was built with cgo).
const NVMLAvailable = true

// NewNVML returns NVML through go-nvml, loaded from libnvidia-ml.so.1 when Init is called.
func NewNVML() GPULib { return newNVML() }

// newNVML returns NVML through go-nvml with its options, e.g. another library path.
func newNVML(opts ...nvml.LibraryOption) GPULib { return &nvmlLib{lib: nvml.New(opts...)} }

// nvmlLib adapts go-nvml to GPULib.
type nvmlLib struct{ lib nvml.Interface }

func (l *nvmlLib) Init() error {
	switch ret := l.lib.Init(); ret {
	case nvml.SUCCESS:
		return nil
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return fmt.Errorf("%w: %w", ErrUnavailable, errNoNVML)
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return fmt.Errorf("%w: the NVIDIA driver is not loaded", ErrUnavailable)
	default:
		return ret
	}
}

func (l *nvmlLib) Shutdown() error { return asError(l.lib.Shutdown()) }

func (l *nvmlLib) DriverVersion() (string, error) {
	v, ret := l.lib.SystemGetDriverVersion()
	return v, asError(ret)
}

func (l *nvmlLib) Count() (int, error) {
	n, ret := l.lib.DeviceGetCount()
	return n, asError(ret)
}

func (l *nvmlLib) GPU(i int) (GPU, error) {
	d, ret := l.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return GPU{}, fmt.Errorf("GPU %d: handle: %w", i, ret)
	}
	var g GPU
	var errs []error
	var r nvml.Return
	if g.UUID, r = d.GetUUID(); r != nvml.SUCCESS {
		errs = append(errs, fmt.Errorf("uuid: %w", r))
	}
	if g.Minor, r = d.GetMinorNumber(); r != nvml.SUCCESS {
		errs = append(errs, fmt.Errorf("minor number: %w", r))
	}
	mem, r := d.GetMemoryInfo()
	if r != nvml.SUCCESS {
		errs = append(errs, fmt.Errorf("memory: %w", r))
	}
	g.MemoryBytes = int64(mem.Total)
	if pci, r := d.GetPciInfo(); r == nvml.SUCCESS {
		g.BusID = cString(pci.BusId[:])
	}
	g.Name, _ = d.GetName()
	if err := errors.Join(errs...); err != nil {
		return GPU{}, fmt.Errorf("GPU %d: %w", i, err)
	}
	return g, nil
}

// asError is nil for SUCCESS and the Return (an error) otherwise.
func asError(r nvml.Return) error {
	if r == nvml.SUCCESS {
		return nil
	}
	return r
}

// cString reads a NUL-terminated C string.
func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}
