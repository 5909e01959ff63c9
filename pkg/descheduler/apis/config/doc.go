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

// +k8s:deepcopy-gen=package
// +groupName=descheduler

// Package config holds koord-descheduler's configuration as users write it: Koordinator's
// DeschedulerConfiguration (descheduler/v1alpha2) with its profiles and the arguments of the plugins
// koord-descheduler runs (LowNodeLoad, MigrationController). Field names and JSON tags are Koordinator's, so a
// Koordinator configuration file loads unchanged. There is one version and no internal types: Load decodes a
// file strictly, fills in Koordinator's defaults and validates the result (package validation).
package config
