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

package chart

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	logsapi "k8s.io/component-base/logs/api/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/configuration"
	deschedulerconfig "github.com/koord-dev/koord/pkg/descheduler/apis/config"
	deschedulervalidation "github.com/koord-dev/koord/pkg/descheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/koordlet"
	"github.com/koord-dev/koord/pkg/manager"
	"github.com/koord-dev/koord/pkg/monitoring"
	schedulerconfig "github.com/koord-dev/koord/pkg/scheduler/apis/config"
	// Registers the plugin args of Koord's plugins in kube-scheduler's scheme.
	_ "github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme"
)

// koordinatorValues is a values file written for Koordinator's chart.
func koordinatorValues(t *testing.T) string {
	return filepath.Join(chartDir(t), "ci", "koordinator-values.yaml")
}

func TestLint(t *testing.T) {
	for name, args := range map[string][]string{
		"defaults":                {},
		"koordinator values file": {"-f", koordinatorValues(t)},
	} {
		t.Run(name, func(t *testing.T) {
			if out, err := helm(t, append([]string{"lint", "--strict", chartDir(t)}, args...)...); err != nil {
				t.Errorf("%v\n%s", err, out)
			}
		})
	}
}

// TestSchemaRejectsNonsense: the values schema names what is wrong.
func TestSchemaRejectsNonsense(t *testing.T) {
	tests := map[string]struct {
		set, want string
	}{
		"negative replicas":   {set: "manager.replicas=-1", want: "/manager/replicas"},
		"a typo":              {set: "scheduler.replica=2", want: "'replica' not allowed"},
		"unknown policy":      {set: "webhookConfiguration.failurePolicy.pods=Never", want: "/webhookConfiguration/failurePolicy/pods"},
		"timeout above 30":    {set: "webhookConfiguration.timeoutSeconds=31", want: "/webhookConfiguration/timeoutSeconds"},
		"bad namespace":       {set: "installation.namespace=Koord_System", want: "/installation/namespace"},
		"port out of range":   {set: "koordlet.metrics.port=70000", want: "/koordlet/metrics/port"},
		"string for a switch": {set: "colocation.enable=yes", want: "/colocation/enable"},
		"descheduler typo":    {set: "descheduler.lowNodeLoad.enable=true", want: "'enable' not allowed"},
		"descheduler port 0":  {set: "descheduler.port=0", want: "/descheduler/port"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := helm(t, "template", "koord", chartDir(t), "--set", tc.set)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("--set %s: err %v, want one naming %q", tc.set, err, tc.want)
			}
		})
	}
}

// container returns the first container of a rendered workload.
func container(t *testing.T, obj *unstructured.Unstructured) corev1.Container {
	t.Helper()
	var spec corev1.PodTemplateSpec
	raw, _, _ := unstructured.NestedMap(obj.Object, "spec", "template")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		t.Fatal(err)
	}
	if len(spec.Spec.Containers) == 0 {
		t.Fatalf("%s %s has no containers", obj.GetKind(), obj.GetName())
	}
	return spec.Spec.Containers[0]
}

