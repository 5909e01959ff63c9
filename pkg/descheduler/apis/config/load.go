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

package config

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)
)

func init() {
	utilruntime.Must(AddToScheme(scheme))
}

// LoadFile reads a DeschedulerConfiguration from a YAML or JSON file; see Decode.
func LoadFile(path string) (*DeschedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read descheduler configuration: %w", err)
	}
	c, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Decode reads a DeschedulerConfiguration (YAML or JSON, apiVersion descheduler/v1alpha2) strictly: an unknown
// or duplicate field is an error naming it. The arguments of LowNodeLoad and MigrationController are decoded
// into their kinds; other plugins' arguments are kept as they are (enabling such a plugin is refused by
// validation). Defaults are filled in; the result is not validated.
func Decode(data []byte) (*DeschedulerConfiguration, error) {
	obj, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode descheduler configuration: %w", err)
	}
	c, ok := obj.(*DeschedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("decode descheduler configuration: got %s, want %s", gvk, SchemeGroupVersion.WithKind("DeschedulerConfiguration"))
	}
	for i := range c.Profiles {
		for j := range c.Profiles[i].PluginConfig {
			if err := decodeArgs(&c.Profiles[i].PluginConfig[j]); err != nil {
				return nil, fmt.Errorf("profiles[%d].pluginConfig[%d]: %w", i, j, err)
			}
		}
	}
	SetDefaults(c)
	return c, nil
}

// decodeArgs decodes the arguments of a plugin whose Args kind is registered, with its kind as the default
// when the arguments name none.
func decodeArgs(pc *PluginConfig) error {
	gvk := SchemeGroupVersion.WithKind(pc.Name + "Args")
	if !scheme.Recognizes(gvk) {
		return nil
	}
	if len(pc.Args.Raw) == 0 {
		pc.Args.Object = newArgs(pc.Name)
		return nil
	}
	obj, got, err := codecs.UniversalDeserializer().Decode(pc.Args.Raw, &gvk, nil)
	if err != nil {
		return fmt.Errorf("decode args of %s: %w", pc.Name, err)
	}
	if got.GroupKind() != gvk.GroupKind() {
		return fmt.Errorf("args of %s are %s, want %s", pc.Name, got.GroupKind(), gvk.GroupKind())
	}
	pc.Args.Object = obj
	return nil
}
