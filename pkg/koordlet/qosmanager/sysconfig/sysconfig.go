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

// Package sysconfig is the node's kernel memory settings strategy (feature gate SystemConfig), driven by the
// NodeSLO's systemStrategy, which koord-manager renders from the slo-controller-config's system-config:
//
//   - minFreeKbytesFactor: /proc/sys/vm/min_free_kbytes = factor × the node's memory capacity (kB; kubelet
//     reports MemTotal) / 10000, refused outside 10 MiB to 5 GiB;
//   - watermarkScaleFactor: /proc/sys/vm/watermark_scale_factor, 1 to 400;
//   - memcgReapBackGround: /sys/kernel/mm/memcg_reaper/reap_background (Anolis OS kernels), 0 or 1; a kernel
//     without it is said once.
//
// A knob the NodeSLO leaves unset is left as the node has it. The value a knob had before the strategy first
// wrote it is kept, and written back once when the NodeSLO unsets it again (or the strategy is told to
// Restore, at shutdown); a koordlet restarted while a knob is set takes the value it finds as the original.
// A value out of range is an error naming the field, and the knob keeps what it has.
package sysconfig

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"k8s.io/klog/v2"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordlet/qosmanager"
	"github.com/koord-dev/koord/pkg/util/sysfile"
)

// Name is the strategy's name in logs and metrics.
const Name = "sysconfig"

// The bounds of the knobs' values, as Koordinator validates them.
const (
	minFreeKbytesMin        = 10 * 1024
	minFreeKbytesMax        = 5 * 1024 * 1024
	watermarkScaleFactorMin = 1
	watermarkScaleFactorMax = 400
)

// knob is one kernel setting.
type knob struct {
	// field names the NodeSLO field in errors.
	field string
	// path is the file, under the proc or sys root.
	path string
	// optional knobs exist only in some kernels; a missing file is said once.
	optional bool
	// want returns the value the strategy writes, or false when the field is unset.
	want func(s *slov1alpha1.SystemStrategy, memTotalKB int64) (int64, bool, error)
}

// Strategy writes the node's kernel memory settings. Create it with New.
type Strategy struct {
	knobs []knob
	// originals holds, by path, what a knob had before the strategy first wrote it.
	originals map[string]int64
	// unsupported holds the optional knobs already said to be missing.
	unsupported map[string]bool
}

// New returns the strategy for the node whose /proc is at procRoot and /sys at sysRoot.
func New(procRoot, sysRoot string) *Strategy {
	return &Strategy{
		originals:   map[string]int64{},
		unsupported: map[string]bool{},
		knobs: []knob{
			{field: "minFreeKbytesFactor", path: filepath.Join(procRoot, "sys", "vm", "min_free_kbytes"),
				want: func(s *slov1alpha1.SystemStrategy, memTotalKB int64) (int64, bool, error) {
					if s.MinFreeKbytesFactor == nil {
						return 0, false, nil
					}
					v := *s.MinFreeKbytesFactor * memTotalKB / 10000
					if v < minFreeKbytesMin || v > minFreeKbytesMax {
						return 0, true, fmt.Errorf("minFreeKbytesFactor %d: min_free_kbytes would be %d kB of %d kB, outside %d to %d",
							*s.MinFreeKbytesFactor, v, memTotalKB, minFreeKbytesMin, minFreeKbytesMax)
					}
					return v, true, nil
				}},
			{field: "watermarkScaleFactor", path: filepath.Join(procRoot, "sys", "vm", "watermark_scale_factor"),
				want: func(s *slov1alpha1.SystemStrategy, _ int64) (int64, bool, error) {
					if s.WatermarkScaleFactor == nil {
						return 0, false, nil
					}
					v := *s.WatermarkScaleFactor
					if v < watermarkScaleFactorMin || v > watermarkScaleFactorMax {
						return 0, true, fmt.Errorf("watermarkScaleFactor %d: outside %d to %d", v, watermarkScaleFactorMin, watermarkScaleFactorMax)
					}
					return v, true, nil
				}},
			{field: "memcgReapBackGround", path: filepath.Join(sysRoot, "kernel", "mm", "memcg_reaper", "reap_background"), optional: true,
				want: func(s *slov1alpha1.SystemStrategy, _ int64) (int64, bool, error) {
					if s.MemcgReapBackGround == nil {
						return 0, false, nil
					}
					v := *s.MemcgReapBackGround
					if v != 0 && v != 1 {
						return 0, true, fmt.Errorf("memcgReapBackGround %d: want 0 or 1", v)
					}
					return v, true, nil
				}},
		},
	}
}

// Name implements qosmanager.Strategy.
func (s *Strategy) Name() string { return Name }

// Run implements qosmanager.Strategy: it writes each knob the NodeSLO sets, when it differs, and writes back the
// original of each knob it set before and the NodeSLO no longer does.
func (s *Strategy) Run(ctx context.Context, st *qosmanager.State) error {
	strategy := &slov1alpha1.SystemStrategy{}
	if st.NodeSLO != nil && st.NodeSLO.Spec.SystemStrategy != nil {
		strategy = st.NodeSLO.Spec.SystemStrategy
	}
	var memTotalKB int64
	if st.Node != nil {
		memTotalKB = qosmanager.NodeMemoryCapacity(st.Node) / 1024
	}
	var errs []error
	for _, k := range s.knobs {
		want, set, err := k.want(strategy, memTotalKB)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("systemStrategy.%w", err))
		case set:
			errs = append(errs, s.apply(ctx, k, want))
		default:
			errs = append(errs, s.restore(ctx, k))
		}
	}
	return errors.Join(errs...)
}

// Restore writes back the original of every knob the strategy set.
func (s *Strategy) Restore(ctx context.Context) error {
	var errs []error
	for _, k := range s.knobs {
		errs = append(errs, s.restore(ctx, k))
	}
	return errors.Join(errs...)
}

// apply writes want to k when it differs, keeping the original first.
func (s *Strategy) apply(ctx context.Context, k knob, want int64) error {
	cur, err := sysfile.ReadInt(k.path)
	if err != nil {
		if k.optional && errors.Is(err, fs.ErrNotExist) {
			if !s.unsupported[k.path] {
				klog.FromContext(ctx).Info("Not supported on this kernel; the setting is ignored", "field", "systemStrategy."+k.field, "file", k.path)
				s.unsupported[k.path] = true
			}
			return nil
		}
		return fmt.Errorf("systemStrategy.%s: %w", k.field, err)
	}
	if cur == want {
		return nil
	}
	if _, kept := s.originals[k.path]; !kept {
		s.originals[k.path] = cur
	}
	if err := sysfile.WriteInt(k.path, want); err != nil {
		return fmt.Errorf("systemStrategy.%s: %w", k.field, err)
	}
	klog.FromContext(ctx).V(2).Info("Set a kernel setting", "field", "systemStrategy."+k.field, "file", k.path, "from", cur, "to", want)
	return nil
}

// restore writes back the original of k, if the strategy set it, once.
func (s *Strategy) restore(ctx context.Context, k knob) error {
	orig, kept := s.originals[k.path]
	if !kept {
		return nil
	}
	if err := sysfile.WriteInt(k.path, orig); err != nil {
		return fmt.Errorf("systemStrategy.%s: restore %d: %w", k.field, orig, err)
	}
	delete(s.originals, k.path)
	klog.FromContext(ctx).V(2).Info("Restored a kernel setting", "field", "systemStrategy."+k.field, "file", k.path, "to", orig)
	return nil
}