// TestComponentsParseTheirCommandLines parses the rendered command lines of koord-manager and koordlet with
// their own flag sets, as their main functions do, so that a flag the binaries do not take never ships.
func TestComponentsParseTheirCommandLines(t *testing.T) {
	for name, args := range map[string][]string{"defaults": nil, "koordinator values file": {"-f", koordinatorValues(t)}} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, args...)

			m := container(t, find(t, objs, "Deployment", "koord-manager"))
			mo := manager.DefaultOptions()
			fs := pflag.NewFlagSet("koord-manager", pflag.ContinueOnError)
			mo.AddFlags(fs)
			logsapi.AddFlags(logsapi.NewLoggingConfiguration(), fs)
			if err := fs.Parse(m.Args); err != nil {
				t.Fatalf("koord-manager %v: %v", m.Args, err)
			}
			if err := mo.Validate(); err != nil {
				t.Errorf("koord-manager %v: %v", m.Args, err)
			}
			if !mo.Webhook.OwnedByNamespace || mo.Webhook.ServiceNamespace != "koordinator-system" || !mo.LeaderElection {
				t.Errorf("koord-manager options: owned by namespace %v, service namespace %q, leader election %v",
					mo.Webhook.OwnedByNamespace, mo.Webhook.ServiceNamespace, mo.LeaderElection)
			}

			k := container(t, find(t, objs, "DaemonSet", "koordlet"))
			ko := koordlet.DefaultOptions()
			ko.NodeName = "node-1" // from $NODE_NAME in the pod
			fs = pflag.NewFlagSet("koordlet", pflag.ContinueOnError)
			ko.AddFlags(fs)
			logsapi.AddFlags(logsapi.NewLoggingConfiguration(), fs)
			if err := fs.Parse(koordlet.KoordinatorArgs(fs, k.Args)); err != nil {
				t.Fatalf("koordlet %v: %v", k.Args, err)
			}
			if err := ko.Validate(); err != nil {
				t.Errorf("koordlet %v: %v", k.Args, err)
			}
			if ko.CgroupRoot != "/host-cgroup" {
				t.Errorf("koordlet --cgroup-root = %q, want the host mount /host-cgroup", ko.CgroupRoot)
			}
			if !slices.ContainsFunc(k.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == ko.Prediction.CheckpointDir }) {
				t.Errorf("koordlet --prediction-checkpoint-filepath %s is not a mount: %v", ko.Prediction.CheckpointDir, k.VolumeMounts)
			}
			if !slices.ContainsFunc(k.VolumeMounts, func(m corev1.VolumeMount) bool {
				// No mount propagation: it fails the container on hosts whose /sys is a private mount.
				return ko.ResctrlRoot == m.MountPath+"/resctrl" && m.MountPropagation == nil
			}) {
				t.Errorf("koordlet --resctrl-root %s is not under a mount of the host's /sys/fs without propagation: %v", ko.ResctrlRoot, k.VolumeMounts)
			}
		})
	}
}

// TestKoordinatorValues: what a Koordinator values file sets lands where Koordinator's chart puts it.
func TestKoordinatorValues(t *testing.T) {
	objs := render(t, "-f", koordinatorValues(t))
	m := container(t, find(t, objs, "Deployment", "koord-manager"))
	s := container(t, find(t, objs, "Deployment", "koord-scheduler"))
	ds := container(t, find(t, objs, "Deployment", "koord-descheduler"))
	k := container(t, find(t, objs, "DaemonSet", "koordlet"))
	got := []string{m.Image, s.Image, ds.Image, k.Image}
	want := []string{
		"registry.example.com/koordinator-sh/koord-manager:v1.8.0",
		"registry.example.com/koordinator-sh/koord-scheduler:v1.8.0",
		"registry.example.com/koordinator-sh/koord-descheduler:v1.8.0",
		"registry.example.com/koordinator-sh/koordlet:v1.8.0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	for _, arg := range []string{
		"--feature-gates=PodMutatingWebhook=true,ElasticValidatingWebhook=true,NodeMutatingWebhook=false",
		"--webhook-failure-policy=pods=Ignore,elasticquotas=Ignore,clustercolocationprofiles=Fail,configmaps=Fail",
		"--webhook-timeout-seconds=30", "--v=2",
	} {
		if !slices.Contains(m.Args, arg) {
			t.Errorf("koord-manager args %v lack %s", m.Args, arg)
		}
	}
	if !slices.Contains(k.Args, "--feature-gates=BECPUEvict=true,BEMemoryEvict=true,CgroupReconcile=true,Accelerators=true") {
		t.Errorf("koordlet args %v lack the feature gates", k.Args)
	}
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", "koord-manager").Object, &d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
		t.Errorf("koord-manager replicas = %v, want 1", d.Spec.Replicas)
	}
	for _, o := range objs {
		if o.GetKind() == "PodDisruptionBudget" {
			t.Errorf("PodDisruptionBudget %s rendered for one replica", o.GetName())
		}
	}
}

