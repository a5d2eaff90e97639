{{/* What each process is run with: its command and its non-secret environment. The chart test
     runs exactly these commands with exactly this environment against real Redis and Postgres. */}}

{{/* --no-memory-reducer: V8 shrinks an idle process's heap, young generation included, so the
     first seconds of traffic after every idle spell ran on a small young generation (preset off at
     one connection: 415-460 us of CPU per request against 326 with the reducer off; bench/README.md). */}}
{{- define "cg.gatewayCommand" -}}
["node", "--no-memory-reducer", "apps/gateway/dist/main.js"]
{{- end -}}

{{- define "cg.adminCommand" -}}
["node", "apps/admin/dist/main.js"]
{{- end -}}

{{- define "cg.migrationCommand" -}}
["node", "libs/storage/dist/sql/migrate-cli.js"]
{{- end -}}

{{- define "cg.gatewayEnv" -}}
HOST: "0.0.0.0"
PORT: {{ .Values.gateway.port | quote }}
HOT_STORE: redis
DURABLE_STORE: postgres
MIGRATE_ON_BOOT: "false"
CG_ENCRYPTION_KEY_REQUIRED: "true"
OPENAI_UPSTREAM: {{ .Values.config.openaiUpstream | quote }}
ANTHROPIC_UPSTREAM: {{ .Values.config.anthropicUpstream | quote }}
LOG_LEVEL: {{ .Values.config.logLevel | quote }}
RETENTION_DAYS: {{ .Values.config.retentionDays | quote }}
PG_POOL_MAX: {{ .Values.postgres.poolMax | quote }}
CACHE_MODE: {{ .Values.config.cacheMode | quote }}
REQUIRE_TENANT_KEY: {{ .Values.config.requireTenantKey | quote }}
TENANT_LABEL_CAP: {{ .Values.config.tenantLabelCap | quote }}
BODY_LIMIT_BYTES: {{ .Values.gateway.bodyLimitBytes | int64 | quote }}
BODY_READ_TIMEOUT_MS: {{ mul .Values.gateway.bodyReadTimeoutSeconds 1000 | quote }}
BODY_SLOTS_PER_CLIENT: {{ .Values.gateway.bodySlotsPerClient | quote }}
EXPAND_CALLS_PER_ROUND: {{ .Values.gateway.expandCallsPerRound | quote }}
EXPAND_BYTES_PER_ANSWER: {{ .Values.gateway.expandBytesPerAnswer | int64 | quote }}
COMPACT_PER_MINUTE: {{ .Values.gateway.compactPerMinute | quote }}
TURN_CACHE_MB: {{ .Values.gateway.turnCacheMb | quote }}
WRITE_BEHIND_MAX_MB: {{ .Values.gateway.writeBehindMaxMb | quote }}
UPSTREAM_HEADER_TIMEOUT_MS: {{ mul .Values.gateway.upstreamHeaderTimeoutSeconds 1000 | quote }}
UPSTREAM_IDLE_TIMEOUT_MS: {{ mul .Values.gateway.upstreamIdleTimeoutSeconds 1000 | quote }}
{{- /* The in-app drain ends open streams this long after SIGTERM; the grace period adds the preStop
   sleep and 15 s for the flush and exit (gateway-deployment.yaml), so SIGKILL never cuts a stream. */}}
DRAIN_DEADLINE_MS: {{ mul .Values.gateway.longestStreamSeconds 1000 | quote }}
{{- with .Values.config.redisPrefix }}
REDIS_PREFIX: {{ . | quote }}
{{- end }}
{{- with .Values.tracing.otlpEndpoint }}
OTEL_EXPORTER_OTLP_ENDPOINT: {{ . | quote }}
OTEL_SERVICE_NAME: {{ $.Values.tracing.serviceName | quote }}
{{- end }}
{{- with .Values.config.cloud }}
{{- with .bedrockUpstream }}
BEDROCK_UPSTREAM: {{ . | quote }}
{{- end }}
{{- with .awsRegion }}
AWS_REGION: {{ . | quote }}
{{- end }}
{{- with .vertexUpstream }}
VERTEX_UPSTREAM: {{ . | quote }}
{{- end }}
{{- end }}
{{- with .Values.config.cheapModel }}
{{- if .model }}
CHEAP_MODEL: {{ .model | quote }}
{{- with .provider }}
CHEAP_MODEL_PROVIDER: {{ . | quote }}
{{- end }}
{{- with .base }}
CHEAP_MODEL_BASE: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The ops token of /metrics and /readyz's detail; optional in the Secret (without it /metrics is 401). */}}
{{- define "cg.opsTokenEnv" -}}
- name: OPS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.keys.opsToken }}
      optional: true
{{- end -}}

{{/* A Bedrock API key for the gateway's calls to Bedrock; optional in the Secret (IRSA needs none). */}}
{{- define "cg.bedrockTokenEnv" -}}
- name: AWS_BEARER_TOKEN_BEDROCK
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.keys.bedrockBearerToken }}
      optional: true
{{- end -}}

{{/* The compaction model's key, when a compaction model is configured; optional in the Secret. */}}
{{- define "cg.cheapModelKeyEnv" -}}
{{- if .Values.config.cheapModel.model }}
- name: CHEAP_MODEL_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.keys.cheapModelKey }}
      optional: true
{{- end }}
{{- end -}}

{{- define "cg.adminEnv" -}}
HOST: "0.0.0.0"
ADMIN_PORT: {{ .Values.admin.port | quote }}
HOT_STORE: redis
DURABLE_STORE: postgres
MIGRATE_ON_BOOT: "false"
ADMIN_AUTH_FAILURES_PER_MINUTE: {{ .Values.admin.authFailuresPerMinute | quote }}
PG_POOL_MAX: {{ .Values.postgres.poolMax | quote }}
CG_ENCRYPTION_KEY_REQUIRED: "true"
LOG_LEVEL: {{ .Values.config.logLevel | quote }}
{{- with .Values.config.redisPrefix }}
REDIS_PREFIX: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The Secret-backed variables of the gateway and the admin. */}}
{{- define "cg.storeSecretEnv" -}}
{{ include "cg.secretEnv" (dict "root" . "name" "DATABASE_URL" "key" .Values.secrets.keys.databaseUrl) }}
{{- $redis := .Values.redis | default dict }}
{{- if eq ($redis.topology | default "single") "cluster" }}
{{ include "cg.secretEnv" (dict "root" . "name" "REDIS_CLUSTER_NODES" "key" .Values.secrets.keys.redisClusterNodes) }}
{{- else if eq $redis.topology "sentinel" }}
{{ include "cg.secretEnv" (dict "root" . "name" "REDIS_SENTINELS" "key" .Values.secrets.keys.redisSentinels) }}
- name: REDIS_SENTINEL_MASTER
  value: {{ required "redis.sentinelMaster is required with redis.topology sentinel" $redis.sentinelMaster | quote }}
- name: REDIS_SENTINEL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.secrets.existingSecret }}
      key: {{ .Values.secrets.keys.redisSentinelPassword }}
      optional: true
{{- else }}
{{ include "cg.secretEnv" (dict "root" . "name" "REDIS_URL" "key" .Values.secrets.keys.redisUrl) }}
{{- end }}
{{ include "cg.secretEnv" (dict "root" . "name" "CG_ENCRYPTION_KEY" "key" .Values.secrets.keys.encryptionKey) }}
{{- end -}}

{{- define "cg.adminReadyPath" -}}
/readyz
{{- end -}}
