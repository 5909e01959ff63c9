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

// Package compatflag lets Koord's components take the command lines Koordinator's components take, so that a
// Koordinator manifest or Helm chart starts them unchanged: Koordinator's flag names as aliases of Koord's
// flags, Koordinator's flags Koord has no use for accepted and reported as ignored, klog's legacy flags, and
// Go-style single-dash long flags (-addr=:9316), which koordlet's manifests use.
package compatflag

import (
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

// Set adds Koordinator's flags to a flag set and remembers which of the ignored ones a command line used.
type Set struct {
	fs      *pflag.FlagSet
	reasons map[string]string
}

// New returns a Set that adds to fs. It makes fs treat '_' and '-' alike in flag names, as Koordinator's
// components and kube-scheduler do (--log_dir is --log-dir).
func New(fs *pflag.FlagSet) *Set {
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	return &Set{fs: fs, reasons: map[string]string{}}
}

// Alias adds name as Koordinator's name of the flag target, which must already be in the flag set: both set
// the same value.
func (s *Set) Alias(name, target string) {
	t := s.fs.Lookup(target)
	if t == nil {
		panic("compatflag: alias " + name + " of unknown flag " + target)
	}
	f := s.fs.VarPF(t.Value, name, "", "Koordinator's name of --"+target+".")
	f.NoOptDefVal = t.NoOptDefVal
	f.DefValue = t.DefValue
}

// Var adds a Koordinator flag that sets a Koord option through value, for flags whose value needs converting
// (e.g. whole seconds into a duration).
func (s *Set) Var(value pflag.Value, name, usage string) {
	s.fs.Var(value, name, usage)
}

// IgnoreBool adds boolean flags that are accepted, with or without a value, and ignored for reason.
func (s *Set) IgnoreBool(reason string, names ...string) {
	for _, n := range names {
		f := s.fs.VarPF(&ignored{}, n, "", "Accepted for compatibility with Koordinator and ignored: "+reason+".")
		f.NoOptDefVal = "true"
		s.hide(n, reason)
	}
}

// IgnoreValue adds flags that take a value and are accepted and ignored for reason.
func (s *Set) IgnoreValue(reason string, names ...string) {
	for _, n := range names {
		s.fs.Var(&ignored{}, n, "Accepted for compatibility with Koordinator and ignored: "+reason+".")
		s.hide(n, reason)
	}
}

func (s *Set) hide(name, reason string) {
	s.reasons[name] = reason
	// Hidden from --help, which lists what Koord does; docs/install.md lists what it accepts.
	_ = s.fs.MarkHidden(name)
}

// LegacyKlog adds klog's own flags, which Koordinator's manifests pass (--logtostderr=true) and which
// component-base's logging no longer has. Koord logs to stderr; -v and --vmodule keep working.
func (s *Set) LegacyKlog() {
	s.IgnoreBool("Koord always logs to stderr", "logtostderr", "alsologtostderr", "skip-headers", "skip-log-headers",
		"add-dir-header", "one-output", "legacy-stderr-threshold-behavior")
	s.IgnoreValue("Koord always logs to stderr", "log-dir", "log-file", "log-file-max-size", "stderrthreshold",
		"log-backtrace-at")
}

// Ignored returns the ignored flags the parsed command line set, sorted.
func (s *Set) Ignored() []string {
	var out []string
	s.fs.Visit(func(f *pflag.Flag) {
		if _, ok := s.reasons[f.Name]; ok {
			out = append(out, f.Name)
		}
	})
	slices.Sort(out)
	return out
}

// LogIgnored logs, once, each ignored flag the command line set and why it has no effect.
func (s *Set) LogIgnored(logger logr.Logger) {
	for _, n := range s.Ignored() {
		logger.Info("Ignored a Koordinator flag", "flag", "--"+n, "reason", s.reasons[n])
	}
}

// SingleDash rewrites Go-style long flags (-addr=:9316, -feature-gates X) into pflag's --addr=:9316 when the
// name is a long flag of fs, so that Koordinator's koordlet command lines parse. One-letter flags (-v=4) and
// everything after "--" stay as they are.
func SingleDash(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && fs.Lookup(name) != nil {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}

// ignored is the value of an ignored flag.
type ignored struct{ value string }

func (v *ignored) String() string     { return v.value }
func (v *ignored) Set(s string) error { v.value = s; return nil }
func (v *ignored) Type() string       { return "string" }
