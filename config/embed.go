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

// Package config embeds the manifests under this directory that a local cluster installs (CRDs, namespace,
// PriorityClasses, the slo-controller-config ConfigMap and the configurations of koord-scheduler and
// koord-descheduler), so that koordctl works from its binary alone. The files stay the source of truth; the
// embedded copy is the one of the build.
package config

import "embed"

// FS holds crd/bases, namespace, priorityclass, manager/slo-controller-config.yaml,
// scheduler/koord-scheduler-config.yaml and descheduler/koord-descheduler-config.yaml, with their paths
// relative to this directory.
//
//go:embed crd/bases/*.yaml namespace/*.yaml priorityclass/*.yaml manager/slo-controller-config.yaml scheduler/koord-scheduler-config.yaml descheduler/koord-descheduler-config.yaml
var FS embed.FS
