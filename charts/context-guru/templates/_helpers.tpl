{{/* Names, labels and the pieces every pod of the release shares. */}}

{{- define "cg.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cg.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Selector labels of one component (gateway | admin | migration): stable across upgrades. */}}
{{- define "cg.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cg.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "cg.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "cg.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: context-guru
{{- end -}}

{{/* Labels of release-wide objects (ConfigMaps, ServiceAccount). */}}
{{- define "cg.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "cg.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: context-guru
{{- end -}}

{{- define "cg.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "cg.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cg.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Pod-level hardening: non-root (the image's `node` user, uid 1000), default seccomp. */}}
{{- define "cg.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Container-level hardening: read-only root filesystem, no privilege escalation, no capabilities. */}}
{{- define "cg.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* The one writable place: /tmp, an emptyDir (the root filesystem is read-only). */}}
{{- define "cg.tmpVolumeMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}
{{- define "cg.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- end -}}

{{/* A key of the existing Secret as an env var; the Secret is required to hold it. */}}
{{- define "cg.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .root.Values.secrets.existingSecret }}
      key: {{ .key }}
{{- end -}}

{{/* Where one component's pods run: nodeSelector, tolerations, affinity, priorityClassName and the
     topology spread constraints — the chart's own (`builtin`), then the component's
     topologySpreadConstraints, where one without a labelSelector counts this component's pods. */}}
{{- define "cg.scheduling" -}}
{{- $c := .values -}}
{{- $selector := include "cg.selectorLabels" (dict "root" .root "component" .component) | fromYaml -}}
{{- $spread := list -}}
{{- range concat (.builtin | default list) ($c.topologySpreadConstraints | default list) }}
{{- $t := deepCopy . }}
{{- if not (hasKey $t "labelSelector") }}{{ $_ := set $t "labelSelector" (dict "matchLabels" $selector) }}{{ end }}
{{- $spread = append $spread $t }}
{{- end -}}
{{- with $c.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $spread }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The chart's mounts and volumes, then extraVolumeMounts / extraVolumes (every pod shares them). */}}
{{- define "cg.volumeMounts" -}}
{{ include "cg.tmpVolumeMount" . }}
{{- with .Values.extraVolumeMounts }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "cg.volumes" -}}
{{ include "cg.tmpVolume" . }}
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The most Postgres connections the release holds: every gateway pod the HPA may run, every
     admin pod, each with postgres.poolMax, and the migration Job's one. */}}
{{- define "cg.pgConnections" -}}
{{- $g := .Values.gateway -}}
{{- $gw := ternary $g.autoscaling.maxReplicas $g.replicaCount $g.autoscaling.enabled | int -}}
{{- $adm := ternary .Values.admin.replicaCount 0 .Values.admin.enabled | int -}}
{{- add (mul (add $gw $adm) (int .Values.postgres.poolMax)) 1 -}}
{{- end -}}
