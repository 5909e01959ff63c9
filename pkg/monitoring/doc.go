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

// Package monitoring defines Koord's Grafana dashboards and Prometheus alert rules. The chart's files
// (charts/koord/files/dashboards/*.json and charts/koord/files/alerts/koord.rules.yaml) are generated from
// them by "go test ./pkg/monitoring -update" (make generate); the package's tests fail when those files are
// stale, when a query does not parse as PromQL, or when it names a metric no component serves.
package monitoring
