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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/pkg/manager"
	"github.com/koord-dev/koord/pkg/manager/webhook/cert"
	"github.com/koord-dev/koord/test/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	testenv.Main(m, &env)
}

// testOptions are manager options for one test: free ports, webhooks registered by URL on 127.0.0.1, no
// leader election, certificates in a temp directory.
func testOptions(t *testing.T) manager.Options {
	t.Helper()
	o := manager.DefaultOptions()
	o.LeaderElection = false
	o.MetricsBindAddress = "0"
	o.HealthProbeBindAddress = "0"
	o.Webhook.Host = "127.0.0.1"
	o.Webhook.Port = testenv.FreePort(t)
	o.Webhook.CertDir = t.TempDir()
	o.Webhook.SyncInterval = time.Hour
	return o
}

// runningManager is a koord-manager started by a test.
type runningManager struct {
	opts   manager.Options
	cancel context.CancelFunc
	done   chan error
}

// startManager starts koord-manager with opts and waits until its webhooks answer. It is stopped, and its
// webhook registrations removed, when the test ends.
func startManager(t *testing.T, opts manager.Options) *runningManager {
	t.Helper()
	return startManagerAs(t, env.Config, opts)
}

// startManagerAs is startManager with the manager authenticating through cfg, e.g. as a user bound to
// koord-manager's RBAC role.
func startManagerAs(t *testing.T, cfg *rest.Config, opts manager.Options) *runningManager {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	mgr, err := manager.New(ctx, cfg, opts)
	if err != nil {
		cancel()
		t.Fatalf("create koord-manager: %v", err)
	}
	rm := &runningManager{opts: opts, cancel: cancel, done: make(chan error, 1)}
	go func() { rm.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { rm.stop(t) })
	if opts.EnableWebhookServer {
		waitForWebhookServer(t, opts)
	}
	return rm
}

var stopOnce sync.Map

// stop stops the manager and removes its webhook registrations, so that Fail-policy webhooks of a stopped
// manager cannot block the next test.
func (rm *runningManager) stop(t *testing.T) {
	t.Helper()
	if _, loaded := stopOnce.LoadOrStore(rm, true); loaded {
		return
	}
	rm.cancel()
	select {
	case err := <-rm.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("koord-manager exited with: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("koord-manager did not stop within 30s")
	}
	ctx := context.Background()
	for _, obj := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: rm.opts.Webhook.MutatingConfigName}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: rm.opts.Webhook.ValidatingConfigName}},
	} {
		if err := env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("remove webhook registration %s: %v", obj.GetName(), err)
		}
	}
}

// waitForWebhookServer waits until the webhook server accepts TLS connections with the certificate
// koord-manager issued.
func waitForWebhookServer(t *testing.T, opts manager.Options) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(opts.Webhook.CertDir, cert.FileCACert))
	if err != nil {
		t.Fatalf("koord-manager wrote no CA into its certificate directory: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	addr := net.JoinHostPort(opts.Webhook.Host, strconv.Itoa(opts.Webhook.Port))
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: opts.Webhook.Host, MinVersion: tls.VersionTLS12})
		if err != nil {
			return false, nil
		}
		_ = conn.Close()
		return true, nil
	})
	if err != nil {
		t.Fatalf("webhook server at %s did not come up: %v", addr, err)
	}
}

// ensureSystemNamespace creates koordinator-system, where the SLO ConfigMap and the certificate Secret live.
func ensureSystemNamespace(t *testing.T) {
	t.Helper()
	err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: configuration.ConfigNamespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", configuration.ConfigNamespace, err)
	}
}

// eventually polls cond every 100ms for up to 30s and fails the test with msg when it never holds.
func eventually(t *testing.T, msg string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
}
