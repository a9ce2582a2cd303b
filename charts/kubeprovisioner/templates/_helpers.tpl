{{/* Chart name, overridable. */}}
{{- define "kubeprovisioner.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Resource name prefix: the release name when it already contains the chart name, else
<release>-<chart>. Kept at 50 characters so suffixed names (-metrics-reader) fit in 63.
*/}}
{{- define "kubeprovisioner.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "kubeprovisioner.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "kubeprovisioner.labels" -}}
helm.sh/chart: {{ include "kubeprovisioner.chart" . }}
{{ include "kubeprovisioner.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kubeprovisioner
{{- end }}

{{/* Selector labels: immutable in a Deployment, so never add to them in an upgrade. */}}
{{- define "kubeprovisioner.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubeprovisioner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/*
The ServiceAccount the operator runs as: serviceAccount.name, or the full name for the one the
chart creates. Never the namespace's `default`: serviceAccount.create=false requires a name
(kubeprovisioner.validate).
*/}}
{{- define "kubeprovisioner.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "kubeprovisioner.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository[:tag][@digest] */}}
{{- define "kubeprovisioner.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* Name of the metrics port: https when secure, http otherwise. */}}
{{- define "kubeprovisioner.metricsPortName" -}}
{{- if .Values.metrics.secure }}https{{ else }}http{{ end }}
{{- end }}

{{/*
Combinations values.schema.json cannot express. Each failure names the values involved.
*/}}
{{- define "kubeprovisioner.validate" -}}
{{- if and .Values.aws.existingSecret .Values.aws.roleArn }}
{{- fail "aws.existingSecret and aws.roleArn are mutually exclusive: use static keys from a Secret or IRSA, not both" }}
{{- end }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) }}
{{- fail "serviceAccount.create=false requires serviceAccount.name: create a ServiceAccount for the operator in the release namespace (with its IRSA annotation or EKS Pod Identity association) and name it; the chart never runs the operator as, nor binds its roles to, the namespace's default ServiceAccount" }}
{{- end }}
{{- if and .Values.serviceAccount.annotations (not .Values.serviceAccount.create) }}
{{- fail (printf "serviceAccount.annotations annotate the ServiceAccount the chart creates, and serviceAccount.create=false creates none: put %s on ServiceAccount %s yourself and leave serviceAccount.annotations empty, or set serviceAccount.create=true" (keys .Values.serviceAccount.annotations | sortAlpha | join ", ") .Values.serviceAccount.name) }}
{{- end }}
{{- if and .Values.aws.roleArn (not .Values.serviceAccount.create) }}
{{- fail (printf "aws.roleArn annotates the ServiceAccount the chart creates, and serviceAccount.create=false creates none: annotate ServiceAccount %s yourself (eks.amazonaws.com/role-arn) and leave aws.roleArn empty, or set serviceAccount.create=true" (include "kubeprovisioner.serviceAccountName" .)) }}
{{- end }}
{{- with index .Values.serviceAccount.annotations "eks.amazonaws.com/role-arn" }}
{{- if and $.Values.aws.roleArn (ne . $.Values.aws.roleArn) }}
{{- fail "aws.roleArn and serviceAccount.annotations.eks.amazonaws.com/role-arn name different roles: set one of them" }}
{{- end }}
{{- end }}
{{- if not (include "kubeprovisioner.enabledControllers" .) }}
{{- fail "controllers: every kind is disabled (controllers.<kind>.enabled=false); enable at least one" }}
{{- end }}
{{- if eq .Values.installScope "namespace" }}
{{- $watched := include "kubeprovisioner.watchNamespaces" . | fromYamlArray }}
{{- range .Values.outputs.secretNamespaces }}
{{- if not (has . $watched) }}
{{- fail (printf "outputs.secretNamespaces names %s, which installScope=namespace does not watch: add it to controller.watchNamespaces or remove it" .) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 requires leaderElection.enabled=true: without it every replica would reconcile the same objects" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.serviceMonitor.enabled requires metrics.enabled=true" }}
{{- end }}
{{- if and .Values.metrics.prometheusRule.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.prometheusRule.enabled requires metrics.enabled=true" }}
{{- end }}
{{- if and .Values.metrics.dashboard.enabled (not .Values.metrics.enabled) }}
{{- fail "metrics.dashboard.enabled requires metrics.enabled=true" }}
{{- end }}
{{- if and .Values.metrics.enabled (eq (int .Values.metrics.port) (int .Values.health.port)) }}
{{- fail "metrics.port and health.port must differ" }}
{{- end }}
{{- end }}

{{/* Environment of the manager container: AWS settings and extraEnv. Empty when none is set. */}}
{{- define "kubeprovisioner.env" -}}
# The Pod's own name: Events about the operator's change-event queue name it.
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- with .Values.aws.region }}
- name: AWS_REGION
  value: {{ . | quote }}
{{- end }}
{{- include "kubeprovisioner.endpointEnv" . }}
{{- with .Values.aws.existingSecret }}
- name: AWS_ACCESS_KEY_ID
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.aws.existingSecretKeys.accessKeyId }}
      {{- if $.Values.aws.existingSecretOptional }}
      optional: true
      {{- end }}
