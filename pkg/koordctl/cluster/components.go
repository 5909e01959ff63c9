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
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	deschedulerconfig "github.com/koord-dev/koord/pkg/descheduler/apis/config"
	deschedulervalidation "github.com/koord-dev/koord/pkg/descheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/manager/webhook"
)

// componentStartTimeout bounds how long a component may take to become ready.
const componentStartTimeout = 2 * time.Minute

// managerArgs are koord-manager's flags in a local cluster: the administrator kubeconfig, webhooks registered
// by URL on 127.0.0.1 (at urlPort, a proxy's, when it is not 0), metrics (unless metricsPort is 0) and probes
// on 127.0.0.1, and leader election only when several replicas run.
func managerArgs(kubeconfig, certDir string, webhookPort, urlPort, healthPort, metricsPort int, leaderElect bool, extra []string) []string {
	metrics := "0"
	if metricsPort != 0 {
		metrics = net.JoinHostPort("127.0.0.1", strconv.Itoa(metricsPort))
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--webhook-host=127.0.0.1",
		"--webhook-port=" + strconv.Itoa(webhookPort),
		"--webhook-cert-dir=" + certDir,
		"--leader-elect=" + strconv.FormatBool(leaderElect),
		"--metrics-bind-address=" + metrics,
		"--health-probe-bind-address=" + net.JoinHostPort("127.0.0.1", strconv.Itoa(healthPort)),
	}
	if urlPort != 0 {
		args = append(args, "--webhook-url-port="+strconv.Itoa(urlPort))
	}
	return append(args, extra...)
}

// schedulerArgs are koord-scheduler's flags in a local cluster: its configuration, secure serving on
// 127.0.0.1:port, the administrator kubeconfig for delegated authentication and authorization, and /metrics
// open to anonymous requests (as the probes are) for the local Prometheus.
func schedulerArgs(config, kubeconfig, certDir string, port int) []string {
	return []string{
		"--config=" + config,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
	}
}

// SchedulerConfig returns the KubeSchedulerConfiguration data with clientConnection.kubeconfig set to
// kubeconfig and leader election off, for a scheduler outside the cluster that is the only one.
func SchedulerConfig(data []byte, kubeconfig string) ([]byte, error) {
	return schedulerConfig(data, kubeconfig, false)
}

// schedulerConfig returns the KubeSchedulerConfiguration data with clientConnection.kubeconfig set to
// kubeconfig, and leader election as the file has it when leaderElect (for several replicas), else off.
func schedulerConfig(data []byte, kubeconfig string, leaderElect bool) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("decode scheduler configuration: %w", err)
	}
	if kind, _ := cfg["kind"].(string); kind != "KubeSchedulerConfiguration" {
		return nil, fmt.Errorf("scheduler configuration: kind is %q, want KubeSchedulerConfiguration", kind)
	}
	if v, _ := cfg["apiVersion"].(string); v != "kubescheduler.config.k8s.io/v1" {
		return nil, fmt.Errorf("scheduler configuration: apiVersion is %q, want kubescheduler.config.k8s.io/v1", v)
	}
	if leaderElect {
		le, _ := cfg["leaderElection"].(map[string]any)
		if le == nil {
			le = map[string]any{}
		}
		le["leaderElect"] = true
		cfg["leaderElection"] = le
		setKubeconfig(cfg, kubeconfig)
	} else {
		runAlone(cfg, kubeconfig)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode scheduler configuration: %w", err)
	}
	return out, nil
}

// runAlone sets, in a component configuration of the kube-scheduler kind (KubeSchedulerConfiguration,
// DeschedulerConfiguration), clientConnection.kubeconfig to kubeconfig and turns leader election off: the
// component runs outside the cluster and is the only one.
func runAlone(cfg map[string]any, kubeconfig string) {
	le, _ := cfg["leaderElection"].(map[string]any)
	if le == nil {
		le = map[string]any{}
	}
	le["leaderElect"] = false
	cfg["leaderElection"] = le
	setKubeconfig(cfg, kubeconfig)
}

// setKubeconfig sets clientConnection.kubeconfig in a component configuration of the kube-scheduler kind.
func setKubeconfig(cfg map[string]any, kubeconfig string) {
	cc, _ := cfg["clientConnection"].(map[string]any)
	if cc == nil {
		cc = map[string]any{}
	}
	cc["kubeconfig"] = kubeconfig
	cfg["clientConnection"] = cc
}

