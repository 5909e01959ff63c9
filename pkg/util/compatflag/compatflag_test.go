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

package compatflag

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

type settings struct {
	Addr     string
	Elect    bool
	Interval time.Duration
}

func newFlags() (*pflag.FlagSet, *Set, *settings) {
	var s settings
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.StringVar(&s.Addr, "metrics-bind-address", ":8080", "")
	fs.BoolVar(&s.Elect, "leader-elect", false, "")
	fs.DurationVar(&s.Interval, "collect-interval", time.Second, "")
	fs.IntP("verbosity", "v", 0, "")
	c := New(fs)
	c.Alias("metrics-addr", "metrics-bind-address")
	c.Alias("enable-leader-election", "leader-elect")
	c.Alias("collect-res-used-interval", "collect-interval")
	c.IgnoreBool("no pprof", "enable-pprof")
	c.IgnoreValue("no tsdb", "tsdb-path")
	c.LegacyKlog()
	return fs, c, &s
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		args        []string
		want        settings
		wantIgnored []string
	}{
		"koord names": {
			args: []string{"--metrics-bind-address=:1", "--leader-elect", "--collect-interval=2s"},
			want: settings{Addr: ":1", Elect: true, Interval: 2 * time.Second},
		},
		"koordinator names set the same options": {
			args: []string{"--metrics-addr=:2", "--enable-leader-election", "--collect-res-used-interval", "3s"},
			want: settings{Addr: ":2", Elect: true, Interval: 3 * time.Second},
		},
		"ignored flags and klog's legacy flags, with underscores": {
			args:        []string{"--enable-pprof", "--tsdb-path=/metric-data/", "--logtostderr=true", "--log_dir=/tmp", "-v=4"},
			want:        settings{Addr: ":8080", Interval: time.Second},
			wantIgnored: []string{"enable-pprof", "log-dir", "logtostderr", "tsdb-path"},
		},
		"go-style single dashes": {
			args:        []string{"-metrics-addr=:9316", "-tsdb-path", "/x", "-enable-pprof=false", "-v=2"},
			want:        settings{Addr: ":9316", Interval: time.Second},
			wantIgnored: []string{"enable-pprof", "tsdb-path"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fs, c, got := newFlags()
			if err := fs.Parse(SingleDash(fs, tc.args)); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIgnored, c.Ignored()); diff != "" {
				t.Errorf("Ignored (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSingleDash(t *testing.T) {
	fs, _, _ := newFlags()
	got := SingleDash(fs, []string{"-metrics-addr=:1", "-v=4", "-unknown=1", "--leader-elect", "--", "-metrics-addr"})
	want := []string{"--metrics-addr=:1", "-v=4", "-unknown=1", "--leader-elect", "--", "-metrics-addr"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SingleDash (-want +got):\n%s", diff)
	}
	if err := fs.Parse([]string{"-unknown=1"}); err == nil {
		t.Error("an unknown Go-style flag parsed; want pflag's error")
	}
}

func TestIgnoredHiddenFromHelp(t *testing.T) {
	fs, _, _ := newFlags()
	if f := fs.Lookup("tsdb-path"); f == nil || !f.Hidden {
		t.Errorf("tsdb-path: %+v, want a hidden flag", f)
	}
	if f := fs.Lookup("metrics-addr"); f == nil || f.Hidden || f.Usage != "Koordinator's name of --metrics-bind-address." {
		t.Errorf("metrics-addr: %+v, want a visible alias", f)
	}
}
