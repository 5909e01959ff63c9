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

// Package demo is `koordctl demo` (`make demo`): it runs a colocation scenario on a local cluster and reports
// what the cluster did.
//
// A Scenario (YAML, loaded strictly by Load and checked by ValidateScenario, which names every wrong field)
// gives the cluster (nodes, capacity, speed of simulated time), the simulated duration and sample interval, the
// latency-sensitive services (LS pods of priority class koord-prod, with a usage profile for the simulated node
// agents, e.g. a diurnal one) and the batch jobs (pods of priority class koord-batch that the scenario's
// ClusterColocationProfile makes BE, so that koord-manager's webhook turns their requests into batch
// resources), each arriving at its time; services and jobs of the mid tier run as koord-mid pods on the mid
// resources koord-manager offers from the simulated agents' peak prediction. examples/README.md documents the format; examples/demo holds the
// shipped scenario, built into koordctl.
//
// Run follows the scenario's Timeline on the simulated node agents' time: it creates the services' pods at the
// start and a Job for each job arrival (Count completions, Parallelism pods at a time), whose pods
// kube-controller-manager's Job controller creates and replaces when lost, and KWOK completes once they ran for
// RunDuration of simulated time (cluster.AnnotationPodCompleteDelay); every sample interval it records a Sample
// from the running cluster: the nodes' usage split into LS (of it mid), BE and system from the agents'
// snapshot, batch-cpu and mid-cpu allocatable from the Nodes' status, the pods from the apiserver and the agents' counters (suppressed
// moments, evictions, LS threshold breaches). WriteReport turns
// the samples into report.html (inline SVG charts drawn by Chart, no scripts, no network), data.csv and a copy
// of the scenario; PrintSummary prints the summary. NewCommand is the cobra command that starts the cluster
// through package cluster, runs the scenario and writes the report, also when Ctrl-C ends it early.
package demo
