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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/test/testenv"
)

// env is the control plane of the package's tests, without Koord's CRDs: the chart installs them.
var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.Main(m, &env, testenv.WithoutCRDs())
}

// chartDir is the chart under test.
func chartDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(env.RepoRoot, "charts", "koord")
}

// helm runs bin/helm with args, with its configuration, cache and data in a temporary directory, and returns
// its standard output, or an error carrying its standard error.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin, err := testenv.BinDir(env.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), filepath.Join(bin, "helm"), args...)
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// render returns the objects `helm template` renders with args (e.g. -f file, --set k=v).
func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helm(t, append([]string{"template", "koord", chartDir(t)}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decode the rendered manifests: %v", err)
		}
		if len(raw) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: raw})
	}
}

// find returns the rendered object of kind and name, failing the test when there is none.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s among the rendered objects", kind, name)
	return nil
}

// kubeconfig writes a kubeconfig of a cluster administrator of env for helm and returns its path.
func kubeconfig(t *testing.T) string {
	t.Helper()
	cfg, err := env.AddUser("helm", "system:masters")
	if err != nil {
		t.Fatal(err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["helm"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "helm"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// applyStrict server-side applies objs as `kubectl apply --server-side --validate=strict` would: namespaces
// and CRDs first (waiting until the CRDs are established), then the rest. Any unknown or duplicate field is
// an error.
func applyStrict(ctx context.Context, t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cached := memory.NewMemCacheClient(disco)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	apply := func(o *unstructured.Unstructured) {
		t.Helper()
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, o.GetName(), err)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if ns := o.GetNamespace(); ns != "" {
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
			FieldManager: "koord-chart-test", Force: ptr.To(true), FieldValidation: metav1.FieldValidationStrict,
		})
		if err != nil {
			t.Errorf("strict server-side apply of %s %s/%s: %v", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
	var crds []string
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			apply(o)
		case "CustomResourceDefinition":
			// A helm uninstall before may still be deleting the CRD (with its objects): applying to it then
			// changes a CRD that is about to go.
			waitUntilNotTerminating(ctx, t, o.GetName())
			apply(o)
			crds = append(crds, o.GetName())
		}
	}
	for _, name := range crds {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, nil
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", name, err)
		}
	}
	mapper.Reset()
	for _, o := range objs {
		if k := o.GetKind(); k != "Namespace" && k != "CustomResourceDefinition" {
			apply(o)
		}
	}
}

// waitUntilNotTerminating waits until the CRD name is gone or not being deleted.
func waitUntilNotTerminating(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && crd.DeletionTimestamp == nil, nil
	})
	if err != nil {
		t.Fatalf("CRD %s is still being deleted: %v", name, err)
	}
}
