// Command oci-runtime-wrapper is the OCI runtime Signet's tooling registers with dockerd
// (`--add-runtime signet-runc=<this> --default-runtime signet-runc`) on machines whose capability
// bounding set lacks CAP_SYS_RESOURCE (`grep CapBnd /proc/self/status`). Docker asks for every
// capability it knows for a privileged container (kind's nodes are privileged), runc cannot raise
// one outside the bounding set, and the container fails to start ("unable to apply caps:
// operation not permitted"). This wrapper removes the capabilities the machine does not grant from
// the container's spec (`<bundle>/config.json` on create and run) and from exec process specs
// (`--process FILE`), then executes the real runc with the same arguments.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// capabilityNames by number, as in linux/capability.h (what CapBnd's bits mean).
var capabilityNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

func main() {
	runc := os.Getenv("SIGNET_REAL_RUNC")
	if runc == "" {
		runc = "runc"
	}
	path, err := exec.LookPath(runc)
	if err != nil {
		fail("cannot find the real runc (%s): %v", runc, err)
	}
	args := os.Args[1:]
	if missing := missingCapabilities(); len(missing) > 0 {
		if spec := specToPatch(args); spec != "" {
			if err := dropCapabilities(spec, missing); err != nil {
				fail("cannot adjust %s: %v", spec, err)
			}
		}
	}
	if err := unix.Exec(path, append([]string{path}, args...), os.Environ()); err != nil {
		fail("exec %s: %v", path, err)
	}
}

func fail(format string, values ...any) {
	fmt.Fprintf(os.Stderr, "oci-runtime-wrapper: "+format+"\n", values...)
	os.Exit(1)
}

// missingCapabilities are the known capabilities outside this process's bounding set.
func missingCapabilities() map[string]bool {
	missing := map[string]bool{}
	for number, name := range capabilityNames {
		if inBoundingSet, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(number), 0, 0, 0); err == nil && inBoundingSet == 0 {
			missing[name] = true
		}
	}
	return missing
}

// specToPatch is the spec runc will read: <bundle>/config.json for create and run, the process
// file for exec; "" for every other command.
func specToPatch(args []string) string {
	command, bundle, process := "", "", ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		value := func() string {
			if j := strings.IndexByte(arg, '='); j >= 0 {
				return arg[j+1:]
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case arg == "--bundle" || arg == "-b" || strings.HasPrefix(arg, "--bundle="):
			bundle = value()
		case arg == "--process" || arg == "-p" || strings.HasPrefix(arg, "--process="):
			process = value()
		case command == "" && (arg == "create" || arg == "run" || arg == "exec"):
			command = arg
		}
	}
	switch command {
	case "create", "run":
		if bundle == "" {
			bundle = "."
		}
		return filepath.Join(bundle, "config.json")
	case "exec":
		return process
	}
	return ""
}

// dropCapabilities rewrites the spec without the missing capabilities, keeping every other field.
func dropCapabilities(path string, missing map[string]bool) error {
	content, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var document map[string]any
	if err := json.Unmarshal(content, &document); err != nil {
		return err
	}
	// A bundle's config.json has the process under "process"; an exec process file is the process.
	process := document
	if nested, ok := document["process"].(map[string]any); ok {
		process = nested
	}
	capabilities, ok := process["capabilities"].(map[string]any)
	if !ok {
		return nil
	}
	changed := false
	for set, list := range capabilities {
		names, ok := list.([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(names))
		for _, name := range names {
			if text, ok := name.(string); ok && missing[text] {
				changed = true
				continue
			}
			kept = append(kept, name)
		}
		capabilities[set] = kept
	}
	if !changed {
		return nil
	}
	patched, err := json.Marshal(document)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, patched, info.Mode().Perm())
}