// TestSLOControllerConfig: colocation is off unless colocation.enable, and sloControllerConfig adds keys that
// koord-manager parses.
func TestSLOControllerConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		args       []string
		wantEnable bool
		wantKeys   []string
	}{
		"defaults":      {wantKeys: []string{configuration.ColocationConfigKey}},
		"colocation on": {args: []string{"--set", "colocation.enable=true"}, wantEnable: true, wantKeys: []string{configuration.ColocationConfigKey}},
		"more keys": {
			args: []string{
				"--set", "colocation.enable=true",
				"--set", "sloControllerConfig.colocation-config.metricReportIntervalSeconds=20",
				"--set", "sloControllerConfig.resource-threshold-config.clusterStrategy.enable=true",
			},
			wantEnable: true,
			wantKeys:   []string{configuration.ColocationConfigKey, "resource-threshold-config"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			cm := find(t, render(t, tc.args...), "ConfigMap", configuration.SLOCtrlConfigMap)
			data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
			keys := make([]string, 0, len(data))
			for k := range data {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if diff := cmp.Diff(tc.wantKeys, keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			cfg, err := configuration.ParseColocationCfg(data[configuration.ColocationConfigKey])
			if err != nil {
				t.Fatalf("koord-manager cannot parse %s: %v\n%s", configuration.ColocationConfigKey, err, data[configuration.ColocationConfigKey])
			}
			if got := cfg.Enable != nil && *cfg.Enable; got != tc.wantEnable {
				t.Errorf("colocation enable = %v, want %v", got, tc.wantEnable)
			}
		})
	}
}

// TestMonitors: the optional ServiceMonitor and PodMonitors render when asked for (the monitoring CRDs are not
// in the test apiserver, so they are checked, not applied).
func TestMonitors(t *testing.T) {
	objs := render(t, "--set", "koordlet.enableServiceMonitor=true", "--set", "manager.monitorEnabled=true", "--set", "scheduler.monitorEnabled=true",
		"--set", "descheduler.monitorEnabled=true")
	find(t, objs, "ServiceMonitor", "koordlet-service-monitor")
	find(t, objs, "Service", "koordlet-service")
	find(t, objs, "PodMonitor", "koord-manager")
	find(t, objs, "PodMonitor", "koord-scheduler")
	find(t, objs, "PodMonitor", "koord-descheduler")
	for _, o := range render(t) {
		if strings.HasPrefix(o.GetAPIVersion(), "monitoring.coreos.com/") {
			t.Errorf("%s %s rendered by default", o.GetKind(), o.GetName())
		}
	}
}

// TestDashboardsAndAlerts: with monitoring on, the chart renders one ConfigMap per dashboard of pkg/monitoring,
// labelled for Grafana's sidecar and holding the dashboard's JSON, and a PrometheusRule with every alert rule;
// neither by default.
func TestDashboardsAndAlerts(t *testing.T) {
	objs := render(t, "--set", "monitoring.dashboards.enabled=true", "--set", "monitoring.prometheusRule.enabled=true",
		"--set", "monitoring.prometheusRule.labels.release=kps")
	for _, d := range monitoring.Dashboards() {
		cm := find(t, objs, "ConfigMap", d.UID+"-dashboard")
		if got := cm.GetLabels()["grafana_dashboard"]; got != "1" {
			t.Errorf("ConfigMap %s: label grafana_dashboard=%q, want 1", cm.GetName(), got)
		}
		data, _, _ := unstructured.NestedString(cm.Object, "data", d.UID+".json")
		var model struct {
			UID    string           `json:"uid"`
			Panels []map[string]any `json:"panels"`
		}
		if err := json.Unmarshal([]byte(data), &model); err != nil {
			t.Errorf("ConfigMap %s: the dashboard is no JSON: %v", cm.GetName(), err)
			continue
		}
		if model.UID != d.UID || len(model.Panels) != len(d.Panels) {
			t.Errorf("ConfigMap %s: dashboard %s with %d panels, want %s with %d", cm.GetName(), model.UID, len(model.Panels), d.UID, len(d.Panels))
		}
	}
	rule := find(t, objs, "PrometheusRule", "koord")
	if got := rule.GetLabels()["release"]; got != "kps" {
		t.Errorf("PrometheusRule label release=%q, want kps", got)
	}
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var exprs []string
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			expr, _, _ := unstructured.NestedString(r.(map[string]any), "expr")
			exprs = append(exprs, expr)
		}
	}
	if diff := cmp.Diff(monitoring.Queries(monitoring.RuleGroups()), exprs); diff != "" {
		t.Errorf("PrometheusRule expressions (-want,+got):\n%s", diff)
	}
	for _, o := range render(t) {
		if o.GetKind() == "PrometheusRule" || strings.HasSuffix(o.GetName(), "-dashboard") {
			t.Errorf("%s %s rendered by default", o.GetKind(), o.GetName())
		}
	}
}

