// Command pause is the process of a Pod's sandbox container in the kind node image: it holds the
// Pod's namespaces, reaps the zombies of processes that end up as its children (it is PID 1 of
// the Pod's PID namespace when the Pod shares one), and exits cleanly on SIGINT or SIGTERM.
// Written for Signet's tests: Kubernetes' own pause is a C program, not a Go module.
package main

import (
	"fmt"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (signet testbed)")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "warning: pause should be the first process")
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, unix.SIGINT, unix.SIGTERM, unix.SIGCHLD)
	for sig := range signals {
		switch sig {
		case unix.SIGINT, unix.SIGTERM:
			fmt.Fprintf(os.Stderr, "shutting down, got signal %v\n", sig)
			os.Exit(0)
		case unix.SIGCHLD:
			reap()
		}
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var status unix.WaitStatus
		pid, err := unix.Wait4(-1, &status, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
