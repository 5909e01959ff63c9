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

// Command koord-descheduler moves pods off nodes whose usage drifted above their thresholds (LowNodeLoad) through
// PodMigrationJobs that reserve room for the replacement before evicting (MigrationController). It reads
// Koordinator's DeschedulerConfiguration.
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

	"github.com/koord-dev/koord/pkg/descheduler"
	"github.com/koord-dev/koord/pkg/util/logging"
)

func main() {
	if err := run(ctrl.SetupSignalHandler(), os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "koord-descheduler: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var opts descheduler.Options
	logCfg := logsapi.NewLoggingConfiguration()
	fs := pflag.NewFlagSet("koord-descheduler", pflag.ContinueOnError)
	fs.StringVar(&opts.ConfigFile, "config", "", "Path to a DeschedulerConfiguration (descheduler/v1alpha2). Empty: the defaults (MigrationController only).")
	fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "Path to a kubeconfig; overrides clientConnection.kubeconfig. Both empty: in-cluster config, then $KUBECONFIG, then ~/.kube/config.")
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
	logger := klog.Background().WithName("koord-descheduler")
	ctrl.SetLogger(logger)
	return descheduler.Run(klog.NewContext(ctx, logger), opts)
}
