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

// Package testenv starts a real control plane (etcd and kube-apiserver built from the modules pinned in go.mod
// into bin/) through controller-runtime's envtest, with Koord's CRDs installed, for integration tests.
//
// Use it from TestMain:
//
//	var env *testenv.Environment
//
//	func TestMain(m *testing.M) {
//		testenv.Main(m, &env)
//	}
//
// The processes it starts and the directories it creates are removed when the tests end, also when a test
// panics or the test binary is killed: a reaper process, the test binary itself re-executed, watches the test
// process and cleans up after it.
package testenv

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/koord-dev/koord/pkg/client/clientset/versioned/scheme"
)

// BinDirEnv names the environment variable that overrides where the control-plane binaries are looked up.
const BinDirEnv = "KOORD_BIN_DIR"

// requiredBinaries are the executables envtest starts; `make bin` builds them from go.mod's tool block.
var requiredBinaries = []string{"etcd", "kube-apiserver"}

// Environment is a running control plane with Koord's CRDs installed.
type Environment struct {
	// Config reaches the apiserver as a cluster administrator.
	Config *rest.Config
	// Client is a controller-runtime client whose scheme knows the Kubernetes and Koord types.
	Client client.Client
	// Scheme holds the Kubernetes built-in types and every Koord API group.
	Scheme *runtime.Scheme
	// CRDs are the CustomResourceDefinitions installed from config/crd/bases.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// RepoRoot is the root of the Koord source tree.
	RepoRoot string

	env    *envtest.Environment
	reaper *reaper
}

// Option changes what Start starts.
type Option func(*options)

type options struct {
	withoutCRDs bool
}

// WithoutCRDs leaves Koord's CRDs out, for tests that install them as a user would (the Helm chart).
func WithoutCRDs() Option {
	return func(o *options) { o.withoutCRDs = true }
}

// NewScheme returns a scheme with the Kubernetes built-in types, apiextensions and every Koord API group.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		scheme.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return s, nil
}

// Start starts etcd and kube-apiserver from bin/ and installs Koord's CRDs (unless WithoutCRDs). It fails with
// a message naming the make target when the binaries are missing. Call Stop when done.
func Start(opts ...Option) (_ *Environment, retErr error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	binDir, err := BinDir(root)
	if err != nil {
		return nil, err
	}
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}

	// All state of this control plane lives under one directory, so that the reaper can find the
	// processes (their command lines name it) and remove it.
	workDir, err := os.MkdirTemp("", "koord-testenv-")
	if err != nil {
		return nil, fmt.Errorf("create control-plane directory: %w", err)
	}
	r, err := startReaper(workDir)
	if err != nil {
		_ = os.RemoveAll(workDir)
		return nil, err
	}
	defer func() {
		if retErr != nil {
			r.cleanUpNow()
		}
	}()

	etcdData := filepath.Join(workDir, "etcd")
	certDir := filepath.Join(workDir, "apiserver")
	for _, d := range []string{etcdData, certDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("create control-plane directory: %w", err)
		}
	}

	env := &envtest.Environment{
		BinaryAssetsDirectory: binDir,
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                s,
	}
	if o.withoutCRDs {
		env.CRDDirectoryPaths, env.ErrorIfCRDPathMissing = nil, false
	}
	env.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdData, StartTimeout: time.Minute}
	env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir, StartTimeout: 2 * time.Minute}
	cfg, err := env.Start()
	// envtest creates the webhook serving certificates in a temp directory of its own; hand it to the reaper.
	if d := env.WebhookInstallOptions.LocalServingCertDir; d != "" {
		if rerr := r.alsoRemove(d); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("start control plane from %s: %w", binDir, err)
	}
	// Tests create many objects quickly; the default client-side limits would only slow them down.
	cfg.QPS, cfg.Burst = 1000, 2000

	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("create client: %w", err)
	}
	return &Environment{
		Config:   cfg,
		Client:   c,
		Scheme:   s,
		CRDs:     env.CRDs,
		RepoRoot: root,
		env:      env,
		reaper:   r,
	}, nil
}

// AddUser provisions a user that has only what RBAC grants its name and groups, and returns a client
// configuration that authenticates as it: for tests that a component works with its own RBAC role.
func (e *Environment) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("add user %s: %w", name, err)
	}
	cfg := u.Config()
	cfg.QPS, cfg.Burst = e.Config.QPS, e.Config.Burst
	return cfg, nil
}

// Stop stops the control plane and removes its directories.
func (e *Environment) Stop() error {
	err := e.env.Stop()
	e.reaper.cleanUpNow()
	if err != nil {
		return fmt.Errorf("stop control plane: %w", err)
	}
	return nil
}

// Main runs the tests of a package against one control plane: it starts it, stores it in *env, runs m and
// stops it, then exits with the tests' result. When the binaries are missing it reports which make target
// builds them and fails. Call it from TestMain.
func Main(m *testing.M, env **Environment, opts ...Option) {
	if isReaper() {
		runReaper()
		return
	}
	os.Exit(run(m, env, opts...))
}

// MainForBenchmarks is Main for packages that hold only benchmarks: the control plane starts only when the run
// asks for benchmarks (-test.bench), so `go test ./...` does not pay for an apiserver there. Call it from
// TestMain.
func MainForBenchmarks(m *testing.M, env **Environment) {
	if isReaper() {
		runReaper()
		return
	}
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	os.Exit(run(m, env))
}

func run(m *testing.M, env **Environment, opts ...Option) int {
	e, err := Start(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	*env = e
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		}
	}()
	return m.Run()
}

// RepoRoot finds the root of the Koord source tree by walking up from the working directory to go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// BinDir returns the directory holding the control-plane binaries: $KOORD_BIN_DIR, else <root>/bin. It fails
// with a message naming the make target when a binary is missing.
func BinDir(root string) (string, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		dir = filepath.Join(root, "bin")
	}
	var missing []string
	for _, name := range requiredBinaries {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("control-plane binaries %v are missing from %s: run `make bin` in %s "+
			"(`make test` runs it too) to build them from the versions pinned in go.mod", missing, dir, root)
	}
	return dir, nil
}
