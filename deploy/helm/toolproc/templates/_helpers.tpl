{{- define "toolproc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "toolproc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "toolproc.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "toolproc.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "toolproc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "toolproc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "toolproc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "toolproc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "toolproc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "toolproc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "toolproc.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- /* The Service's cluster-local name, as Envoy Gateway and Istio address it. */ -}}
{{- define "toolproc.serviceHost" -}}
{{- printf "%s.%s.svc.cluster.local" (include "toolproc.fullname" .) .Release.Namespace -}}
{{- end -}}

{{- define "toolproc.redisName" -}}
{{- printf "%s-redis" (include "toolproc.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "toolproc.socketDir" -}}/run/toolproc{{- end -}}

{{- /* toolproc's config file: the user's config with the addresses the chart owns. */ -}}
{{- define "toolproc.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $server := dict "admin_addr" (printf "0.0.0.0:%d" (int .Values.admin.port)) -}}
{{- if eq .Values.mode "sidecar" -}}
{{- $_ := set $server "grpc_addr" (printf "unix://%s/grpc.sock" (include "toolproc.socketDir" .)) -}}
{{- $_ := set $server "replay_url" (printf "http://127.0.0.1:%d" (int .Values.sidecar.envoy.replayPort)) -}}
{{- else -}}
{{- $_ := set $server "grpc_addr" (printf "0.0.0.0:%d" (int .Values.grpc.port)) -}}
{{- $_ := set $server "replay_url" (required "replayURL is required in gateway mode: the gateway listener or route without ext_proc that toolproc's own requests go through" .Values.replayURL) -}}
{{- end -}}
{{- $_ := set $cfg "server" (merge $server (default (dict) (get $cfg "server"))) -}}
{{- if ne .Values.redis.mode "none" -}}
{{- $store := default (dict) (get $cfg "store") -}}
{{- $redis := default (dict) (get $store "redis") -}}
{{- $_ := set $store "type" "redis" -}}
{{- if eq .Values.redis.mode "bundled" -}}
{{- $_ := set $redis "addr" (printf "%s:6379" (include "toolproc.redisName" .)) -}}
{{- else -}}
{{- $ext := .Values.redis.external -}}
{{- $topology := default "single" $ext.topology -}}
{{- $_ := set $redis "mode" $topology -}}
{{- if eq $topology "single" -}}
{{- $_ := set $redis "addr" (required "redis.external.addr is required with redis.mode external" $ext.addr) -}}
{{- else -}}
{{- if not $ext.addrs -}}
{{- fail (printf "redis.external.addrs is required with redis.external.topology %s" $topology) -}}
{{- end -}}
{{- $_ := set $redis "addrs" $ext.addrs -}}
{{- if eq $topology "sentinel" -}}
{{- $_ := set $redis "master_name" (required "redis.external.masterName is required with redis.external.topology sentinel" $ext.masterName) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $redis "tls" $ext.tls -}}
{{- if .Values.redis.external.passwordSecret.name -}}
{{- $_ := set $redis "password_env" "TOOLPROC_REDIS_PASSWORD" -}}
{{- end -}}
{{- end -}}
{{- $_ := set $store "redis" $redis -}}
{{- $_ := set $cfg "store" $store -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{- /* Its own name label, so toolproc's Service, PodDisruptionBudget and NetworkPolicy
       selectors never match the Redis pods. */ -}}
{{- define "toolproc.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "toolproc.name" . }}-redis
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: redis
{{- end -}}

{{- /* The sidecar Envoy's routes, identical on the agents' and the replay listener. */ -}}
{{- define "toolproc.envoyVirtualHosts" -}}
- name: llm_providers
  domains: ["*"]
  routes:
  - name: healthz
    match: {path: /healthz}
    direct_response:
      status: 200
      body: {inline_string: "ok\n"}
    typed_per_filter_config:
      envoy.filters.http.ext_proc:
        "@type": type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute
        disabled: true
  {{- range .Values.sidecar.providers }}
  - name: {{ .name }}
    match: {prefix: {{ .prefix }}}
    route:
      cluster: {{ .name }}
      timeout: 0s
      auto_host_rewrite: true
      retry_policy:
        retry_on: connect-failure,refused-stream
        num_retries: 2
    request_body_buffer_limit: {{ int $.Values.sidecar.envoy.bufferLimitBytes }}
    {{- if and .profile (ne .profile "default") }}
    typed_per_filter_config:
      envoy.filters.http.ext_proc:
        "@type": type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute
        overrides:
          grpc_initial_metadata:
          - key: x-toolproc-profile
            value: {{ .profile }}
    {{- end }}
  {{- end }}
{{- end -}}
