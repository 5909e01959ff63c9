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

package descheduler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"reflect"
	"sync"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	koordclientset "github.com/koord-dev/koord/pkg/client/clientset/versioned"
	koordscheme "github.com/koord-dev/koord/pkg/client/clientset/versioned/scheme"
	koordinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
	"github.com/koord-dev/koord/pkg/descheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/descheduler/framework"
	"github.com/koord-dev/koord/pkg/descheduler/migration"
	"github.com/koord-dev/koord/pkg/descheduler/plugins/lownodeload"
	koordmetrics "github.com/koord-dev/koord/pkg/metrics"
)

// Options are koord-descheduler's command line.
type Options struct {
	// ConfigFile is the DeschedulerConfiguration; empty: Koordinator's defaults.
	ConfigFile string
	// Kubeconfig overrides clientConnection.kubeconfig; both empty: in-cluster, $KUBECONFIG, ~/.kube/config.
	Kubeconfig string
}

// LoadConfig reads, defaults and validates the configuration o names.
func LoadConfig(o Options) (*config.DeschedulerConfiguration, error) {
	var c *config.DeschedulerConfiguration
	var err error
	if o.ConfigFile == "" {
		c, err = config.Decode([]byte("apiVersion: descheduler/v1alpha2\nkind: DeschedulerConfiguration\n"))
	} else {
		c, err = config.LoadFile(o.ConfigFile)
	}
	if err != nil {
		return nil, err
	}
	if err := validation.ValidateDeschedulerConfiguration(c); err != nil {
		return nil, fmt.Errorf("invalid descheduler configuration: %w", err)
	}
	return c, nil
}

// restConfig builds the client configuration from the configuration's clientConnection.
func restConfig(c *config.DeschedulerConfiguration, kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		kubeconfig = c.ClientConnection.Kubeconfig
	}
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
		}
	} else if cfg, err = ctrl.GetConfig(); err != nil {
		return nil, fmt.Errorf("load client configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = c.ClientConnection.QPS, int(c.ClientConnection.Burst)
	return cfg, nil
}

// Run runs koord-descheduler until ctx ends.
func Run(ctx context.Context, o Options) error {
	c, err := LoadConfig(o)
	if err != nil {
		return err
	}
	cfg, err := restConfig(c, o.Kubeconfig)
	if err != nil {
		return err
	}
	mgr, err := New(ctx, cfg, c, clock.RealClock{})
	if err != nil {
		return err
	}
	logr.FromContextOrDiscard(ctx).Info("Starting koord-descheduler", "profiles", len(c.Profiles), "interval", c.DeschedulingInterval.Duration, "dryRun", c.DryRun)
	return mgr.Start(ctx)
}

// NewScheme returns the scheme koord-descheduler works with: Kubernetes built-ins and Koord's kinds.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	if err := koordscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	return s, nil
}

// Metrics are koord-descheduler's metrics, of every package that records any.
type Metrics struct {
	LowNodeLoad *lownodeload.Metrics
	Migration   *migration.Metrics
	// Leading is koord_descheduler_leading.
	Leading prometheus.Gauge
}

// NewMetrics creates them, unregistered.
func NewMetrics() *Metrics {
	return &Metrics{
		LowNodeLoad: lownodeload.NewMetrics(), Migration: migration.NewMetrics(),
		Leading: koordmetrics.NewLeadingGauge(koordmetrics.SubsystemDescheduler, "koord-descheduler", "runs the profiles and the MigrationController"),
	}
}

// Register registers them with reg.
func (m *Metrics) Register(reg prometheus.Registerer) error {
	return errors.Join(m.LowNodeLoad.Register(reg), m.Migration.Register(reg), reg.Register(m.Leading))
}

// registeredMetrics returns koord-descheduler's metrics, registered in controller-runtime's registry (which
// the metrics endpoint serves) on the first call; managers built one after another in a process share them.
var registeredMetrics = sync.OnceValue(func() *Metrics {
	m := NewMetrics()
	// Registration fails only for a name registered twice: a bug caught by this package's tests.
	utilruntime.Must(m.Register(ctrlmetrics.Registry))
	return m
})

