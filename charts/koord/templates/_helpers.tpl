{{/* The namespace of every namespaced object. */}}
{{- define "koord.namespace" -}}
{{ .Values.installation.namespace }}
{{- end -}}

{{/* Labels of every object: name, instance, version, chart, and part-of koord. */}}
{{- define "koord.labels" -}}
app.kubernetes.io/part-of: koord
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image of a component: (dict "root" $ "image" .Values.<component>.image). */}}
{{- define "koord.image" -}}
{{ .root.Values.imageRepositoryHost }}/{{ .image.repository }}:{{ .image.tag | default .root.Chart.AppVersion }}
{{- end -}}

{{/* imagePullSecrets of a pod, when there are any. */}}
{{- define "koord.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The securityContext of a container that needs no privilege. */}}
{{- define "koord.restrictedSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Affinity of a control-plane Deployment: spread over nodes, then the user's node affinity. */}}
{{- define "koord.deploymentAffinity" -}}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          labelSelector:
            matchExpressions:
              - key: koord-app
                operator: In
                values: [{{ .app }}]
          topologyKey: kubernetes.io/hostname
{{- with .values.nodeAffinity }}
  nodeAffinity:
{{ toYaml . | indent 4 }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
{{ toYaml . | indent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* A generated RBAC file of files/rbac, its namespaced Role moved into the installation namespace. */}}
{{- define "koord.rbacFile" -}}
{{ .root.Files.Get (printf "files/rbac/%s.yaml" .component) | replace "namespace: koordinator-system" (printf "namespace: %s" (include "koord.namespace" .root)) }}
{{- end -}}

{{/* koord-scheduler's configuration: files/koord-scheduler-config.yaml (from config/scheduler) with its lease in
the installation namespace and Coscheduling's enablePreemption from scheduler.enableJobPreemption. */}}
{{- define "koord.schedulerConfig" -}}
{{- $cfg := .Files.Get "files/koord-scheduler-config.yaml" | replace "resourceNamespace: koordinator-system" (printf "resourceNamespace: %s" (include "koord.namespace" .)) -}}
{{- if not (contains "enablePreemption: true" $cfg) -}}
{{- fail "files/koord-scheduler-config.yaml has no Coscheduling enablePreemption: true to turn off" -}}
{{- end -}}
{{- if not .Values.scheduler.enableJobPreemption -}}
{{- $cfg = $cfg | replace "enablePreemption: true" "enablePreemption: false" -}}
{{- end -}}
{{ $cfg }}
{{- end -}}

{{/* koord-descheduler's configuration: files/koord-descheduler-config.yaml (from config/descheduler) with its
lease and excluded namespaces in the installation namespace, /healthz, /readyz and /metrics on one server at
0.0.0.0:descheduler.port, and LowNodeLoad enabled at balance when descheduler.lowNodeLoad.enabled. The file's
anchors are checked on every render, so that a change to it fails here rather than rendering a wrong profile. */}}
{{- define "koord.deschedulerConfig" -}}
{{- $ns := include "koord.namespace" . -}}
{{- $d := .Values.descheduler -}}
{{- $cfg := .Files.Get "files/koord-descheduler-config.yaml" -}}
{{- $kind := "\nkind: DeschedulerConfiguration\n" -}}
{{- if or (not (contains $kind $cfg)) (contains "healthzBindAddress:" $cfg) (contains "metricsBindAddress:" $cfg) -}}
{{- fail "files/koord-descheduler-config.yaml needs a kind: DeschedulerConfiguration line and no bind addresses, for the chart to set them" -}}
{{- end -}}
{{- $addr := printf "0.0.0.0:%d" (int $d.port) -}}
{{- $cfg = $cfg | replace $kind (printf "%shealthzBindAddress: %s\nmetricsBindAddress: %s\n" $kind $addr $addr) -}}
{{- $cfg = $cfg | replace "resourceNamespace: koordinator-system" (printf "resourceNamespace: %s" $ns) -}}
{{- $cfg = $cfg | replace "\n              - koordinator-system\n" (printf "\n              - %s\n" $ns) -}}
{{- $balance := "\n      balance:\n        disabled:\n          - name: \"*\"\n" -}}
{{- if not (contains $balance $cfg) -}}
{{- fail "files/koord-descheduler-config.yaml has no balance extension point disabling \"*\" to enable LowNodeLoad at" -}}
{{- end -}}
{{- if $d.lowNodeLoad.enabled -}}
{{- $cfg = $cfg | replace $balance (printf "%s        enabled:\n          - name: LowNodeLoad\n" $balance) -}}
{{- end -}}
{{ $cfg }}
{{- end -}}
