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

// Package scheduler tests koord-scheduler against a real kube-apiserver: the scheduler is built in-process
// by scheduler.Start from a kubeconfig and the shipped config/scheduler/koord-scheduler-config.yaml, through
// kube-scheduler's own option parsing, config loading and app setup, exactly as the binary builds it (only
// the signal handler and leader election differ).
package scheduler
