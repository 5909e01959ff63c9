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

// Package cert keeps koord-manager's webhook serving certificate: a self-managed CA and a serving certificate
// signed by it, stored in a Secret so that every replica serves the same certificate, written to the directory
// the webhook server reads, and rotated before they expire.
package cert

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// Lifetimes and rotation margins. The serving certificate is short-lived and renewed well before it expires;
// the CA lives long and is renewed (with a new serving certificate) when less than a year is left.
const (
	CAValidity           = 10 * 365 * 24 * time.Hour
	CARenewBefore        = 365 * 24 * time.Hour
	ServingValidity      = 365 * 24 * time.Hour
	ServingRenewBefore   = 90 * 24 * time.Hour
	caCommonName         = "koord-webhook-ca"
	clockSkewAllowance   = 5 * time.Minute
	pemTypeCertificate   = "CERTIFICATE"
	pemTypeECPrivateKey  = "EC PRIVATE KEY"
	serialNumberBitCount = 128
)

// Bundle is a CA and a serving certificate signed by it, PEM-encoded.
type Bundle struct {
	CACert  []byte
	CAKey   []byte
	Cert    []byte
	Key     []byte
	parsed  *x509.Certificate
	parsedC *x509.Certificate
}

// Hosts are the names the serving certificate must be valid for.
type Hosts struct {
	DNSNames    []string
	IPAddresses []net.IP
}

// Generate creates a new CA and a serving certificate for hosts.
func Generate(hosts Hosts, now time.Time) (*Bundle, error) {
	caCert, caKey, err := newCA(now)
	if err != nil {
		return nil, err
	}
	return issueServing(caCert, caKey, hosts, now)
}

// Renew returns a bundle valid at now for hosts: b itself when it needs nothing, a new serving certificate from
// the same CA when only that is due, or an entirely new bundle when the CA is due or b is unusable. The reason
// says what was renewed and why; it is empty when b is returned unchanged.
func Renew(b *Bundle, hosts Hosts, now time.Time) (_ *Bundle, reason string, _ error) {
	if b == nil {
		nb, err := Generate(hosts, now)
		return nb, "no certificate yet", err
	}
	ca, caKey, err := b.ca()
	if err != nil {
		nb, gerr := Generate(hosts, now)
		return nb, fmt.Sprintf("stored CA unusable: %v", err), gerr
	}
	if now.Add(CARenewBefore).After(ca.NotAfter) {
		nb, gerr := Generate(hosts, now)
		return nb, fmt.Sprintf("CA expires at %s", ca.NotAfter.Format(time.RFC3339)), gerr
	}
	if why := b.servingProblem(ca, hosts, now); why != "" {
		nb, gerr := issueServing(ca, caKey, hosts, now)
		if gerr == nil {
			nb.CACert, nb.CAKey = b.CACert, b.CAKey
		}
		return nb, why, gerr
	}
	return b, "", nil
}

// NotAfter is when the serving certificate expires.
func (b *Bundle) NotAfter() (time.Time, error) {
	c, err := b.serving()
	if err != nil {
		return time.Time{}, err
	}
	return c.NotAfter, nil
}

// servingProblem says why the serving certificate must be reissued, or "" when it is fine.
func (b *Bundle) servingProblem(ca *x509.Certificate, hosts Hosts, now time.Time) string {
	c, err := b.serving()
	if err != nil {
		return fmt.Sprintf("serving certificate unusable: %v", err)
	}
	if err := keyPairMatches(b.Cert, b.Key); err != nil {
		return fmt.Sprintf("serving key does not match its certificate: %v", err)
	}
	if err := c.CheckSignatureFrom(ca); err != nil {
		return "serving certificate is not signed by the stored CA"
	}
	if now.Add(ServingRenewBefore).After(c.NotAfter) {
		return fmt.Sprintf("serving certificate expires at %s", c.NotAfter.Format(time.RFC3339))
	}
	for _, name := range hosts.DNSNames {
		if c.VerifyHostname(name) != nil {
			return fmt.Sprintf("serving certificate is not valid for %q", name)
		}
	}
	for _, ip := range hosts.IPAddresses {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			return fmt.Sprintf("serving certificate is not valid for %s", ip)
		}
	}
	return ""
}

func (b *Bundle) ca() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	if b.parsedC == nil {
		c, err := parseCert(b.CACert)
		if err != nil {
			return nil, nil, fmt.Errorf("CA certificate: %w", err)
		}
		b.parsedC = c
	}
	key, err := parseKey(b.CAKey)
	if err != nil {
		return nil, nil, fmt.Errorf("CA key: %w", err)
	}
	if !b.parsedC.IsCA {
		return nil, nil, errors.New("CA certificate is not a CA")
	}
	return b.parsedC, key, nil
}

func (b *Bundle) serving() (*x509.Certificate, error) {
	if b.parsed == nil {
		c, err := parseCert(b.Cert)
		if err != nil {
			return nil, err
		}
		b.parsed = c
	}
	return b.parsed, nil
}

func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: caCommonName},
		NotBefore:             now.Add(-clockSkewAllowance),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA certificate: %w", err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return c, key, nil
}

func issueServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, hosts Hosts, now time.Time) (*Bundle, error) {
	if len(hosts.DNSNames) == 0 && len(hosts.IPAddresses) == 0 {
		return nil, errors.New("issue serving certificate: no DNS names or IP addresses")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate serving key: %w", err)
	}
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	var cn string
	if len(hosts.DNSNames) > 0 {
		cn = hosts.DNSNames[0]
	} else {
		cn = hosts.IPAddresses[0].String()
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     hosts.DNSNames,
		IPAddresses:  hosts.IPAddresses,
		NotBefore:    now.Add(-clockSkewAllowance),
		NotAfter:     now.Add(ServingValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("create serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode serving key: %w", err)
	}
	caKeyDER, err := x509.MarshalECPrivateKey(caKey)
	if err != nil {
		return nil, fmt.Errorf("encode CA key: %w", err)
	}
	return &Bundle{
		CACert: pem.EncodeToMemory(&pem.Block{Type: pemTypeCertificate, Bytes: ca.Raw}),
		CAKey:  pem.EncodeToMemory(&pem.Block{Type: pemTypeECPrivateKey, Bytes: caKeyDER}),
		Cert:   pem.EncodeToMemory(&pem.Block{Type: pemTypeCertificate, Bytes: der}),
		Key:    pem.EncodeToMemory(&pem.Block{Type: pemTypeECPrivateKey, Bytes: keyDER}),
	}, nil
}

func serialNumber() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), serialNumberBitCount))
	if err != nil {
		return nil, fmt.Errorf("generate serial number: %w", err)
	}
	return n, nil
}

func parseCert(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != pemTypeCertificate {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != pemTypeECPrivateKey {
		return nil, errors.New("no PEM EC private key")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

// keyPairMatches checks that keyPEM is the private key of certPEM.
func keyPairMatches(certPEM, keyPEM []byte) error {
	c, err := parseCert(certPEM)
	if err != nil {
		return err
	}
	k, err := parseKey(keyPEM)
	if err != nil {
		return err
	}
	if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(k.Public()) {
		return errors.New("public keys differ")
	}
	return nil
}

// Equal tells whether two bundles hold the same PEM data.
func (b *Bundle) Equal(o *Bundle) bool {
	return b != nil && o != nil && bytes.Equal(b.CACert, o.CACert) && bytes.Equal(b.CAKey, o.CAKey) &&
		bytes.Equal(b.Cert, o.Cert) && bytes.Equal(b.Key, o.Key)
}
