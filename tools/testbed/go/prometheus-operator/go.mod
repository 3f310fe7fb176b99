// prometheus-operator's CRDs (example/prometheus-operator-crd), for checking the chart's ServiceMonitor and PrometheusRule against a real API server: read from the module cache, `go mod download` of this pin, nothing built.
module signet.local/testbed/prometheus-operator

go 1.26.0

require github.com/prometheus-operator/prometheus-operator v0.85.0
