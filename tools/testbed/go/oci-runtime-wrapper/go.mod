module signet.local/testbed/oci-runtime-wrapper

go 1.26.0

require golang.org/x/sys v0.38.0