// DeschedulerConfig returns the DeschedulerConfiguration data adapted to a descheduler outside the cluster
// that is the only one: clientConnection.kubeconfig set to kubeconfig, leader election off, /healthz, /readyz
// and /metrics on bindAddress. With lowNodeLoad, every profile also enables LowNodeLoad at the balance
// extension point (the shipped configuration has it configured but off). The result is decoded and validated
// as koord-descheduler would, so a configuration it would refuse fails here, naming what is wrong.
func DeschedulerConfig(data []byte, kubeconfig, bindAddress string, lowNodeLoad bool) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("decode descheduler configuration: %w", err)
	}
	if kind, _ := cfg["kind"].(string); kind != "DeschedulerConfiguration" {
		return nil, fmt.Errorf("descheduler configuration: kind is %q, want DeschedulerConfiguration", kind)
	}
	runAlone(cfg, kubeconfig)
	cfg["healthzBindAddress"] = bindAddress
	cfg["metricsBindAddress"] = bindAddress
	if lowNodeLoad {
		profiles, _ := cfg["profiles"].([]any)
		if len(profiles) == 0 {
			return nil, errors.New("descheduler configuration: no profiles to enable LowNodeLoad in")
		}
		for i, p := range profiles {
			profile, _ := p.(map[string]any)
			if profile == nil {
				return nil, fmt.Errorf("descheduler configuration: profiles[%d] is not an object", i)
			}
			enableBalancePlugin(profile, deschedulerconfig.LowNodeLoadName)
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode descheduler configuration: %w", err)
	}
	decoded, err := deschedulerconfig.Decode(out)
	if err != nil {
		return nil, err
	}
	if err := deschedulervalidation.ValidateDeschedulerConfiguration(decoded); err != nil {
		return nil, fmt.Errorf("descheduler configuration: %w", err)
	}
	return out, nil
}

// enableBalancePlugin enables the plugin name at the balance extension point of profile: it is added to
// plugins.balance.enabled and taken out of plugins.balance.disabled, where a "*" stays (disabling the
// defaults).
func enableBalancePlugin(profile map[string]any, name string) {
	plugins, _ := profile["plugins"].(map[string]any)
	if plugins == nil {
		plugins = map[string]any{}
	}
	balance, _ := plugins["balance"].(map[string]any)
	if balance == nil {
		balance = map[string]any{}
	}
	named := func(p any) bool {
		m, _ := p.(map[string]any)
		return m != nil && m["name"] == name
	}
	disabled, _ := balance["disabled"].([]any)
	balance["disabled"] = slices.DeleteFunc(slices.Clone(disabled), named)
	enabled, _ := balance["enabled"].([]any)
	if !slices.ContainsFunc(enabled, named) {
		enabled = append(enabled, map[string]any{"name": name})
	}
	balance["enabled"] = enabled
	plugins["balance"] = balance
	profile["plugins"] = plugins
}

// probe is a readiness check: nil when ready.
type probe func(ctx context.Context) error

// httpProbe checks that GET url answers 200. TLS certificates are not verified: the components serve
// self-signed certificates on 127.0.0.1 and the probe only asks whether they answer.
func httpProbe(url string) probe {
	hc := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // local health probe
	}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}

// webhookConfigurationsProbe checks that koord-manager's webhook configurations exist.
func webhookConfigurationsProbe(kube kubernetes.Interface) probe {
	names := webhook.DefaultOptions()
	return func(ctx context.Context) error {
		if _, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, names.MutatingConfigName, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("mutating webhook configuration %s: %w", names.MutatingConfigName, err)
		}
		if _, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, names.ValidatingConfigName, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("validating webhook configuration %s: %w", names.ValidatingConfigName, err)
		}
		return nil
	}
}

// waitReady polls the probes, in order, until all pass, and remembers them for Restart. It fails when p exits, when the cluster fails, or
// after componentStartTimeout, with the last probe error and the end of p's log.
func (c *Cluster) waitReady(ctx context.Context, p *process, probes ...probe) error {
	p.ready = probes
	ctx, cancel := context.WithTimeout(ctx, componentStartTimeout)
	defer cancel()
	var last error
	for {
		last = nil
		for _, pr := range probes {
			if last = pr(ctx); last != nil {
				break
			}
		}
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return p.exitError()
		case <-c.failed:
			return c.Err()
		case <-ctx.Done():
			err := ctx.Err()
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("not ready within %s", componentStartTimeout)
			}
			return fmt.Errorf("%s: %w (last check: %w); last lines of %s:\n%s", p.name, err, last, p.logPath, tail(p.logPath, tailLines))
		case <-c.clock.After(200 * time.Millisecond):
		}
	}
}

// startManager starts koord-manager's replicas and waits until each is ready and the webhooks are registered.
// With several replicas, a proxy on the webhook port stands for the webhook Service in front of them.
func (c *Cluster) startManager(ctx context.Context, kube kubernetes.Interface) error {
	n := c.opts.replicas()
	urlPort := 0
	if n > 1 {
		backends := make([]string, n)
		for r, ports := range c.ports.ManagerReplicas {
			backends[r] = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports.Webhook))
		}
		proxy, err := startTCPProxy(net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports.Webhook)), backends)
		if err != nil {
			return fmt.Errorf("webhook proxy for %d koord-manager replicas: %w", n, err)
		}
		c.proxy, urlPort = proxy, c.ports.Webhook
	}
	for r, ports := range c.ports.ManagerReplicas {
		name := replicaName(managerName, r)
		args := managerArgs(c.kubeconfigPath, filepath.Join(c.runDir, name), ports.Webhook, urlPort, ports.Health, ports.Metrics, n > 1, c.opts.ManagerArgs)
		p, err := c.startBinary(ctx, name, managerName, args, n > 1)
		if err != nil {
			return err
		}
		ready := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ports.Health)) + "/readyz"
		if err := c.waitReady(ctx, p, httpProbe(ready), webhookConfigurationsProbe(kube)); err != nil {
			return err
		}
	}
	return nil
}

