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

package plugins

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	_ "github.com/koord-dev/koord/pkg/scheduler/apis/config/scheme" // kube-scheduler must be able to decode the plugins' args.
)

// Factory returns the kube-scheduler factory of the plugin name, whose args are an *A. kube-scheduler decodes
// and defaults the args from the plugin's pluginConfig entry; the factory checks their type, validates them
// once with validate, under the path pluginConfig[name].args, and then builds the plugin with newPlugin.
// Plugins do not validate their args again.
func Factory[A any, P fwk.Plugin](name string, validate func(*field.Path, *A) field.ErrorList, newPlugin func(context.Context, *A, fwk.Handle) (P, error)) frameworkruntime.PluginFactory {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		args, ok := any(obj).(*A)
		if !ok {
			return nil, fmt.Errorf("want args of type %s, got %T", reflect.TypeFor[A]().Name(), obj)
		}
		if errs := validate(ArgsPath(name), args); len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
		p, err := newPlugin(ctx, args, h)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// ArgsPath is the path of the args of plugin name in a KubeSchedulerConfiguration profile, as validation
// errors name it.
func ArgsPath(name string) *field.Path {
	return field.NewPath("pluginConfig").Key(name).Child("args")
}
