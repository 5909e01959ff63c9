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

package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/pkg/monitoring"
	"github.com/koord-dev/koord/pkg/sim"
)

// prometheusName is the Prometheus process, and its binary in the bin directory.
const prometheusName = "prometheus"

// prometheusScrapeInterval is how often the local Prometheus scrapes and evaluates its rules: short, so that a
// query shows a change within seconds.
const prometheusScrapeInterval = "5s"

// serveSimMetrics serves the simulated node agents' metrics at /metrics on the SimMetrics port until the
// cluster stops.
func (c *Cluster) serveSimMetrics(m *sim.Metrics) error {
	reg := prometheus.NewRegistry()
	if err := m.Register(reg); err != nil {
		return fmt.Errorf("register the simulated node agents' metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports.SimMetrics)))
	if err != nil {
		return fmt.Errorf("serve the simulated node agents' metrics: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	c.wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && c.ctx.Err() == nil {
			c.fail(fmt.Errorf("the simulated node agents' metrics server: %w", err))
		}
	})
	c.wg.Go(func() {
		<-c.ctx.Done()
		_ = srv.Close()
	})
	return nil
}

// PrometheusURL is the local Prometheus's address, "" without Options.Monitoring.
func (c *Cluster) PrometheusURL() string {
	if c.ports.Prometheus == 0 {
		return ""
	}
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports.Prometheus))
}

// startPrometheus writes Prometheus's configuration (every component as a scrape target, Koord's alert rules),
// starts it and waits until it is ready.
func (c *Cluster) startPrometheus(ctx context.Context) error {
	dir := filepath.Join(c.runDir, prometheusName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create Prometheus's directory: %w", err)
	}
	rules, err := monitoring.RulesYAML(monitoring.RuleGroups())
	if err != nil {
		return err
	}
	rulesPath := filepath.Join(dir, "koord.rules.yaml")
	if err := writeFile(rulesPath, rules, 0o600); err != nil {
		return err
	}
	config, err := prometheusConfig(c.ports, rulesPath)
	if err != nil {
		return err
	}
	configPath := filepath.Join(dir, "prometheus.yml")
	if err := writeFile(configPath, config, 0o600); err != nil {
		return err
	}
	p, err := c.startProcess(ctx, prometheusName, []string{
		"--config.file=" + configPath,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--storage.tsdb.retention.time=1d",
		"--web.listen-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports.Prometheus)),
	})
	if err != nil {
		return err
	}
	return c.waitReady(ctx, p, httpProbe(c.PrometheusURL()+"/-/ready"))
}

// prometheusConfig is the local Prometheus's configuration: a job per component, named as the component
// (koordlet: the simulated node agents), scraped every prometheusScrapeInterval, and the alert rules of
// rulesPath.
func prometheusConfig(ports Ports, rulesPath string) ([]byte, error) {
	targets := func(ps ...int) []map[string]any {
		addrs := make([]string, 0, len(ps))
		for _, p := range ps {
			addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		}
		return []map[string]any{{"targets": addrs}}
	}
	var managers []int
	for _, r := range ports.ManagerReplicas {
		managers = append(managers, r.Metrics)
	}
	cfg := map[string]any{
		"global":     map[string]any{"scrape_interval": prometheusScrapeInterval, "evaluation_interval": prometheusScrapeInterval},
		"rule_files": []string{rulesPath},
		"scrape_configs": []map[string]any{
			{"job_name": managerName, "static_configs": targets(managers...)},
			{
				"job_name": schedulerName, "scheme": "https", "static_configs": targets(ports.SchedulerReplicas...),
				// koord-scheduler serves its self-signed certificate (--cert-dir).
				"tls_config": map[string]any{"insecure_skip_verify": true},
			},
			{"job_name": "koord-descheduler", "static_configs": targets(ports.Descheduler)},
			{"job_name": "koordlet", "static_configs": targets(ports.SimMetrics)},
		},
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode Prometheus's configuration: %w", err)
	}
	return out, nil
}
