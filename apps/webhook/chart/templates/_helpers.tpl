{{- define "signet.fullname" -}}
{{- .Values.fullnameOverride | default (printf "%s-webhook" .Release.Name) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- /* The ServiceAccount the Pods run as: the chart's, or an existing one (serviceAccount.create=false). */ -}}
{{- define "signet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "signet.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- /* registry/repository, then @digest when one is given, else :tag (default: the appVersion). */ -}}
{{- define "signet.image" -}}
{{- $image := .Values.image -}}
{{- $repository := $image.repository -}}
{{- with $image.registry }}{{ $repository = printf "%s/%s" (trimSuffix "/" .) $repository }}{{ end -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository ($image.tag | default .Chart.AppVersion) -}}
{{- end -}}
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

{{- /* The workload webhooks' namespaceSelector: the user's, or the opt-in label; always without
Signet's own namespace and kube-system (webhook-configurations.ts does the same). */ -}}
{{- define "signet.namespaceSelector" -}}
{{- $selector := .Values.webhook.namespaceSelector | default dict -}}
{{- $labels := $selector.matchLabels | default dict -}}
{{- $expressions := $selector.matchExpressions | default list -}}
{{- if and (not $labels) (not $expressions) -}}
{{- $expressions = list (dict "key" "policy.sigstore.dev/include" "operator" "In" "values" (list "true")) -}}
{{- end -}}
{{- $excluded := dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list .Release.Namespace "kube-system" | uniq) -}}
{{- with $labels }}
matchLabels:
  {{- toYaml . | nindent 2 }}
{{- end }}
matchExpressions:
  {{- toYaml (append $expressions $excluded) | nindent 2 }}
{{- end -}}

{{- /* Whether a PodDisruptionBudget is rendered: as asked, else when more than one replica runs. */ -}}
{{- define "signet.pdbEnabled" -}}
{{- $enabled := .Values.podDisruptionBudget.enabled -}}
{{- if kindIs "invalid" $enabled -}}
{{- if gt (int .Values.replicaCount) 1 }}true{{ end -}}
{{- else if $enabled -}}
true
{{- end -}}
{{- end -}}

{{- /* The cert-manager Certificate of the serving certificate (its Secret is tls.secretName). */ -}}
{{- define "signet.certificateName" -}}
{{- printf "%s-tls" (include "signet.fullname" .) -}}
{{- end -}}

{{- /* Combinations the schema cannot express, refused with a message before anything renders. */ -}}
{{- define "signet.checkValues" -}}
{{- if and (eq .Values.tls.mode "secret") (not .Values.tls.caBundle) -}}
{{- fail "tls.mode=secret needs tls.caBundle: the base64 PEM of the CA that signed the Secret's certificate (without it the API server cannot trust Signet and every review fails); use tls.mode=cert-manager to have cert-manager inject it, or tls.mode=self-managed" -}}
{{- end -}}
{{- if and (ne .Values.tls.mode "secret") .Values.tls.caBundle -}}
{{- fail (printf "tls.caBundle is only used with tls.mode=secret: with tls.mode=%s the caBundle is written for you" .Values.tls.mode) -}}
{{- end -}}
{{- if and .Values.tls.clientAuth.configMap .Values.tls.clientAuth.secret -}}
{{- fail "tls.clientAuth takes the client CA from a configMap or from a secret, not both" -}}
{{- end -}}
{{- end -}}
