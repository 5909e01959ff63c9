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
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	nrilog "github.com/containerd/nri/pkg/log"
	"github.com/containerd/nri/pkg/stub"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// Defaults of Config, as Koordinator's koordlet has them.
const (
	DefaultSocketPath     = "/var/run/nri/nri.sock"
	DefaultPluginName     = "koordlet_nri"
	DefaultPluginIndex    = "00"
	DefaultConnectTimeout = 6 * time.Second
	DefaultBackoff        = time.Second
	DefaultBackoffCap     = time.Minute
	DefaultBackoffFactor  = 2.0
)

// Config is how koordlet registers with the container runtime.
type Config struct {
	// SocketPath is the runtime's NRI socket.
	SocketPath string
	// PluginName and PluginIndex name the plugin to the runtime, which calls plugins in the order of their
	// index.
	PluginName, PluginIndex string
	// ConnectTimeout bounds the dial and the registration.
	ConnectTimeout time.Duration
	// Backoff is the wait before the first retry after the socket was missing or the connection was lost;
	// it grows by BackoffFactor up to BackoffCap, and starts again after a registration.
	Backoff, BackoffCap time.Duration
	BackoffFactor       float64
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		SocketPath: DefaultSocketPath, PluginName: DefaultPluginName, PluginIndex: DefaultPluginIndex,
		ConnectTimeout: DefaultConnectTimeout, Backoff: DefaultBackoff, BackoffCap: DefaultBackoffCap,
		BackoffFactor: DefaultBackoffFactor,
	}
}

// Validate names what is wrong in c.
func (c Config) Validate() error {
	var errs []error
	if c.SocketPath == "" {
		errs = append(errs, errors.New("the NRI socket path is empty"))
	}
	if c.PluginName == "" {
		errs = append(errs, errors.New("the NRI plugin name is empty"))
	}
	if len(c.PluginIndex) != 2 || c.PluginIndex[0] < '0' || c.PluginIndex[0] > '9' || c.PluginIndex[1] < '0' || c.PluginIndex[1] > '9' {
		errs = append(errs, fmt.Errorf("the NRI plugin index %q is not two digits", c.PluginIndex))
	}
	if c.ConnectTimeout <= 0 {
		errs = append(errs, fmt.Errorf("the NRI connect timeout %v is not positive", c.ConnectTimeout))
	}
	if c.Backoff <= 0 || c.BackoffCap < c.Backoff {
		errs = append(errs, fmt.Errorf("the NRI backoff %v, capped at %v: want a positive backoff no larger than its cap", c.Backoff, c.BackoffCap))
	}
	if c.BackoffFactor < 1 {
		errs = append(errs, fmt.Errorf("the NRI backoff factor %v is below 1", c.BackoffFactor))
	}
	return errors.Join(errs...)
}

// Serve keeps hooks registered with the container runtime at cfg.SocketPath until ctx ends: it connects,
// serves until the connection drops (the runtime restarted), and connects again, waiting longer after each
// failure. A missing socket is said once; the reconcile loop applies everything meanwhile.
func Serve(ctx context.Context, hooks *Hooks, cfg Config) {
	logger := klog.FromContext(ctx).WithValues("socket", cfg.SocketPath)
	ctx = klog.NewContext(ctx, logger)
	backoff := newBackoff(cfg)
	saidMissing := false
	for ctx.Err() == nil {
		err := serveOnce(ctx, hooks, cfg)
		hooks.metrics.connected.Set(0)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errRegistered):
			// It served until the runtime went away: start the waits again.
			logger.Info("The container runtime closed the NRI connection; connecting again")
			backoff = newBackoff(cfg)
			saidMissing = false
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNoListener):
			if !saidMissing {
				logger.Info("The container runtime offers no NRI socket (NRI off, or a runtime without it): containers get koordlet's settings from the reconcile loop, a round after they start; waiting for the socket")
				saidMissing = true
			}
		default:
			logger.Error(err, "Could not register with the container runtime over NRI; trying again")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff.Step()):
		}
	}
}

// errRegistered is serveOnce's error after it registered and served until the connection dropped.
var errRegistered = errors.New("registered, then the connection dropped")

// errNoListener is a socket file nobody listens on (a runtime that stopped).
var errNoListener = errors.New("nothing listens on the NRI socket")

// serveOnce connects once and serves until the connection drops or ctx ends.
func serveOnce(ctx context.Context, hooks *Hooks, cfg Config) error {
	if _, err := os.Stat(cfg.SocketPath); err != nil {
		return err
	}
	dialer := func(path string) (net.Conn, error) {
		conn, err := (&net.Dialer{Timeout: cfg.ConnectTimeout}).DialContext(ctx, "unix", path)
		if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED)) {
			return nil, fmt.Errorf("%w: %w", errNoListener, err)
		}
		return conn, err
	}
	closed := make(chan struct{})
	var once sync.Once
	s, err := stub.New(hooks,
		stub.WithPluginName(cfg.PluginName), stub.WithPluginIdx(cfg.PluginIndex), stub.WithSocketPath(cfg.SocketPath),
		stub.WithDialer(dialer), stub.WithOnClose(func() { once.Do(func() { close(closed) }) }),
		stub.WithLogger(nriLogger{logger: klog.FromContext(ctx)}))
	if err != nil {
		return fmt.Errorf("create the NRI plugin: %w", err)
	}
	startCtx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	err = s.Start(startCtx)
	cancel()
	if err != nil {
		s.Stop()
		return fmt.Errorf("register plugin %s-%s: %w", cfg.PluginIndex, cfg.PluginName, err)
	}
	hooks.metrics.connected.Set(1)
	select {
	case <-ctx.Done():
		s.Stop()
		return ctx.Err()
	case <-closed:
		s.Stop()
		return errRegistered
	}
}

func newBackoff(cfg Config) *wait.Backoff {
	return &wait.Backoff{Duration: cfg.Backoff, Factor: cfg.BackoffFactor, Cap: cfg.BackoffCap, Steps: 1 << 30}
}

// nriLogger passes the NRI library's messages to klog: its progress at verbosity 4, its warnings and errors as
// they are.
type nriLogger struct{ logger klog.Logger }

var _ nrilog.Logger = nriLogger{}

func (l nriLogger) Debugf(_ context.Context, format string, args ...any) {
	l.logger.V(5).Info(fmt.Sprintf(format, args...))
}

func (l nriLogger) Infof(_ context.Context, format string, args ...any) {
	l.logger.V(4).Info(fmt.Sprintf(format, args...))
}

func (l nriLogger) Warnf(_ context.Context, format string, args ...any) {
	l.logger.Info("NRI: " + fmt.Sprintf(format, args...))
}

func (l nriLogger) Errorf(_ context.Context, format string, args ...any) {
	l.logger.Error(nil, "NRI: "+fmt.Sprintf(format, args...))
}
