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

package cert

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the certificate Secret; the names are Koordinator's, so an existing Secret is reused.
const (
	SecretKeyCACert = "ca-cert.pem"
	SecretKeyCAKey  = "ca-key.pem"
	SecretKeyCert   = "cert.pem"
	SecretKeyKey    = "key.pem"
)

// Files written to the certificate directory. The webhook server reads tls.crt and tls.key and reloads them
// when they change.
const (
	FileCert   = "tls.crt"
	FileKey    = "tls.key"
	FileCACert = "ca.crt"
)

// Keeper keeps the certificate Secret valid and mirrors it into a directory.
type Keeper struct {
	// Client reads and writes the Secret. It must not be a cached client: Ensure runs before caches start.
	Client client.Client
	// Namespace and SecretName locate the Secret.
	Namespace, SecretName string
	// Hosts are the names the serving certificate must be valid for.
	Hosts Hosts
	// CertDir receives tls.crt, tls.key and ca.crt.
	CertDir string
	// Clock tells the time; the real clock when nil.
	Clock clock.PassiveClock
}

// maxEnsureAttempts bounds the retries when replicas race on creating or renewing the Secret.
const maxEnsureAttempts = 5

// Ensure makes the Secret hold a bundle valid for Hosts, renewing what is due, writes the serving pair to
// CertDir and returns the bundle. Replicas that race converge on whichever write the apiserver accepted first.
func (k *Keeper) Ensure(ctx context.Context) (*Bundle, error) {
	var lastErr error
	for range maxEnsureAttempts {
		b, err := k.ensureSecret(ctx)
		if err == nil {
			if err := writeFiles(k.CertDir, b); err != nil {
				return nil, err
			}
			return b, nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		lastErr = err
	}
	return nil, fmt.Errorf("ensure webhook certificate secret %s/%s: gave up after %d conflicting writes: %w",
		k.Namespace, k.SecretName, maxEnsureAttempts, lastErr)
}

func (k *Keeper) now() clock.PassiveClock {
	if k.Clock == nil {
		return clock.RealClock{}
	}
	return k.Clock
}

func (k *Keeper) ensureSecret(ctx context.Context) (*Bundle, error) {
	logger := ctrl.LoggerFrom(ctx).WithValues("secret", k.Namespace+"/"+k.SecretName)
	now := k.now().Now()
	secret := &corev1.Secret{}
	err := k.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.SecretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
		b, err := Generate(k.Hosts, now)
		if err != nil {
			return nil, err
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.SecretName,
				Labels: map[string]string{"app.kubernetes.io/part-of": "koord", "app.kubernetes.io/component": "koord-manager"}},
			Type: corev1.SecretTypeOpaque,
			Data: secretData(b),
		}
		if err := k.Client.Create(ctx, secret); err != nil {
			return nil, fmt.Errorf("create webhook certificate secret: %w", err)
		}
		logger.Info("Created webhook certificate", "notAfter", mustNotAfter(b))
		return b, nil
	case err != nil:
		return nil, fmt.Errorf("get webhook certificate secret: %w", err)
	}

	stored := bundleFrom(secret)
	b, reason, err := Renew(stored, k.Hosts, now)
	if err != nil {
		return nil, err
	}
	if reason == "" {
		return b, nil
	}
	secret.Data = secretData(b)
	if err := k.Client.Update(ctx, secret); err != nil {
		return nil, fmt.Errorf("update webhook certificate secret: %w", err)
	}
	logger.Info("Renewed webhook certificate", "reason", reason, "notAfter", mustNotAfter(b))
	return b, nil
}

func bundleFrom(s *corev1.Secret) *Bundle {
	if len(s.Data[SecretKeyCACert]) == 0 && len(s.Data[SecretKeyCert]) == 0 {
		return nil
	}
	return &Bundle{CACert: s.Data[SecretKeyCACert], CAKey: s.Data[SecretKeyCAKey], Cert: s.Data[SecretKeyCert], Key: s.Data[SecretKeyKey]}
}

func secretData(b *Bundle) map[string][]byte {
	return map[string][]byte{SecretKeyCACert: b.CACert, SecretKeyCAKey: b.CAKey, SecretKeyCert: b.Cert, SecretKeyKey: b.Key}
}

func mustNotAfter(b *Bundle) string {
	t, err := b.NotAfter()
	if err != nil {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

// writeFiles writes the serving pair and the CA into dir, each file atomically and only when it changed, so
// the webhook server's certificate watcher reloads exactly once per renewal.
func writeFiles(dir string, b *Bundle) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create certificate directory: %w", err)
	}
	// The key first: a watcher that reloads on the certificate change then finds the matching key in place.
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{FileKey, b.Key, 0o600}, {FileCert, b.Cert, 0o644}, {FileCACert, b.CACert, 0o644}} {
		path := filepath.Join(dir, f.name)
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, f.data) {
			continue
		}
		tmp, err := os.CreateTemp(dir, "."+f.name+".*")
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		_, werr := tmp.Write(f.data)
		cerr := tmp.Close()
		if werr == nil && cerr == nil {
			werr = os.Chmod(tmp.Name(), f.mode)
		}
		if werr == nil && cerr == nil {
			werr = os.Rename(tmp.Name(), path)
		}
		if werr != nil || cerr != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("write %s: %w", path, firstErr(werr, cerr))
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
