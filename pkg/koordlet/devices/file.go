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
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// FileSource declares devices in a file (--device-file), read at every report, so that tests and demos can
// give a node GPUs and NICs it does not have and change their health. The file is YAML or JSON:
//
//	labels: {node.koordinator.sh/gpu-model: A100-SXM4-80GB}
//	devices:
//	- {type: gpu, id: GPU-0, minor: 0, health: true, resources: {koordinator.sh/gpu-core: "100", ...}, topology: {...}}
type FileSource struct{ path string }

// NewFileSource returns the source of the file at path.
func NewFileSource(path string) *FileSource { return &FileSource{path: path} }

// Name implements Source.
func (s *FileSource) Name() string { return "file" }

// fileContent is the file's schema.
type fileContent struct {
	Labels  map[string]string               `json:"labels,omitempty"`
	Devices []schedulingv1alpha1.DeviceInfo `json:"devices,omitempty"`
}

// Discover implements Source. A file that does not parse, or declares a device without a type or with two
// devices of one type and minor, is an error naming the problem; the reporter then keeps the last good report.
func (s *FileSource) Discover(context.Context) (Found, error) {
	b, err := os.ReadFile(s.path)
	if err != nil {
		return Found{}, fmt.Errorf("--device-file: %w", err)
	}
	var c fileContent
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return Found{}, fmt.Errorf("--device-file %s: %w", s.path, err)
	}
	seen := map[string]bool{}
	for i, d := range c.Devices {
		if d.Type == "" {
			return Found{}, fmt.Errorf("--device-file %s: devices[%d]: type is empty", s.path, i)
		}
		if d.Minor == nil {
			return Found{}, fmt.Errorf("--device-file %s: devices[%d]: minor is missing", s.path, i)
		}
		key := fmt.Sprintf("%s/%d", d.Type, *d.Minor)
		if seen[key] {
			return Found{}, fmt.Errorf("--device-file %s: devices[%d]: a second %s device with minor %d", s.path, i, d.Type, *d.Minor)
		}
		seen[key] = true
	}
	return Found{Devices: c.Devices, Labels: c.Labels}, nil
}