- name: AWS_SECRET_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.aws.existingSecretKeys.secretAccessKey }}
      {{- if $.Values.aws.existingSecretOptional }}
      optional: true
      {{- end }}
{{- with $.Values.aws.existingSecretKeys.sessionToken }}
- name: AWS_SESSION_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $.Values.aws.existingSecret }}
      key: {{ . }}
      optional: true
{{- end }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* PromQL label matchers selecting this release's operator series, as the ServiceMonitor labels them. */}}
{{- define "kubeprovisioner.promSelector" -}}
namespace="{{ .Release.Namespace }}",job="{{ include "kubeprovisioner.fullname" . }}-metrics"
{{- end }}

{{/*
AWS error codes meaning "slow down", as a regular expression: the throttled class of
src/aws/error-codes.ts (test/e2e/prometheus-rules.test.ts checks that the two agree).
*/}}
{{- define "kubeprovisioner.awsThrottleCodes" -}}
.*Throttl.*|RequestLimitExceeded|RequestResourceCountExceeded|SlowDown|TooManyRequestsException|BandwidthLimitExceeded|PriorRequestNotComplete
{{- end }}

{{/*
The IAM role of IRSA on the ServiceAccount the chart creates: aws.roleArn, or the
eks.amazonaws.com/role-arn annotation set through serviceAccount.annotations. Empty otherwise.
*/}}
{{- define "kubeprovisioner.irsaRoleArn" -}}
{{- if .Values.serviceAccount.create }}
{{- .Values.aws.roleArn | default (index .Values.serviceAccount.annotations "eks.amazonaws.com/role-arn") | default "" }}
{{- end }}
{{- end }}

{{/*
The AWS SDK's endpoint variables from aws.endpoint (every service) and aws.endpoints (one
service each, winning over aws.endpoint): AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<service ID>, the
suffixes of src/aws/service.ts (test/e2e/helm-aws.test.ts checks that the two agree). A YAML
list of EnvVar objects; empty when none is set.
*/}}
{{- define "kubeprovisioner.endpointEnv" -}}
{{- $suffixes := dict "ec2" "EC2" "s3" "S3" "sqs" "SQS" "sts" "STS" "tagging" "RESOURCE_GROUPS_TAGGING_API" }}
{{- with .Values.aws.endpoint }}
- name: AWS_ENDPOINT_URL
  value: {{ . | quote }}
{{- end }}
{{- range $service := keys .Values.aws.endpoints | sortAlpha }}
{{- with index $.Values.aws.endpoints $service }}
- name: AWS_ENDPOINT_URL_{{ index $suffixes $service }}
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The namespaces the operator watches (--watch-namespace), as a YAML list: controller.watchNamespaces,
or with installScope=namespace and none listed the release namespace; empty: every namespace.
*/}}
{{- define "kubeprovisioner.watchNamespaces" -}}
{{- if .Values.controller.watchNamespaces }}
{{- toYaml .Values.controller.watchNamespaces }}
{{- else if eq .Values.installScope "namespace" }}
{{- toYaml (list .Release.Namespace) }}
{{- else }}
[]
{{- end }}
{{- end }}

{{/*
The AwsAccounts the release creates, as a YAML map name -> spec: the entries of
awsAccounts.accounts without `enabled: false`, each spec without the chart's own `enabled`.
*/}}
{{- define "kubeprovisioner.awsAccounts" -}}
{{- $out := dict }}
{{- range $name, $entry := .Values.awsAccounts.accounts }}
{{- if and $entry (ne (toString (get $entry "enabled")) "false") }}
{{- $_ := set $out $name (omit $entry "enabled") }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}