// New builds koord-descheduler on a controller-runtime manager: leader election, the health and metrics
// endpoints (one server when the configuration gives both the same address, as Koordinator's chart does),
// the MigrationController, and the profiles, which run in the leader only.
func New(ctx context.Context, cfg *rest.Config, c *config.DeschedulerConfiguration, clk clock.WithTicker) (ctrl.Manager, error) {
	logger := logr.FromContextOrDiscard(ctx)
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	// Koord's kinds are CRDs, which the apiserver serves as JSON only.
	jsonCfg := rest.CopyConfig(cfg)
	jsonCfg.ContentType = runtime.ContentTypeJSON
	kubeCfg := rest.CopyConfig(cfg)
	kubeCfg.ContentType = c.ClientConnection.ContentType
	kubeCfg.AcceptContentTypes = c.ClientConnection.AcceptContentTypes

	metricsOpts := metricsserver.Options{BindAddress: ptr.Deref(c.MetricsBindAddress, ""), ExtraHandlers: map[string]http.Handler{}}
	healthAddr := ptr.Deref(c.HealthzBindAddress, "")
	if healthAddr == metricsOpts.BindAddress {
		checks := map[string]healthz.Checker{"ping": healthz.Ping}
		metricsOpts.ExtraHandlers["/healthz"] = http.StripPrefix("/healthz", &healthz.Handler{Checks: checks})
		metricsOpts.ExtraHandlers["/readyz"] = http.StripPrefix("/readyz", &healthz.Handler{Checks: checks})
		healthAddr = "0"
	}
	if ptr.Deref(c.EnableProfiling, false) {
		metricsOpts.ExtraHandlers["/debug/pprof/"] = http.HandlerFunc(pprof.Index)
		metricsOpts.ExtraHandlers["/debug/pprof/profile"] = http.HandlerFunc(pprof.Profile)
		metricsOpts.ExtraHandlers["/debug/pprof/symbol"] = http.HandlerFunc(pprof.Symbol)
		metricsOpts.ExtraHandlers["/debug/pprof/trace"] = http.HandlerFunc(pprof.Trace)
	}
	le := c.LeaderElection
	mgr, err := ctrl.NewManager(jsonCfg, ctrl.Options{
		Scheme:                        s,
		Logger:                        logger,
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        healthAddr,
		LeaderElection:                ptr.Deref(le.LeaderElect, true),
		LeaderElectionResourceLock:    le.ResourceLock,
		LeaderElectionNamespace:       le.ResourceNamespace,
		LeaderElectionID:              le.ResourceName,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &le.LeaseDuration.Duration,
		RenewDeadline:                 &le.RenewDeadline.Duration,
		RetryPeriod:                   &le.RetryPeriod.Duration,
		Controller:                    ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.Add(koordmetrics.LeadingRunnable{Elected: mgr.Elected(), Gauge: registeredMetrics().Leading}); err != nil {
		return nil, fmt.Errorf("add the leading gauge: %w", err)
	}
	if healthAddr != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return nil, fmt.Errorf("add health check: %w", err)
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return nil, fmt.Errorf("add readiness check: %w", err)
		}
	}

	kube, err := kubernetes.NewForConfig(kubeCfg)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	koord, err := koordclientset.NewForConfig(jsonCfg)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kube.EventsV1()})
	// A RunnableFunc runs in the leader only, the one replica that records events.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		broadcaster.StartRecordingToSink(ctx.Done())
		<-ctx.Done()
		broadcaster.Shutdown()
		return nil
	})); err != nil {
		return nil, fmt.Errorf("add event broadcaster: %w", err)
	}

	d, err := framework.New(ctx, framework.Options{
		Config:         c,
		Registry:       registry(mgr, c, clk),
		Client:         kube,
		Informers:      informers.NewSharedInformerFactory(kube, 0),
		KoordInformers: koordinformers.NewSharedInformerFactory(koord, 0),
		Recorder:       broadcaster.NewRecorder(s, "koord-descheduler"),
		Clock:          clk,
	})
	if err != nil {
		return nil, err
	}
	run := func(ctx context.Context) error {
		// MigrationController filters pods with the manager's cache: the first round waits for it.
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return fmt.Errorf("wait for the manager's cache: %w", ctx.Err())
		}
		return d.Start(logr.NewContext(ctx, logger))
	}
	if err := mgr.Add(manager.RunnableFunc(run)); err != nil {
		return nil, fmt.Errorf("add descheduler: %w", err)
	}
	return mgr, nil
}

// registry builds the plugins koord-descheduler runs. MigrationController is one controller per process: every
// profile that enables it gets the same one, and profiles must configure it alike.
func registry(mgr ctrl.Manager, c *config.DeschedulerConfiguration, clk clock.WithTicker) map[string]framework.PluginFactory {
	var mc *migration.Controller
	var mcArgs *config.MigrationControllerArgs
	return map[string]framework.PluginFactory{
		config.LowNodeLoadName: lownodeload.Factory(registeredMetrics().LowNodeLoad),
		config.MigrationControllerName: func(_ context.Context, obj runtime.Object, _ frameworktypes.Handle) (frameworktypes.Plugin, error) {
			args, ok := obj.(*config.MigrationControllerArgs)
			if !ok {
				return nil, fmt.Errorf("want args of type MigrationControllerArgs, got %T", obj)
			}
			if mc != nil {
				if !reflect.DeepEqual(args, mcArgs) {
					return nil, fmt.Errorf("%s runs once per process: every profile that enables it must give it the same args", config.MigrationControllerName)
				}
				return mc, nil
			}
			var err error
			if mc, err = migration.New(mgr, args, migration.Options{Clock: clk, DryRun: c.DryRun, Metrics: registeredMetrics().Migration}); err != nil {
				return nil, err
			}
			mcArgs = args
			return mc, nil
		},
	}
}
