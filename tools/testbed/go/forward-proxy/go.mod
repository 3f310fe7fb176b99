module signet.local/testbed/forward-proxy

go 1.26.0

require github.com/elazarl/goproxy v1.9.4

require (
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/text v0.34.0 // indirect
)
