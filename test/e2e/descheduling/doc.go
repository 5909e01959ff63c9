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

// Package descheduling is the end-to-end test of load-aware descheduling on a local cluster made of real parts
// (pkg/koordctl/cluster) with ten fake nodes: a Deployment made hot on two nodes by the simulated agents is
// spread by koord-descheduler's LowNodeLoad through PodMigrationJobs that reserve room on cool nodes
// (koord-scheduler places the Reservations and then the replacements on them) before they evict. The test
// reports the spread of node CPU usage before and after.
//
// The binaries come from $KOORD_BIN_DIR, else the repository's bin/ (`make bin`; Koord's own are built into a
// temporary directory when bin/ lacks them). The tests are in package descheduling_test; this file only
// documents the package.
package descheduling