// startScheduler writes koord-scheduler's configuration, starts its replicas and waits until each answers
// /healthz.
func (c *Cluster) startScheduler(ctx context.Context, base []byte) error {
	n := c.opts.replicas()
	data, err := schedulerConfig(base, c.kubeconfigPath, n > 1)
	if err != nil {
		return err
	}
	path := filepath.Join(c.runDir, schedulerName+".yaml")
	if err := writeFile(path, data, 0o600); err != nil {
		return err
	}
	for r, port := range c.ports.SchedulerReplicas {
		name := replicaName(schedulerName, r)
		p, err := c.startBinary(ctx, name, schedulerName, schedulerArgs(path, c.kubeconfigPath, filepath.Join(c.runDir, name), port), n > 1)
		if err != nil {
			return err
		}
		healthz := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/healthz"
		if err := c.waitReady(ctx, p, httpProbe(healthz)); err != nil {
			return err
		}
	}
	return nil
}

// startDescheduler writes koord-descheduler's configuration, starts it and waits until /readyz answers.
func (c *Cluster) startDescheduler(ctx context.Context, base []byte) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ports.Descheduler))
	data, err := DeschedulerConfig(base, c.kubeconfigPath, addr, c.opts.DeschedulerLowNodeLoad)
	if err != nil {
		return err
	}
	path := filepath.Join(c.runDir, "koord-descheduler.yaml")
	if err := writeFile(path, data, 0o600); err != nil {
		return err
	}
	p, err := c.startProcess(ctx, "koord-descheduler", append([]string{"--config=" + path}, c.opts.DeschedulerArgs...))
	if err != nil {
		return err
	}
	return c.waitReady(ctx, p, httpProbe("http://"+addr+"/readyz"))
}

// controllerManagerArgs are kube-controller-manager's flags in a local cluster: the administrator kubeconfig
// for every controller, secure serving on 127.0.0.1:port, no leader election. The node lifecycle controller is
// off: the simulated nodes' health is KWOK's, and under load (a thousand nodes on two cores) a late heartbeat
// would taint the nodes and evict their pods.
func controllerManagerArgs(kubeconfig, certDir string, port int) []string {
	return append(kubeComponentArgs(kubeconfig, certDir, port),
		"--use-service-account-credentials=false",
		"--controllers=*,-nodelifecycle,-nodeipam",
		"--kube-api-qps=200",
		"--kube-api-burst=400",
	)
}

// kubeComponentArgs are the flags kube-controller-manager and kube-scheduler share in a local cluster: the
// administrator kubeconfig for the API and for delegated authentication and authorization, secure serving on
// 127.0.0.1:port, no leader election.
func kubeComponentArgs(kubeconfig, certDir string, port int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		"--leader-elect=false",
	}
}

// defaultSchedulerArgs are kube-scheduler's flags in a local cluster: its default profile (default-scheduler),
// the administrator kubeconfig, secure serving on 127.0.0.1:port, no leader election.
func defaultSchedulerArgs(kubeconfig, certDir string, port int) []string {
	return kubeComponentArgs(kubeconfig, certDir, port)
}

// startKubeComponents starts kube-controller-manager and kube-scheduler (default-scheduler), so that
// Deployments, Jobs, CronJobs, namespace deletion and garbage collection work as on any cluster, and waits
// until both answer /healthz.
func (c *Cluster) startKubeComponents(ctx context.Context) error {
	kcm, err := c.startProcess(ctx, "kube-controller-manager",
		controllerManagerArgs(c.kubeconfigPath, filepath.Join(c.runDir, "kube-controller-manager"), c.ports.ControllerManager))
	if err != nil {
		return err
	}
	sched, err := c.startProcess(ctx, "kube-scheduler",
		defaultSchedulerArgs(c.kubeconfigPath, filepath.Join(c.runDir, "kube-scheduler"), c.ports.DefaultScheduler))
	if err != nil {
		return err
	}
	healthz := func(port int) probe {
		return httpProbe("https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + "/healthz")
	}
	if err := c.waitReady(ctx, kcm, healthz(c.ports.ControllerManager)); err != nil {
		return err
	}
	return c.waitReady(ctx, sched, healthz(c.ports.DefaultScheduler))
}
