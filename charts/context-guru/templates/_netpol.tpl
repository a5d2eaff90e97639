{{/* NetworkPolicy building blocks. Every egress rule names its destinations (a rule with no `to`
     would allow everything, the metadata service included), and every address range carries the
     blocked addresses that fall inside it as `except`. */}}

{{/* An IPv4 address as an integer. */}}
{{- define "cg.ip4int" -}}
{{- $o := split "." . -}}
{{- add (mul (atoi $o._0) 16777216) (mul (atoi $o._1) 65536) (mul (atoi $o._2) 256) (atoi $o._3) -}}
{{- end -}}

{{/* "true" when the address of `blocked` (a CIDR) lies inside `cidr`. IPv6: only ::/0 is known to contain it. */}}
{{- define "cg.cidrContains" -}}
{{- $net := split "/" .cidr -}}
{{- $addr := (split "/" .blocked)._0 -}}
{{- $v6 := contains ":" $net._0 -}}
{{- if ne $v6 (contains ":" $addr) -}}
false
{{- else if eq (atoi $net._1) 0 -}}
true
{{- else if $v6 -}}
false
{{- else -}}
{{- $span := 1 -}}
{{- range until (sub 32 (atoi $net._1) | int) }}{{ $span = mul $span 2 }}{{ end -}}
{{- if eq (div (include "cg.ip4int" $net._0 | atoi) $span) (div (include "cg.ip4int" $addr | atoi) $span) -}}
true
{{- else -}}
false
{{- end -}}
{{- end -}}
{{- end -}}

{{/* `to` peers for a list of CIDRs, each with the blocked addresses it contains cut out. */}}
{{- define "cg.ipBlocks" -}}
{{- $root := .root -}}
{{- range .cidrs }}
{{- $cidr := . }}
{{- $except := list }}
{{- range $root.Values.networkPolicy.blockedCidrs }}
{{- if and (ne . $cidr) (eq (include "cg.cidrContains" (dict "cidr" $cidr "blocked" .)) "true") }}
{{- $except = append $except . }}
{{- end }}
{{- end }}
- ipBlock:
    cidr: {{ $cidr }}
    {{- with $except }}
    except:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}
{{- end -}}

{{/* Egress to a store (redis | postgres): its CIDRs, its in-cluster pods, or any non-blocked address. */}}
{{- define "cg.storeEgress" -}}
{{- $s := .store -}}
- ports:
    - port: {{ $s.port }}
      protocol: TCP
    {{- range $s.extraPorts }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
  to:
    {{- if $s.cidrs }}
    {{- include "cg.ipBlocks" (dict "root" .root "cidrs" $s.cidrs) | trim | nindent 4 }}
    {{- end }}
    {{- if or $s.namespace $s.podLabels }}
    - podSelector:
        matchLabels:
          {{- toYaml (default (dict) $s.podLabels) | nindent 10 }}
      {{- if $s.namespace }}
      namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: {{ $s.namespace }}
      {{- end }}
    {{- end }}
    {{- if not (or $s.cidrs $s.namespace $s.podLabels) }}
    {{- include "cg.ipBlocks" (dict "root" .root "cidrs" (list "0.0.0.0/0" "::/0")) | trim | nindent 4 }}
    {{- end }}
{{- end -}}

{{- define "cg.dnsEgress" -}}
{{- $d := .Values.networkPolicy.egress.dns -}}
- ports:
    - { port: 53, protocol: UDP }
    - { port: 53, protocol: TCP }
  to:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: {{ $d.namespace }}
      podSelector:
        matchLabels:
          {{- toYaml $d.podLabels | nindent 10 }}
{{- end -}}

{{/* Ingress from the named namespaces (the release's own always included). */}}
{{- define "cg.fromNamespaces" -}}
- namespaceSelector:
    matchExpressions:
      - key: kubernetes.io/metadata.name
        operator: In
        values:
          {{- toYaml (uniq (prepend .namespaces .root.Release.Namespace)) | nindent 10 }}
{{- end -}}
