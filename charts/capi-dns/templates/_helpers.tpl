{{/*
Helm's labels, on every object the release itself creates (not on those inside
the ClusterResourceSet's ConfigMaps, which Cluster API creates). The selectors
stay config/'s (app.kubernetes.io/name), so a release can take over objects
`kubectl apply -k config/...` made.
*/}}
{{- define "capi-dns.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The chart's name: nameOverride or capi-dns. */}}
{{- define "capi-dns.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's full name, Helm's convention: fullnameOverride, or the release
name when it holds the chart's name, or both. It prefixes the cluster-wide
objects (ClusterRoles and their bindings), so releases in other namespaces do
not collide; the release capi-dns keeps config/'s names (capi-dns-controller).
*/}}
{{- define "capi-dns.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := include "capi-dns.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* An image reference from (dict "image" {repository, tag, digest} "root" $): by digest when given, else the tag, which defaults to the appVersion. */}}
{{- define "capi-dns.image" -}}
{{- if .image.digest }}
{{- printf "%s@%s" .image.repository .image.digest -}}
{{- else }}
{{- printf "%s:%s" .image.repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- end }}
{{- end }}
