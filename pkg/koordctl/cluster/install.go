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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/koord-dev/koord/apis/configuration"
	koordconfig "github.com/koord-dev/koord/config"
)

// Paths in the config directory (or the copy built into the binary).
const (
	crdDir                = "crd/bases"
	namespaceDir          = "namespace"
	priorityClassDir      = "priorityclass"
	sloConfigFile         = "manager/slo-controller-config.yaml"
	schedulerConfigFile   = "scheduler/koord-scheduler-config.yaml"
	deschedulerConfigFile = "descheduler/koord-descheduler-config.yaml"
)

// manifests returns the config directory to install from: dir when set, else the copy built into the binary.
func manifests(dir string) fs.FS {
	if dir != "" {
		return os.DirFS(dir)
	}
	return koordconfig.FS
}

// readObjects decodes every YAML document of the .yaml files directly in dir of fsys, in file-name order.
func readObjects(fsys fs.FS, dir string) ([]*unstructured.Unstructured, error) {
	files, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no manifests in %s", dir)
	}
	var out []*unstructured.Unstructured
	for _, name := range files {
		objs, err := readFileObjects(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// readFileObjects decodes every YAML document of the file name in fsys.
func readFileObjects(fsys fs.FS, name string) ([]*unstructured.Unstructured, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		if len(obj.Object) == 0 {
			continue // an empty document, e.g. only comments
		}
		out = append(out, obj)
	}
}

// readCRDs decodes the CustomResourceDefinitions of crd/bases.
func readCRDs(fsys fs.FS) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	objs, err := readObjects(fsys, crdDir)
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
	for _, o := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		data, err := json.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("encode CRD %s: %w", o.GetName(), err)
		}
		if err := json.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("decode CRD %s: %w", o.GetName(), err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// SLOConfig are the changes a local cluster makes to the shipped slo-controller-config.
type SLOConfig struct {
	// ReportInterval is metricReportIntervalSeconds.
	ReportInterval time.Duration
	// DegradeTime is degradeTimeMinutes; zero keeps the file's value.
	DegradeTime time.Duration
	// AggregateDuration is metricAggregateDurationSeconds; zero keeps the file's value.
	AggregateDuration time.Duration
	// Mid are the mid settings; unset fields keep the file's values.
	Mid MidSettings
}

// MidSettings are colocation-config's settings of the mid tier; a nil field keeps the file's value.
type MidSettings struct {
	// UnallocatedPercent is midUnallocatedPercent: the share of the resources the prod pods do not request
	// offered as mid besides the predicted reclaimable.
	UnallocatedPercent *int64
	// CPUThresholdPercent is midCPUThresholdPercent: mid-cpu's cap, in percent of the node's CPU.
	CPUThresholdPercent *int64
	// MemoryThresholdPercent is midMemoryThresholdPercent: mid-memory's cap, in percent of the node's memory.
	MemoryThresholdPercent *int64
}

// LocalSLOConfig returns the slo-controller-config ConfigMap of fsys with colocation on: colocation-config's
// enable true, metricReportIntervalSeconds and (when set) degradeTimeMinutes, metricAggregateDurationSeconds and
// the mid settings from c, and resource-threshold-
// config's cluster strategy enabled, so that BE CPU suppression applies. The result parses and validates as
// koord-manager's loader does.
func LocalSLOConfig(fsys fs.FS, c SLOConfig) (*corev1.ConfigMap, error) {
	data, err := fs.ReadFile(fsys, sloConfigFile)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", sloConfigFile, err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, cm); err != nil {
		return nil, fmt.Errorf("decode %s: %w", sloConfigFile, err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}

	colocation := &configuration.ColocationCfg{}
	if raw := cm.Data[configuration.ColocationConfigKey]; raw != "" {
		if colocation, err = configuration.ParseColocationCfg(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", sloConfigFile, err)
		}
	}
	colocation.Enable = ptr.To(true)
	colocation.MetricReportIntervalSeconds = ptr.To(int64(c.ReportInterval / time.Second))
	if c.DegradeTime > 0 {
		colocation.DegradeTimeMinutes = ptr.To(int64(c.DegradeTime / time.Minute))
	}
	if c.AggregateDuration > 0 {
		colocation.MetricAggregateDurationSeconds = ptr.To(int64(c.AggregateDuration / time.Second))
	}
	for _, m := range []struct{ from, to **int64 }{
		{&c.Mid.UnallocatedPercent, &colocation.MidUnallocatedPercent},
		{&c.Mid.CPUThresholdPercent, &colocation.MidCPUThresholdPercent},
		{&c.Mid.MemoryThresholdPercent, &colocation.MidMemoryThresholdPercent},
	} {
		if *m.from != nil {
			*m.to = ptr.To(**m.from)
		}
	}
	if errs := configuration.ValidateColocationCfg(field.NewPath(configuration.ColocationConfigKey), colocation); len(errs) > 0 {
		return nil, fmt.Errorf("colocation settings: %w", errs.ToAggregate())
	}

	threshold := &configuration.ResourceThresholdCfg{}
	if raw := cm.Data[configuration.ResourceThresholdConfigKey]; raw != "" {
		if threshold, err = configuration.ParseResourceThresholdCfg(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", sloConfigFile, err)
		}
	}
	if threshold.ClusterStrategy == nil {
		threshold.ClusterStrategy = configuration.DefaultResourceThresholdStrategy()
	}
	threshold.ClusterStrategy.Enable = ptr.To(true)
	if errs := configuration.ValidateResourceThresholdCfg(field.NewPath(configuration.ResourceThresholdConfigKey), threshold); len(errs) > 0 {
		return nil, fmt.Errorf("resource threshold settings: %w", errs.ToAggregate())
	}

	for key, v := range map[string]any{configuration.ColocationConfigKey: colocation, configuration.ResourceThresholdConfigKey: threshold} {
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", key, err)
		}
		cm.Data[key] = string(out)
	}
	return cm, nil
}

// install creates the CRDs (and waits until they are served), the namespace, the PriorityClasses and the
// slo-controller-config of fsys, with colocation on.
func install(ctx context.Context, cfg *rest.Config, fsys fs.FS, slo SLOConfig) error {
	crds, err := readCRDs(fsys)
	if err != nil {
		return err
	}
	cm, err := LocalSLOConfig(fsys, slo)
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, dir := range []string{namespaceDir, priorityClassDir} {
		o, err := readObjects(fsys, dir)
		if err != nil {
			return err
		}
		objs = append(objs, o...)
	}
	cmObj, err := toUnstructured(cm)
	if err != nil {
		return err
	}
	cmObj.SetAPIVersion("v1")
	cmObj.SetKind("ConfigMap")
	objs = append(objs, cmObj)

	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds, MaxTime: time.Minute}); err != nil {
		return fmt.Errorf("install CRDs: %w", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

func toUnstructured(v any) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return u, nil
}
