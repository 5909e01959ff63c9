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

// Package explain implements `koordctl explain` (also `kubectl koord explain`): it reads a pod, a node, an
// ElasticQuota or a gang and what Koord's components recorded about it, and tells a person why it is in the
// state it is in — why a pod waits and what would make it fit, how a node's batch and mid resources were
// computed term by term, how a quota's runtime came about, where a gang's members are. Each explanation is a
// plain struct, printed as tables for people or as JSON or YAML for programs.
package explain
