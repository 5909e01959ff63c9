//go:build !cgo || !linux

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

import "fmt"

// NVMLAvailable tells whether this build can load NVML (it was built with cgo).
const NVMLAvailable = false

// NewNVML returns a GPULib whose Init says that this koordlet was built without cgo, which go-nvml needs to
// load libnvidia-ml.so.1.
func NewNVML() GPULib { return noNVML{} }

type noNVML struct{}

func (noNVML) Init() error {
	return fmt.Errorf("%w: this koordlet was built without cgo, which loading NVML needs (build it with CGO_ENABLED=1)", ErrUnavailable)
}
func (noNVML) Shutdown() error                { return nil }
func (noNVML) DriverVersion() (string, error) { return "", nil }
func (noNVML) Count() (int, error)            { return 0, nil }
func (noNVML) GPU(int) (GPU, error)           { return GPU{}, fmt.Errorf("no NVML") }