// TestOnAPIServer installs the chart with Koordinator's values, upgrades it and uninstalls it, then applies
// the rendered manifests of each value set with strict server-side field validation. One test, in this
// order: helm install refuses objects that another manager created, and the apply leaves such objects behind.
func TestOnAPIServer(t *testing.T) {
	ctx := t.Context()
	kc := kubeconfig(t)
	ns := "koordinator-system"

	t.Run("helm install, upgrade and uninstall", func(t *testing.T) {
		if out, err := helm(t, "install", "koord", chartDir(t), "--kubeconfig", kc, "-n", "default", "-f", koordinatorValues(t)); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, want := range []struct {
			obj client.Object
			key client.ObjectKey
		}{
			{&corev1.Namespace{}, client.ObjectKey{Name: ns}},
			{&corev1.ConfigMap{}, client.ObjectKey{Namespace: ns, Name: configuration.SLOCtrlConfigMap}},
			{&corev1.Service{}, client.ObjectKey{Namespace: ns, Name: "koordinator-webhook-service"}},
			{&corev1.ServiceAccount{}, client.ObjectKey{Namespace: ns, Name: "koordlet"}},
			{&appsv1.DaemonSet{}, client.ObjectKey{Namespace: ns, Name: "koordlet"}},
			{&appsv1.Deployment{}, client.ObjectKey{Namespace: ns, Name: "koord-manager"}},
			{&appsv1.Deployment{}, client.ObjectKey{Namespace: ns, Name: "koord-scheduler"}},
			{&appsv1.Deployment{}, client.ObjectKey{Namespace: ns, Name: "koord-descheduler"}},
			{&corev1.ConfigMap{}, client.ObjectKey{Namespace: ns, Name: "koord-descheduler-config"}},
			{&corev1.ServiceAccount{}, client.ObjectKey{Namespace: ns, Name: "koord-descheduler"}},
		} {
			if err := env.Client.Get(ctx, want.key, want.obj); err != nil {
				t.Errorf("after helm install: %T %s: %v", want.obj, want.key, err)
			}
		}

		if out, err := helm(t, "upgrade", "koord", chartDir(t), "--kubeconfig", kc, "-n", "default", "-f", koordinatorValues(t),
			"--set", "colocation.enable=true"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: configuration.SLOCtrlConfigMap}, cm); err != nil {
			t.Fatal(err)
		}
		cfg, err := configuration.ParseColocationCfg(cm.Data[configuration.ColocationConfigKey])
		if err != nil || cfg.Enable == nil || !*cfg.Enable {
			t.Errorf("after helm upgrade --set colocation.enable=true: colocation-config %q (%v)", cm.Data[configuration.ColocationConfigKey], err)
		}

		if out, err := helm(t, "uninstall", "koord", "--kubeconfig", kc, "-n", "default"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// There is no kube-controller-manager here to empty the namespace; what Helm deletes itself must be gone.
		for _, name := range []string{"koord-manager", "koord-scheduler", "koord-descheduler", "koordlet"} {
			cr := &unstructured.Unstructured{}
			cr.SetAPIVersion("rbac.authorization.k8s.io/v1")
			cr.SetKind("ClusterRole")
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, cr); !apierrors.IsNotFound(err) {
				t.Errorf("after helm uninstall: ClusterRole %s: %v, want not found", name, err)
			}
		}
		got := &corev1.Namespace{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: ns}, got); err == nil && got.DeletionTimestamp == nil {
			t.Errorf("after helm uninstall: namespace %s is not being deleted", ns)
		}
	})

	for name, args := range map[string][]string{
		"defaults":                {"--set", "installation.namespace=koord-defaults"},
		"koordinator values file": {"-f", koordinatorValues(t), "--set", "installation.namespace=koord-koordinator"},
		"colocation on, extra SLO keys, one replica": {
			"--set", "installation.namespace=koord-custom", "--set", "colocation.enable=true",
			"--set", "sloControllerConfig.resource-threshold-config.clusterStrategy.enable=true",
			"--set", "manager.replicas=1", "--set", "scheduler.replicas=1", "--set", "imagePullSecrets[0].name=registry",
			"--set", "descheduler.replicas=1", "--set", "descheduler.lowNodeLoad.enabled=true",
		},
		"descheduler off": {"--set", "installation.namespace=koord-no-descheduler", "--set", "descheduler.enabled=false"},
	} {
		t.Run("strict apply: "+name, func(t *testing.T) {
			applyStrict(ctx, t, render(t, args...))
		})
	}
}

