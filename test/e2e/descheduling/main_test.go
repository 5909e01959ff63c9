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

package descheduling_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/test/testenv"
)

// The loop's timing in the test cluster: reports every 5 s averaged over 10 s, a descheduling round every 5 s,
// a node hot after two rounds in a row.
const (
	// nodes is how many fake nodes the cluster has.
	nodes = 10
	// reportInterval is metricReportIntervalSeconds.
	reportInterval = 5 * time.Second
	// aggregateDuration is metricAggregateDurationSeconds: the window node and pod usage are averaged over.
	aggregateDuration = 10 * time.Second
	// startTimeout bounds the cluster's start.
	startTimeout = 3 * time.Minute
	// highCPU and lowCPU are LowNodeLoad's CPU thresholds, in percent of allocatable: Koordinator's chart's.
	highCPU, lowCPU = 75, 45
)

// deschedulerConfig is koord-descheduler's configuration in the test: Koordinator's chart's, with LowNodeLoad on,
// rounds every 5 s and a node counted hot after 2 abnormal rounds (5 by default). Koordinator's per-workload
// limits (10% of the replicas migrating at once, as many per 5 minutes) are raised to 4, so that the test's one
// Deployment moves in seconds rather than in minutes.
var deschedulerConfig = fmt.Sprintf(`apiVersion: descheduler/v1alpha2
kind: DeschedulerConfiguration
deschedulingInterval: 5s
profiles:
- name: koord-descheduler
  plugins:
    deschedule:
      disabled: [{name: "*"}]
    balance:
      enabled: [{name: LowNodeLoad}]
    evict:
      disabled: [{name: "*"}]
      enabled: [{name: MigrationController}]
  pluginConfig:
  - name: MigrationController
    args:
      apiVersion: descheduler/v1alpha2
      kind: MigrationControllerArgs
      namespaces: {exclude: [kube-system, koordinator-system]}
      maxMigratingPerWorkload: 4
      maxUnavailablePerWorkload: 4
      objectLimiters:
        workload: {duration: 5m, maxMigrating: 8}
  - name: LowNodeLoad
    args:
      apiVersion: descheduler/v1alpha2
      kind: LowNodeLoadArgs
      evictableNamespaces: {exclude: [kube-system, koordinator-system]}
      lowThresholds: {cpu: %d}
      highThresholds: {cpu: %d}
      anomalyCondition: {consecutiveAbnormalities: 2, consecutiveNormalities: 1}
`, lowCPU, highCPU)

// env is the running cluster the tests share.
var env struct {
	c     *cluster.Cluster
	kube  kubernetes.Interface
	koord versioned.Interface
}

// TestMain starts one local cluster for every test of the package and stops it when they are done.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run starts the cluster, runs the tests and stops the cluster, keeping the components' logs when a test failed.
func run(m *testing.M) int {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "koord-e2e-descheduling-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "create a temporary directory: %v\n", err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 {
			_ = os.RemoveAll(tmp)
			return
		}
		fmt.Fprintf(os.Stderr, "the components' logs are kept in %s\n", filepath.Join(tmp, "state", cluster.LogDir))
	}()

	binDir, err := testenv.LocalClusterBinDir(ctx, tmp)
	if err != nil {
		fmt.Fprintf(os.Stderr, "binaries: %v\n", err)
		return 1
	}
	configPath := filepath.Join(tmp, "koord-descheduler.yaml")
	if err := os.WriteFile(configPath, []byte(deschedulerConfig), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "write the descheduler configuration: %v\n", err)
		return 1
	}
	opts := cluster.DefaultOptions()
	opts.BinDir = binDir
	opts.StateDir = filepath.Join(tmp, "state")
	opts.KubeconfigOut = ""
	opts.Nodes = nodes
	opts.ReportInterval = reportInterval
	opts.AggregateDuration = aggregateDuration
	opts.DeschedulerConfig = configPath

	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	c, err := cluster.Start(startCtx, opts, nil)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the local cluster: %v\n", err)
		return 1
	}
	defer func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop the local cluster: %v\n", err)
			code = 1
		}
	}()
	env.c = c
	env.kube = kubernetes.NewForConfigOrDie(c.RESTConfig())
	env.koord = versioned.NewForConfigOrDie(c.RESTConfig())
	code = m.Run()
	if err := c.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "the local cluster failed while the tests ran: %v\n", err)
		code = 1
	}
	return code
}
