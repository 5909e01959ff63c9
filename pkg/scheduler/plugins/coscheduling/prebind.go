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

package coscheduling

import (
	"context"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
	"github.com/koord-dev/koord/pkg/scheduler/plugins/coscheduling/cache"
)

// bindings are the binding infos of the members a satisfied gang group let go on, until each is bound or
// released: its group's ID and how many members were let go together.
type bindings struct {
	mu    sync.Mutex
	byUID map[types.UID]bindingInfo
}

type bindingInfo struct {
	group   string
	members int
}

// record remembers the binding info of the members uids of a group satisfied together, as Koordinator does
// for groups of more than one member.
func (b *bindings) record(groups []cache.ID, uids []types.UID) {
	if len(uids) <= 1 {
		return
	}
	names := make([]string, len(groups))
	for i, id := range groups {
		names[i] = id.String()
	}
	info := bindingInfo{group: strings.Join(names, ","), members: len(uids)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byUID == nil {
		b.byUID = map[types.UID]bindingInfo{}
	}
	for _, uid := range uids {
		b.byUID[uid] = info
	}
}

func (b *bindings) get(uid types.UID) (bindingInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	info, ok := b.byUID[uid]
	return info, ok
}

func (b *bindings) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.byUID, uid)
}

// PreBindPreFlight lets PreBind run for members that a satisfied gang group let go on together; it skips every
// other pod.
func (p *Plugin) PreBindPreFlight(_ context.Context, _ fwk.CycleState, pod *corev1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	if _, ok := p.bindings.get(pod.UID); !ok {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return &fwk.PreBindPreFlightResult{AllowParallel: true}, nil
}

// PreBind annotates a member of a gang group that was satisfied together with the group's ID (its gangs'
// namespace/name, sorted, comma-separated) and how many members were let go together, as Koordinator's
// Coscheduling does, through DefaultPreBind's one patch when the profile has it. Error when the patch fails.
func (p *Plugin) PreBind(ctx context.Context, cycle fwk.CycleState, pod *corev1.Pod, _ string) *fwk.Status {
	info, ok := p.bindings.get(pod.UID)
	if !ok {
		return nil
	}
	annotations := map[string]string{
		extension.AnnotationBindGangGroupID:     info.group,
		extension.AnnotationBindGangMemberCount: strconv.Itoa(info.members),
	}
	if plugins.PodChangesOf(cycle).Annotate(annotations) {
		return nil
	}
	if err := plugins.PatchPodMetadata(ctx, p.handle.ClientSet(), pod, nil, annotations); err != nil {
		return fwk.AsStatus(err)
	}
	return nil
}