// TestJobPreemption: scheduler.enableJobPreemption (Koordinator's value, on by default) sets Coscheduling's
// enablePreemption in the configuration koord-scheduler loads.
func TestJobPreemption(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want bool
	}{
		"default":            {want: true},
		"koordinator values": {args: []string{"-f", koordinatorValues(t)}, want: true},
		"off":                {args: []string{"--set", "scheduler.enableJobPreemption=false"}},
	} {
		t.Run(name, func(t *testing.T) {
			cm := find(t, render(t, tc.args...), "ConfigMap", "koord-scheduler-config")
			data, _, _ := unstructured.NestedString(cm.Object, "data", "koord-scheduler-config")
			obj, _, err := kubeschedulerscheme.Codecs.UniversalDecoder().Decode([]byte(data), nil, nil)
			if err != nil {
				t.Fatalf("koord-scheduler cannot load its configuration: %v\n%s", err, data)
			}
			var got *bool
			for _, pc := range obj.(*schedconfig.KubeSchedulerConfiguration).Profiles[0].PluginConfig {
				if args, ok := pc.Args.(*schedulerconfig.CoschedulingArgs); ok {
					got = &args.EnablePreemption
				}
			}
			if got == nil || *got != tc.want {
				t.Errorf("Coscheduling enablePreemption = %v, want %v", got, tc.want)
			}
		})
	}
}

// deschedulerConfig decodes the configuration koord-descheduler loads from the rendered ConfigMap, as
// koord-descheduler does (strictly, with Koordinator's defaults), and validates it.
func deschedulerConfig(t *testing.T, objs []*unstructured.Unstructured) *deschedulerconfig.DeschedulerConfiguration {
	t.Helper()
	cm := find(t, objs, "ConfigMap", "koord-descheduler-config")
	data, _, _ := unstructured.NestedString(cm.Object, "data", "koord-descheduler-config")
	c, err := deschedulerconfig.Decode([]byte(data))
	if err != nil {
		t.Fatalf("koord-descheduler cannot load its configuration: %v\n%s", err, data)
	}
	if err := deschedulervalidation.ValidateDeschedulerConfiguration(c); err != nil {
		t.Fatalf("koord-descheduler refuses its configuration: %v\n%s", err, data)
	}
	return c
}

