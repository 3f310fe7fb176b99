module signet.local/testbed/ociregistry

go 1.26.0

require cuelabs.dev/go/oci/ociregistry v0.0.0-20251212221603-3adeb8663819

require (
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
)
