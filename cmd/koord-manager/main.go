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

// Command koord-manager runs Koord's control-plane controllers (NodeMetric, NodeSLO, batch and mid resources)
// and admission webhooks.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/koord-dev/koord/pkg/manager"
	"github.com/koord-dev/koord/pkg/util/logging"
)

func main() {
	if err := run(ctrl.SetupSignalHandler(), os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "koord-manager: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	opts, err := manager.DefaultOptionsFromEnv()
	if err != nil {
		return err
	}
	logCfg := logsapi.NewLoggingConfiguration()
	fs := pflag.NewFlagSet("koord-manager", pflag.ContinueOnError)
	opts.AddFlags(fs)
	logsapi.AddFlags(logCfg, fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if err := logging.Apply(logCfg); err != nil {
		return err
	}
	logger := klog.Background().WithName("koord-manager")
	ctrl.SetLogger(logger)
	if err := opts.Validate(); err != nil {
		return err
	}
	return manager.Run(klog.NewContext(ctx, logger), opts)
}
