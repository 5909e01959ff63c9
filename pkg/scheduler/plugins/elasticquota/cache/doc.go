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

// Package cache holds the state of the ElasticQuota plugin, apart from its scheduling decisions: the quotas
// built from ElasticQuota objects and arranged in trees by their parent labels, the pods charged to each
// quota (their requests, and the used resources of those assigned to nodes), the cluster's allocatable
// resources, and the runtime quota of every quota, computed top-down from those and recomputed only when one
// of its inputs changed. The plugin asks it to admit pods and to pick the pods an over-used quota should give
// back; it never talks to the API server.
package cache