// TestDescheduler: koord-descheduler is deployed by default, parses its command line, loads the configuration
// its ConfigMap mounts, serves its probes on the port of that configuration's endpoints, leader-elects and
// leaves Koord's own pods alone in the installation namespace, and runs LowNodeLoad only when
// descheduler.lowNodeLoad.enabled says so.
func TestDescheduler(t *testing.T) {
	for name, tc := range map[string]struct {
		args          []string
		wantImage     string
		wantReplicas  int32
		wantNamespace string
		wantPort      int32
		wantBalance   []deschedulerconfig.Plugin
	}{
		"defaults": {
			wantImage: "ghcr.io/koord-dev/koord-descheduler:", wantReplicas: 2,
			wantNamespace: "koordinator-system", wantPort: 10251,
		},
		"koordinator values file": {
			args:      []string{"-f", koordinatorValues(t)},
			wantImage: "registry.example.com/koordinator-sh/koord-descheduler:v1.8.0", wantReplicas: 1,
			wantNamespace: "koordinator-system", wantPort: 10251,
		},
		"LowNodeLoad on": {
			args:      []string{"--set", "descheduler.lowNodeLoad.enabled=true"},
			wantImage: "ghcr.io/koord-dev/koord-descheduler:", wantReplicas: 2,
			wantNamespace: "koordinator-system", wantPort: 10251,
			wantBalance: []deschedulerconfig.Plugin{{Name: deschedulerconfig.LowNodeLoadName}},
		},
		"another namespace and port, LowNodeLoad on": {
			args: []string{
				"--set", "installation.namespace=koord-x", "--set", "descheduler.port=10300",
				"--set", "descheduler.lowNodeLoad.enabled=true", "--set", "descheduler.image.tag=v9",
			},
			wantImage: "ghcr.io/koord-dev/koord-descheduler:v9", wantReplicas: 2,
			wantNamespace: "koord-x", wantPort: 10300,
			wantBalance: []deschedulerconfig.Plugin{{Name: deschedulerconfig.LowNodeLoadName}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			objs := render(t, tc.args...)
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(t, objs, "Deployment", "koord-descheduler").Object, &d); err != nil {
				t.Fatal(err)
			}
			if d.Namespace != tc.wantNamespace || d.Spec.Replicas == nil || *d.Spec.Replicas != tc.wantReplicas {
				t.Errorf("Deployment %s/%s with %v replicas, want %s with %d", d.Namespace, d.Name, d.Spec.Replicas, tc.wantNamespace, tc.wantReplicas)
			}
			if d.Spec.Template.Spec.ServiceAccountName != "koord-descheduler" {
				t.Errorf("serviceAccountName = %q, want koord-descheduler", d.Spec.Template.Spec.ServiceAccountName)
			}
			c := d.Spec.Template.Spec.Containers[0]
			if !strings.HasPrefix(c.Image, tc.wantImage) || strings.HasSuffix(c.Image, ":") {
				t.Errorf("image = %q, want %s...", c.Image, tc.wantImage)
			}

			// The flags of cmd/koord-descheduler/main.go.
			var configFile, kubeconfig string
			fs := pflag.NewFlagSet("koord-descheduler", pflag.ContinueOnError)
			fs.StringVar(&configFile, "config", "", "")
			fs.StringVar(&kubeconfig, "kubeconfig", "", "")
			logsapi.AddFlags(logsapi.NewLoggingConfiguration(), fs)
			if err := fs.Parse(c.Args); err != nil {
				t.Fatalf("koord-descheduler %v: %v", c.Args, err)
			}
			if kubeconfig != "" {
				t.Errorf("--kubeconfig=%s, want the in-cluster config", kubeconfig)
			}
			var mounted string
			for _, m := range c.VolumeMounts {
				for _, v := range d.Spec.Template.Spec.Volumes {
					if v.Name != m.Name || v.ConfigMap == nil || v.ConfigMap.Name != "koord-descheduler-config" {
						continue
					}
					for _, item := range v.ConfigMap.Items {
						if item.Key == "koord-descheduler-config" {
							mounted = filepath.Join(m.MountPath, item.Path)
						}
					}
				}
			}
			if mounted == "" || mounted != configFile {
				t.Errorf("--config=%s, but the ConfigMap's configuration is mounted at %q", configFile, mounted)
			}

			cfg := deschedulerConfig(t, objs)
			wantAddr := fmt.Sprintf("0.0.0.0:%d", tc.wantPort)
			if got := ptr.Deref(cfg.HealthzBindAddress, ""); got != wantAddr || ptr.Deref(cfg.MetricsBindAddress, "") != wantAddr {
				t.Errorf("healthzBindAddress %q, metricsBindAddress %q, want both %s (one server)", got, ptr.Deref(cfg.MetricsBindAddress, ""), wantAddr)
			}
			if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != tc.wantPort {
				t.Errorf("ports %v, want metrics at %d", c.Ports, tc.wantPort)
			}
			for probe, want := range map[string]struct {
				p    *corev1.Probe
				path string
			}{"readiness": {c.ReadinessProbe, "/readyz"}, "liveness": {c.LivenessProbe, "/healthz"}} {
				if want.p == nil || want.p.HTTPGet == nil || want.p.HTTPGet.Path != want.path || want.p.HTTPGet.Port.String() != "metrics" {
					t.Errorf("%s probe %+v, want GET %s at port metrics", probe, want.p, want.path)
				}
			}
			if !ptr.Deref(cfg.LeaderElection.LeaderElect, false) || cfg.LeaderElection.ResourceNamespace != tc.wantNamespace || cfg.LeaderElection.ResourceName != "koord-descheduler" {
				t.Errorf("leader election %+v, want the Lease %s/koord-descheduler", cfg.LeaderElection, tc.wantNamespace)
			}
			if len(cfg.Profiles) != 1 {
				t.Fatalf("%d profiles, want 1", len(cfg.Profiles))
			}
			p := cfg.Profiles[0]
			if diff := cmp.Diff(tc.wantBalance, p.Plugins.Balance.Enabled); diff != "" {
				t.Errorf("balance plugins (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]deschedulerconfig.Plugin{{Name: deschedulerconfig.MigrationControllerName}}, p.Plugins.Evict.Enabled); diff != "" {
				t.Errorf("evict plugins (-want +got):\n%s", diff)
			}
			wantExclude := []string{"kube-system", tc.wantNamespace}
			for _, pc := range p.PluginConfig {
				var ns *deschedulerconfig.Namespaces
				switch args := pc.Args.Object.(type) {
				case *deschedulerconfig.LowNodeLoadArgs:
					ns = args.EvictableNamespaces
				case *deschedulerconfig.MigrationControllerArgs:
					ns = args.Namespaces
				default:
					t.Errorf("plugin config %s: args %T", pc.Name, pc.Args.Object)
					continue
				}
				if ns == nil || !cmp.Equal(wantExclude, ns.Exclude) {
					t.Errorf("%s excludes namespaces %+v, want %v", pc.Name, ns, wantExclude)
				}
			}
		})
	}
}

// TestDeschedulerDisabled: descheduler.enabled=false renders nothing of koord-descheduler, not even its
// PodMonitor when monitoring is asked for.
func TestDeschedulerDisabled(t *testing.T) {
	for _, o := range render(t, "--set", "descheduler.enabled=false", "--set", "descheduler.monitorEnabled=true") {
		if strings.Contains(o.GetName(), "descheduler") {
			t.Errorf("%s %s rendered with descheduler.enabled=false", o.GetKind(), o.GetName())
		}
		if o.GetKind() == "Deployment" && container(t, o).Name == "descheduler" {
			t.Errorf("Deployment %s runs koord-descheduler", o.GetName())
		}
	}
}
