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

package crdinformers

import (
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned/fake"
)

func TestSharedFactory(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(kubefake.NewClientset(), 0)))
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewSimpleClientset(&slov1alpha1.NodeMetric{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	s := NewForClient(client)
	if err := s.Start(ctx); err == nil {
		t.Error("Start before any informer was requested succeeded")
	}
	// Plugins write through the client the informers read with.
	if got, err := s.Client(fh); err != nil || got != client {
		t.Errorf("Client = %v, %v; want the shared client", got, err)
	}
	first, err := s.Factory(fh)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Factory(fh)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Error("Factory built a second factory")
	}
	lister := first.Slo().V1alpha1().NodeMetrics().Lister()
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if _, err := lister.Get("n1"); err != nil {
		t.Errorf("the NodeMetric is not in the synced cache: %v", err)
	}
	// A second plugin starting the same informers changes nothing.
	if err := s.Start(ctx); err != nil {
		t.Errorf("second Start: %v", err)
	}
}

func TestStartTimesOutWhenListingFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	client := fake.NewSimpleClientset()
	client.PrependReactor("list", "nodemetrics", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server could not find the requested resource")
	})
	s := NewForClient(client)
	s.syncTimeout = 200 * time.Millisecond
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	factory, err := s.Factory(fh)
	if err != nil {
		t.Fatal(err)
	}
	factory.Slo().V1alpha1().NodeMetrics().Informer()
	err = s.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "did not sync within 200ms: is its CRD installed") {
		t.Errorf("Start error = %v, want a sync timeout naming the CRD", err)
	}
}

func TestNewClientForScheduler(t *testing.T) {
	if _, err := newClientForScheduler(nil); err == nil {
		t.Error("a nil kubeconfig was accepted")
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1", ContentConfig: rest.ContentConfig{ContentType: "application/vnd.kubernetes.protobuf"}}
	if _, err := newClientForScheduler(cfg); err != nil {
		t.Errorf("newClientForScheduler: %v", err)
	}
	if cfg.ContentType != "application/vnd.kubernetes.protobuf" {
		t.Error("the scheduler's kubeconfig was modified")
	}
}
