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
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var (
	t0    = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	hosts = Hosts{DNSNames: []string{"koord-webhook.koordinator-system.svc"}}
)

// verifies checks that the serving certificate chains to the CA and is valid for name at now.
func verifies(t *testing.T, b *Bundle, name string, now time.Time) {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.CACert) {
		t.Fatal("CA PEM does not parse")
	}
	c, err := parseCert(b.Cert)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now}); err != nil {
		t.Fatalf("serving certificate does not verify for %s at %s: %v", name, now, err)
	}
	if _, err := tls.X509KeyPair(b.Cert, b.Key); err != nil {
		t.Fatalf("serving pair is not a TLS key pair: %v", err)
	}
}

func TestGenerate(t *testing.T) {
	b, err := Generate(Hosts{DNSNames: hosts.DNSNames, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	verifies(t, b, hosts.DNSNames[0], t0)
	verifies(t, b, hosts.DNSNames[0], t0.Add(ServingValidity-time.Hour))
	c, _ := parseCert(b.Cert)
	if !c.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("IP SANs = %v, want 127.0.0.1", c.IPAddresses)
	}
	if _, err := Generate(Hosts{}, t0); err == nil {
		t.Error("Generate without hosts succeeded, want an error")
	}
}

func TestRenew(t *testing.T) {
	orig, err := Generate(hosts, t0)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		bundle     *Bundle
		hosts      Hosts
		now        time.Time
		wantReason string // substring; "" means unchanged
		wantSameCA bool
	}{
		"fresh bundle is kept":         {bundle: orig, hosts: hosts, now: t0.Add(24 * time.Hour)},
		"no bundle":                    {bundle: nil, hosts: hosts, now: t0, wantReason: "no certificate yet"},
		"serving close to expiry":      {bundle: orig, hosts: hosts, now: t0.Add(ServingValidity - ServingRenewBefore + time.Hour), wantReason: "serving certificate expires", wantSameCA: true},
		"new host name":                {bundle: orig, hosts: Hosts{DNSNames: []string{"other.svc"}}, now: t0, wantReason: `not valid for "other.svc"`, wantSameCA: true},
		"new IP":                       {bundle: orig, hosts: Hosts{DNSNames: hosts.DNSNames, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}, now: t0, wantReason: "not valid for 10.0.0.1", wantSameCA: true},
		"CA close to expiry":           {bundle: orig, hosts: hosts, now: t0.Add(CAValidity - CARenewBefore + time.Hour), wantReason: "CA expires"},
		"garbage CA":                   {bundle: &Bundle{CACert: []byte("x"), CAKey: orig.CAKey, Cert: orig.Cert, Key: orig.Key}, hosts: hosts, now: t0, wantReason: "stored CA unusable"},
		"garbage serving certificate":  {bundle: &Bundle{CACert: orig.CACert, CAKey: orig.CAKey, Cert: []byte("x"), Key: orig.Key}, hosts: hosts, now: t0, wantReason: "serving certificate unusable", wantSameCA: true},
		"serving key of another chain": {bundle: &Bundle{CACert: orig.CACert, CAKey: orig.CAKey, Cert: orig.Cert, Key: orig.CAKey}, hosts: hosts, now: t0, wantReason: "does not match", wantSameCA: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := tc.bundle
			if in != nil {
				in = &Bundle{CACert: in.CACert, CAKey: in.CAKey, Cert: in.Cert, Key: in.Key}
			}
			got, reason, err := Renew(in, tc.hosts, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantReason == "" {
				if reason != "" || !got.Equal(orig) {
					t.Fatalf("Renew changed a valid bundle: reason %q", reason)
				}
				return
			}
			if !strings.Contains(reason, tc.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", reason, tc.wantReason)
			}
			name := hosts.DNSNames[0]
			if len(tc.hosts.DNSNames) > 0 {
				name = tc.hosts.DNSNames[0]
			}
			verifies(t, got, name, tc.now)
			if sameCA := bytes.Equal(got.CACert, orig.CACert); sameCA != tc.wantSameCA {
				t.Errorf("kept the CA = %v, want %v", sameCA, tc.wantSameCA)
			}
			if again, reason, _ := Renew(got, tc.hosts, tc.now); reason != "" || !again.Equal(got) {
				t.Errorf("renewing the renewed bundle changed it again: %q", reason)
			}
		})
	}
}

func newKeeper(t *testing.T, c client.Client, clk *clocktesting.FakePassiveClock) *Keeper {
	return &Keeper{Client: c, Namespace: "koordinator-system", SecretName: "koord-webhook-certs", Hosts: hosts, CertDir: t.TempDir(), Clock: clk}
}

func readSecret(ctx context.Context, t *testing.T, k *Keeper) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := k.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.SecretName}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeeperEnsure(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(t0)
	k := newKeeper(t, fake.NewClientBuilder().Build(), clk)

	first, err := k.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	created := readSecret(ctx, t, k)
	for _, f := range []struct {
		name string
		want []byte
	}{{FileCert, first.Cert}, {FileKey, first.Key}, {FileCACert, first.CACert}} {
		got, err := os.ReadFile(filepath.Join(k.CertDir, f.name))
		if err != nil || !bytes.Equal(got, f.want) {
			t.Errorf("%s in the certificate directory does not hold the bundle (err %v)", f.name, err)
		}
	}

	// A second replica (same Secret, its own directory) gets the same certificate; nothing is written.
	k2 := newKeeper(t, k.Client, clk)
	second, err := k2.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !second.Equal(first) {
		t.Error("a second Ensure issued a different certificate")
	}
	if got := readSecret(ctx, t, k); got.ResourceVersion != created.ResourceVersion {
		t.Error("a second Ensure rewrote an unchanged Secret")
	}

	// Near expiry the serving certificate is renewed under the same CA and the files follow.
	clk.SetTime(t0.Add(ServingValidity - ServingRenewBefore + time.Hour))
	renewed, err := k.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(renewed.Cert, first.Cert) || !bytes.Equal(renewed.CACert, first.CACert) {
		t.Error("renewal did not replace the serving certificate under the same CA")
	}
	if got, _ := os.ReadFile(filepath.Join(k.CertDir, FileCert)); !bytes.Equal(got, renewed.Cert) {
		t.Error("the certificate file was not updated on renewal")
	}
	if diff := cmp.Diff(secretData(renewed), readSecret(ctx, t, k).Data); diff != "" {
		t.Errorf("Secret after renewal (-want +got):\n%s", diff)
	}
}

func TestKeeperRepairsBrokenSecret(t *testing.T) {
	ctx := context.Background()
	broken := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "koordinator-system", Name: "koord-webhook-certs"},
		Data:       map[string][]byte{SecretKeyCACert: []byte("not a certificate")},
	}
	k := newKeeper(t, fake.NewClientBuilder().WithObjects(broken).Build(), clocktesting.NewFakePassiveClock(t0))
	b, err := k.Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	verifies(t, b, hosts.DNSNames[0], t0)
	if diff := cmp.Diff(secretData(b), readSecret(ctx, t, k).Data); diff != "" {
		t.Errorf("repaired Secret (-want +got):\n%s", diff)
	}
}
