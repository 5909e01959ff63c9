//go:build realnode

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

package realnode

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/pkg/monitoring"
	"github.com/koord-dev/koord/pkg/monitoring/query"
	"github.com/koord-dev/koord/test/realnode/node"
	"github.com/koord-dev/koord/test/testenv"
)

// testKoordletDashboards runs a real Prometheus (bin/prometheus) scraping the node's koordlet every second, with
// the node label the chart's ServiceMonitor adds, and runs every dashboard query that reads koordlet's metrics:
// each returns data whenever koordlet serves every metric it reads and it does not filter by value (the local
// cluster's simulated agents serve only some of them). Prometheus is stopped and its data removed at the end.
func testKoordletDashboards(t *testing.T) {
	var checks []query.Check
	for _, d := range monitoring.Dashboards() {
		for _, p := range d.Panels {
			for _, q := range p.Queries {
				info, err := query.Inspect(q.Expr)
				if err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(info.Metrics, func(m string) bool {
					return strings.HasPrefix(m, "koord_koordlet_") || strings.HasPrefix(m, "koordlet_")
				}) {
					checks = append(checks, query.Check{Where: fmt.Sprintf("dashboard %s, panel %q", d.UID, p.Title), Expr: q.Expr})
				}
			}
		}
	}
	url := startPrometheus(t, net.JoinHostPort(env.node.IP.String(), "9316"))
	client, err := promapi.NewClient(promapi.Config{Address: url})
	if err != nil {
		t.Fatal(err)
	}
	api := promv1.NewAPI(client)
	// rate() needs two scrapes in its window.
	var outcome query.Outcome
	eventually(t, time.Minute, "koordlet's dashboard queries returning data", func(ctx context.Context) (bool, string) {
		if outcome, err = query.Run(ctx, api, checks); err != nil {
			return false, err.Error()
		}
		return len(outcome.Problems) == 0 && len(outcome.WithData) > 0, strings.Join(outcome.Problems, "\n")
	})
	var withData, onlyRun []string
	for _, c := range outcome.WithData {
		withData = append(withData, c.Expr)
	}
	for _, c := range outcome.OnlyRun {
		onlyRun = append(onlyRun, c.Expr)
	}
	t.Logf("%d of koordlet's %d dashboard queries returned data on the real node: %s", len(withData), len(checks), strings.Join(withData, "; "))
	t.Logf("%d ran without data to show (nothing counted yet, a gate off, or a filter): %s", len(onlyRun), strings.Join(onlyRun, "; "))
}

// startPrometheus starts bin/prometheus scraping the koordlet at target every second as job koordlet with
// node=node.Name, waits until it is ready, and returns its URL. It stops when the test ends.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := yaml.Marshal(map[string]any{
		"global": map[string]any{"scrape_interval": "1s", "evaluation_interval": "1s"},
		"scrape_configs": []map[string]any{{
			"job_name": "koordlet",
			"static_configs": []map[string]any{{
				"targets": []string{target}, "labels": map[string]string{"node": node.Name},
			}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logFile, err := os.Create(filepath.Join(env.dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(env.root, "bin", "prometheus"), "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("start Prometheus: %v", err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = logFile.Close()
	})
	url := "http://" + addr
	eventually(t, time.Minute, "Prometheus ready", func(ctx context.Context) (bool, string) {
		select {
		case <-exited:
			t.Fatalf("Prometheus exited: %v (log in %s)", waitErr, logFile.Name())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/-/ready", nil)
		if err != nil {
			return false, err.Error()
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return url
}
