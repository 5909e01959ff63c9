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

// Package demo is the end-to-end test of `koordctl demo`: it runs a tiny scenario (3 nodes, 4 simulated hours at
// speed 1800, about 30 s of wall time with the cluster's start) through the command's own code, on a local
// cluster made of real parts, and checks the report: the files exist, BE pods ran and completed, nodes offered
// batch CPU, and the cluster's CPU utilization with colocation was above what the LS pods and the system used.
// A second test runs the built-in hot-nodes scenario at speed 120 (30 s) and checks that koord-descheduler
// cooled its two hot nodes under the 75 % threshold through PodMigrationJobs, with the spread of node CPU
// smaller at the end and every service pod running.
//
// The binaries come from $KOORD_BIN_DIR, else the repository's bin/ (`make bin build`); koord-manager and
// koord-scheduler are built into a temporary directory when bin/ lacks them. The tests are in package
// demo_test; this file only documents the package.
package demo
