// Command forward-proxy is the HTTP(S) forward proxy of Signet's tests: it forwards plain HTTP
// requests and tunnels CONNECT (HTTPS) to any host and port, and prints one line per target it
// connects to, `target <METHOD> <host:port>`, so a test can tell what went through the proxy and
// what went around it (NO_PROXY). The proxying is github.com/elazarl/goproxy's; this file only
// configures it.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
)

// The test harness reads these lines from the log; a mutex keeps concurrent ones whole.
var out sync.Mutex

func target(method, host, scheme string) {
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "80"
		if scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(host, port)
	}
	out.Lock()
	defer out.Unlock()
	fmt.Fprintf(os.Stdout, "target %s %s\n", method, host)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback by default)")
	flag.Parse()

	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	proxy := goproxy.NewProxyHttpServer()
	// Never chain to a proxy named in this process's environment: targets are reached directly.
	proxy.Tr.Proxy = nil
	proxy.ConnectDial = nil
	proxy.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		target(http.MethodConnect, host, "https")
		return goproxy.OkConnect, host
	})
	proxy.OnRequest().DoFunc(func(req *http.Request, _ *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		target(req.Method, req.URL.Host, req.URL.Scheme)
		return req, nil
	})
	// The test harness reads this line to learn the port when -addr ends in :0.
	fmt.Fprintf(os.Stdout, "listening on %s\n", listener.Addr())
	server := &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second}
	log.Fatal(server.Serve(listener))
}
