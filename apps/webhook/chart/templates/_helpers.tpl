{{- define "signet.fullname" -}}
{{- printf "%s-webhook" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "signet.labels" -}}
app.kubernetes.io/name: signet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "signet.selectorLabels" -}}
app.kubernetes.io/name: signet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: admission-webhook
{{- end -}}
