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

{{/* An image reference from (dict "image" {repository, tag} "root" $): the tag defaults to the appVersion. */}}
{{- define "capi-dns.image" -}}
{{- printf "%s:%s" .image.repository (.image.tag | default .root.Chart.AppVersion) -}}
{{- end }}
