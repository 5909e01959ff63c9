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

package manager

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/scheme"
	"github.com/koord-dev/koord/pkg/features"
	"github.com/koord-dev/koord/pkg/manager/controller/colocationprofile"
	"github.com/koord-dev/koord/pkg/manager/controller/deviceresource"
	"github.com/koord-dev/koord/pkg/manager/controller/nodemetric"
	"github.com/koord-dev/koord/pkg/manager/controller/noderesource"
	"github.com/koord-dev/koord/pkg/manager/controller/nodeslo"
	"github.com/koord-dev/koord/pkg/manager/controller/quotaprofile"
	"github.com/koord-dev/koord/pkg/manager/sloconfig"
	"github.com/koord-dev/koord/pkg/manager/webhook"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// NewScheme returns the scheme koord-manager works with: Kubernetes built-ins and every Koord API group.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	if err := scheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// RESTConfig loads the client configuration from o.Kubeconfig, or in-cluster / $KUBECONFIG / ~/.kube/config
// when it is empty.
func RESTConfig(o Options) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig); err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", o.Kubeconfig, err)
		}
	} else if cfg, err = ctrl.GetConfig(); err != nil {
		return nil, fmt.Errorf("load client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	return cfg, nil
}

// Run builds koord-manager from o and runs it until ctx ends.
func Run(ctx context.Context, o Options) error {
	cfg, err := RESTConfig(o)
	if err != nil {
		return err
	}
	mgr, err := New(ctx, cfg, o)
	if err != nil {
		return err
	}
	logr.FromContextOrDiscard(ctx).Info("Starting koord-manager")
	return mgr.Start(ctx)
}

// New builds koord-manager: the controllers o selects, and the webhooks whose gates are on with their
// certificate and registration in place. Webhook registration happens here, before the manager starts, so
// that the webhook server finds its certificate; it fails when the certificate Secret cannot be written.
func New(ctx context.Context, cfg *rest.Config, o Options) (ctrl.Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	logger := logr.FromContextOrDiscard(ctx)
	features.LogGates(logger, o.FeatureGates, features.ManagerFeatures())
	o.LogIgnoredFlags(logger)
	controllers, _ := o.EnabledControllers()

	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	if o.EnableWebhookServer && o.Webhook.CertDir == "" {
		o.Webhook.CertDir = filepath.Join(os.TempDir(), "koord-manager-webhook-certs")
	}
	mgrOpts := ctrl.Options{
		Scheme:                        s,
		Logger:                        logger,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		LeaderElection:                o.LeaderElection,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
		// controller-runtime checks controller names across the process, not per manager. Ours are fixed and set
		// up once per manager, so the check only forbids building a second manager in one process, as a restart
		// does in the integration tests.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}
	if o.SyncPeriod > 0 {
		mgrOpts.Cache.SyncPeriod = &o.SyncPeriod
	}
	if o.EnablePprof {
		mgrOpts.PprofBindAddress = o.PprofBindAddress
	}
	if o.EnableWebhookServer {
		mgrOpts.WebhookServer = ctrlwebhook.NewServer(ctrlwebhook.Options{Port: o.Webhook.Port, CertDir: o.Webhook.CertDir})
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add health check: %w", err)
	}

	if len(controllers) > 0 {
		if err := setupControllers(mgr, o, controllers); err != nil {
			return nil, err
		}
	}
	logger.Info("Controllers selected", "controllers", controllers)

	if o.EnableWebhookServer {
		if err := setupWebhooks(ctx, mgr, cfg, s, o); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("add readiness check: %w", err)
	}
	return mgr, nil
}

func setupControllers(mgr ctrl.Manager, o Options, controllers []string) error {
	store := sloconfig.NewStore()
	m := registeredMetrics()
	if err := mgr.Add(koordmetrics.LeadingRunnable{Elected: mgr.Elected(), Gauge: m.Leading}); err != nil {
		return fmt.Errorf("add the leading gauge: %w", err)
	}
	if err := sloconfig.SetupLoader(mgr, store, sloconfig.LoaderOptions{Namespace: o.SLOConfigNamespace, Name: o.SLOConfigName, Metrics: m.SLOConfig}); err != nil {
		return fmt.Errorf("set up slo-controller-config loader: %w", err)
	}
	for _, name := range controllers {
		var err error
		switch name {
		case ControllerNodeMetric:
			err = nodemetric.Setup(mgr, store)
		case ControllerNodeSLO:
			err = nodeslo.Setup(mgr, store)
		case ControllerNodeResource:
			err = noderesource.Setup(mgr, noderesource.Options{
				StrategyForNode:         colocationStrategyForNode(mgr.GetLogger(), store),
				ConfigUpdates:           store.Subscribe(),
				ConfigSynced:            store.Synced,
				Clock:                   clock.RealClock{},
				Metrics:                 m.NodeResource,
				UnreportedPodsUsageOnly: !o.UnreportedPodsInMaxUsageRequest,
			})
		case ControllerQuotaProfile:
			err = quotaprofile.Setup(mgr)
		case ControllerDeviceResource:
			err = deviceresource.Setup(mgr)
		case ControllerColocationProfile:
			err = colocationprofile.Setup(mgr, colocationprofile.Options{Clock: clock.RealClock{}, Interval: o.ColocationProfileInterval})
		}
		if err != nil {
			return fmt.Errorf("set up controller %s: %w", name, err)
		}
	}
	return nil
}

// colocationStrategyForNode resolves a node's colocation strategy from the last good configuration. A
// malformed node annotation is logged and ignored; the rest of the strategy still applies.
func colocationStrategyForNode(logger logr.Logger, store *sloconfig.Store) func(*corev1.Node) configuration.ColocationStrategy {
	return func(node *corev1.Node) configuration.ColocationStrategy {
		strategy, err := configuration.ColocationStrategyForNode(store.Get().Colocation, node)
		if err != nil {
			logger.Error(err, "Ignored an invalid colocation override on the node", "node", node.Name)
		}
		return strategy
	}
}

// directClient is a client that reads from the apiserver, for work done before the caches start.
func directClient(cfg *rest.Config, s *runtime.Scheme) (client.Client, error) {
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return c, nil
}

func setupWebhooks(ctx context.Context, mgr ctrl.Manager, cfg *rest.Config, s *runtime.Scheme, o Options) error {
	hooks := webhookHooks(mgr, o)
	server := mgr.GetWebhookServer()
	m := registeredMetrics().Webhook
	for _, h := range hooks {
		server.Register(h.Path, webhook.LimitInFlight(h.Handler, o.WebhookMaxInFlight, m))
	}
	c, err := directClient(cfg, s)
	if err != nil {
		return err
	}
	installer := webhook.NewInstaller(c, o.Webhook, hooks, clock.RealClock{}, m)
	if err := installer.Sync(ctx); err != nil {
		return fmt.Errorf("register webhooks: %w", err)
	}
	if err := mgr.Add(installer); err != nil {
		return fmt.Errorf("add webhook installer: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", server.StartedChecker()); err != nil {
		return fmt.Errorf("add webhook readiness check: %w", err)
	}
	logr.FromContextOrDiscard(ctx).Info("Webhooks registered", "hooks", webhook.HookNames(hooks),
		"mutatingConfiguration", o.Webhook.MutatingConfigName, "validatingConfiguration", o.Webhook.ValidatingConfigName)
	return nil
}
