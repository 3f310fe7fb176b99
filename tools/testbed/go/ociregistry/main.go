// Command oci-registry serves an in-memory OCI registry WITH the referrers API
// (GET /v2/<name>/referrers/<digest>, artifactType filtering, OCI-Subject header),
// for Signet's tests. It is a thin wrapper around cuelabs.dev/go/oci/ociregistry:
// `crane registry serve` does not enable referrers, and zot is not on the module proxy.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"cuelabs.dev/go/oci/ociregistry/ocimem"
	"cuelabs.dev/go/oci/ociregistry/ociserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback by default)")
	noReferrers := flag.Bool("no-referrers", false, "behave like a registry without the referrers API")
	flag.Parse()

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	handler := ociserver.New(ocimem.New(), &ociserver.Options{DisableReferrersAPI: *noReferrers})
	// The test harness reads this line to learn the port when -addr ends in :0.
	fmt.Fprintf(os.Stdout, "listening on %s\n", listener.Addr())
	server := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(server.Serve(listener))
}
