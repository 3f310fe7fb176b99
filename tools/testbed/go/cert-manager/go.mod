// cert-manager's CRDs (deploy/crds), for checking the chart's Certificate and Issuers against a real API server: read from the module cache, `go mod download` of this pin, nothing built.
module signet.local/testbed/cert-manager

go 1.26.0

require github.com/cert-manager/cert-manager v1.21.2
