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

package cluster

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Session prepares a koordctl command that runs a local cluster in the foreground: its log, and its end.
// koordctl's own log goes to <stateDir>/<LogDir>/koordctl.log at verbosity, and so do the global loggers that
// client-go, envtest and the simulated agents' libraries log through, so that nothing lands between the
// progress lines. The returned context carries the logger (named name) and ends on SIGINT, SIGTERM
// (koordctl down) or SIGHUP (the terminal closed). Call stop when the command ends.
func Session(ctx context.Context, stateDir string, verbosity int, name string) (_ context.Context, stop func(), _ error) {
	dir := filepath.Join(stateDir, LogDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("create log directory: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "koordctl.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open koordctl's log: %w", err)
	}
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile), textlogger.Verbosity(verbosity)))
	klog.SetLogger(logger)
	ctrllog.SetLogger(logger)
	ctx, stopSignals := signal.NotifyContext(klog.NewContext(ctx, logger.WithName(name)), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	return ctx, func() {
		stopSignals()
		_ = logFile.Close()
	}, nil
}
