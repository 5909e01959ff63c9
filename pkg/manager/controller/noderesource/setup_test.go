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

package noderesource

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// newTestManager returns a manager that is never started, with a static REST mapper so that nothing needs an
// API server.
func newTestManager(t *testing.T) ctrl.Manager {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := slov1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:     scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
			m := meta.NewDefaultRESTMapper(nil)
			m.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
			m.Add(corev1.SchemeGroupVersion.WithKind("Node"), meta.RESTScopeRoot)
			m.Add(slov1alpha1.SchemeGroupVersion.WithKind("NodeMetric"), meta.RESTScopeRoot)
			return m, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

func TestSetup(t *testing.T) {
	tests := map[string]struct {
		opts    Options
		wantErr string
	}{
		"with configuration updates":    {opts: Options{StrategyForNode: strategy, ConfigUpdates: make(chan event.GenericEvent)}},
		"without configuration updates": {opts: Options{StrategyForNode: strategy}},
		"without a strategy":            {opts: Options{}, wantErr: "noderesource: Options.StrategyForNode is required"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Setup(newTestManager(t), tc.opts)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("Setup() error (-want,+got):\n%s", diff)
			}
		})
	}
}
