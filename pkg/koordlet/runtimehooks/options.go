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

package runtimehooks

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"
)

// Options are koordlet's runtime hook flags, under Koordinator's names.
type Options struct {
	// NRI turns the NRI hooks on (--enable-nri-runtime-hook).
	NRI bool
	// Config is how koordlet registers; its SocketPath may be relative to VarRunRoot, as Koordinator's
	// "nri/nri.sock" is.
	Config
	// VarRunRoot is where the host's /var/run is (--var-run-root-dir).
	VarRunRoot string
	// FailurePolicy is Ignore or Fail (--runtime-hooks-failure-policy).
	FailurePolicy string
	// HAMiCoreLibrary is HAMi-core's library on the node (--hami-core-library-directory-path).
	HAMiCoreLibrary string
}

// DefaultOptions returns the defaults: NRI on, the runtime's default socket, failure policy Ignore.
func DefaultOptions() Options {
	return Options{NRI: true, Config: DefaultConfig(), VarRunRoot: "/var/run", FailurePolicy: string(FailurePolicyIgnore),
		HAMiCoreLibrary: DefaultHAMiCoreLibrary}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.NRI, "enable-nri-runtime-hook", o.NRI, "Register with the container runtime as an NRI plugin, so that containers get their BE limits and cpusets when they are created; without NRI the reconcile loop applies them a round after they start.")
	fs.StringVar(&o.SocketPath, "runtime-hooks-nri-socket-path", o.SocketPath, "The runtime's NRI socket; a relative path is under --var-run-root-dir.")
	fs.StringVar(&o.VarRunRoot, "var-run-root-dir", o.VarRunRoot, "Where the host's /var/run is mounted; relative NRI socket paths are under it.")
	fs.StringVar(&o.PluginName, "runtime-hooks-nri-plugin-name", o.PluginName, "The name koordlet registers with the runtime under.")
	fs.StringVar(&o.PluginIndex, "runtime-hooks-nri-plugin-index", o.PluginIndex, "The two-digit index koordlet registers under; the runtime calls plugins in index order.")
	fs.DurationVar(&o.ConnectTimeout, "runtime-hooks-nri-connect-timeout", o.ConnectTimeout, "How long connecting and registering with the runtime may take.")
	fs.DurationVar(&o.Backoff, "runtime-hooks-nri-backoff-duration", o.Backoff, "The first wait before connecting again after the socket was missing or the connection dropped.")
	fs.DurationVar(&o.BackoffCap, "runtime-hooks-nri-backoff-cap", o.BackoffCap, "The longest wait between connection attempts.")
	fs.Float64Var(&o.BackoffFactor, "runtime-hooks-nri-backoff-factor", o.BackoffFactor, "How much the wait grows after each failed attempt.")
	fs.StringVar(&o.HAMiCoreLibrary, "hami-core-library-directory-path", o.HAMiCoreLibrary, "HAMi-core's library on the node, preloaded into the containers of pods that share a GPU under HAMi-core isolation (GPUEnvInject).")
	fs.StringVar(&o.FailurePolicy, "runtime-hooks-failure-policy", o.FailurePolicy, "What the runtime does when a hook cannot decide (koordlet does not know the pod yet): Ignore creates the container as kubelet asked, Fail fails the request.")
}

// Resolved returns the Config with the socket path made absolute.
func (o Options) Resolved() Config {
	c := o.Config
	if c.SocketPath != "" && !filepath.IsAbs(c.SocketPath) {
		c.SocketPath = filepath.Join(o.VarRunRoot, c.SocketPath)
	}
	return c
}

// Validate names every invalid option; with NRI off there is nothing to check.
func (o Options) Validate() error {
	if !o.NRI {
		return nil
	}
	var errs []error
	if _, err := ParseFailurePolicy(o.FailurePolicy); err != nil {
		errs = append(errs, fmt.Errorf("--runtime-hooks-failure-policy: %w", err))
	}
	if !filepath.IsAbs(o.HAMiCoreLibrary) {
		errs = append(errs, fmt.Errorf("--hami-core-library-directory-path: %q is not an absolute path", o.HAMiCoreLibrary))
	}
	if !filepath.IsAbs(o.SocketPath) && !filepath.IsAbs(o.VarRunRoot) {
		errs = append(errs, fmt.Errorf("--var-run-root-dir: %q must be absolute for the relative socket path %q", o.VarRunRoot, o.SocketPath))
	}
	if err := o.Resolved().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("runtime hooks: %w", err))
	}
	return errors.Join(errs...)
}
