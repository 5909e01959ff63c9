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

package demo

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/config"
)

// schedulerConfigFile is koord-scheduler's configuration under a config directory.
const schedulerConfigFile = "scheduler/koord-scheduler-config.yaml"

// loadAwarePlugin is the name of koord-scheduler's load-aware plugin in its configuration.
const loadAwarePlugin = "LoadAwareScheduling"

// SchedulerConfig returns koord-scheduler's configuration for a demo: the shipped one (from configDir when set,
// else the copy built into koordctl) with allowCustomizeEstimation turned on in every LoadAwareScheduling
// plugin config, so that the plugin takes the scaling factors the scenario's pods carry (see
// estimatedScalingFactors). It fails when no profile configures LoadAwareScheduling.
func SchedulerConfig(configDir string) ([]byte, error) {
	var fsys fs.FS = config.FS
	if configDir != "" {
		fsys = os.DirFS(configDir)
	}
	data, err := fs.ReadFile(fsys, schedulerConfigFile)
	if err != nil {
		return nil, fmt.Errorf("read the scheduler configuration: %w", err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("parse %s: %w", schedulerConfigFile, err)
	}
	found := false
	profiles, _ := cfg["profiles"].([]any)
	for _, p := range profiles {
		profile, _ := p.(map[string]any)
		pluginConfigs, _ := profile["pluginConfig"].([]any)
		for _, pc := range pluginConfigs {
			entry, _ := pc.(map[string]any)
			if entry == nil || entry["name"] != loadAwarePlugin {
				continue
			}
			args, _ := entry["args"].(map[string]any)
			if args == nil {
				args = map[string]any{}
				entry["args"] = args
			}
			args["allowCustomizeEstimation"] = true
			found = true
		}
	}
	if !found {
		return nil, fmt.Errorf("%s: no profile has a pluginConfig for %s", schedulerConfigFile, loadAwarePlugin)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode the scheduler configuration: %w", err)
	}
	return out, nil
}

// writeSchedulerConfig writes SchedulerConfig(configDir) to a file in dir and returns its path.
func writeSchedulerConfig(dir, configDir string) (string, error) {
	data, err := SchedulerConfig(configDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, "demo-scheduler-config.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("write the scheduler configuration: %w", err)
	}
	return path, nil
}
