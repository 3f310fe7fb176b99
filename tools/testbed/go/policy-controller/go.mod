// policy-controller's own test material (its policies, SBOMs, predicates), read by Signet's
// compatibility tests straight from the module cache: `go mod download` of this pin, nothing built.
module signet.local/testbed/policy-controller

go 1.26.0

require github.com/sigstore/policy-controller v0.15.1
