// The Sigstore timestamp authority's HTTP API (github.com/sigstore/timestamp-authority/v2), served
// without the rest of `timestamp-server serve`: that command always starts a Prometheus listener on
// the fixed address :2112 and exits when the port is taken, so two test runs on one machine (or
// anything else on 2112) would kill each other's TSA. Everything else is the upstream server: its
// REST API, its signers, its configuration keys.
package main

import (
	"flag"
	"log"
	"time"

	// Registers the server's configuration keys and their defaults in viper (hash, policy OIDs, ...).
	_ "github.com/sigstore/timestamp-authority/v2/cmd/timestamp-server/app"
	"github.com/sigstore/timestamp-authority/v2/pkg/server"
	"github.com/spf13/viper"
)

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port to listen on")
	signer := flag.String("timestamp-signer", "memory", "memory (a fresh key and chain) or file")
	key := flag.String("file-signer-key-path", "", "PEM private key of the file signer")
	chain := flag.String("certificate-chain-path", "", "PEM chain certifying the file signer's key")
	flag.Parse()

	viper.Set("timestamp-signer", *signer)
	viper.Set("file-signer-key-path", *key)
	viper.Set("certificate-chain-path", *chain)

	srv := server.NewRestAPIServer(*host, *port, []string{"http"}, false, 30*time.Second, 30*time.Second)
	defer func() { _ = srv.Shutdown() }()
	if err := srv.Serve(); err != nil {
		log.Fatal(err)
	}
}
