// The CUE engine: cuelang.org/go evaluating a policy as sigstore's policy-controller does
// (cosign's pkg/policy evaluateCue): the policy and the input JSON compiled in a fresh context,
// unified, and validated (not required to be concrete).
package main

import (
	"cuelang.org/go/cue/cuecontext"

	"signet.local/policy-engines/abi"
)

var policies = map[uint32]string{}

func handle(request abi.Request) abi.Response {
	switch request.Op {
	case "compile":
		// Compiled now so that a broken policy is refused when the policy is loaded; evaluation
		// compiles it again in a fresh context, as upstream does (a context only grows).
		value := cuecontext.New().CompileString(request.Source)
		if err := value.Err(); err != nil {
			return abi.Response{Kind: "compile", Error: "failed to compile the cue policy with error: " + err.Error()}
		}
		policies[request.ID] = request.Source
		return abi.Response{OK: true}
	case "eval":
		source, ok := policies[request.ID]
		if !ok {
			return abi.Response{Kind: "input", Error: "no such policy"}
		}
		context := cuecontext.New()
		policy := context.CompileString(source)
		if err := policy.Err(); err != nil {
			return abi.Response{Kind: "compile", Error: "failed to compile the cue policy with error: " + err.Error()}
		}
		document := context.CompileBytes(request.Input)
		if err := document.Err(); err != nil {
			return abi.Response{Kind: "input", Error: "failed to compile the attestation data with error: " + err.Error()}
		}
		if err := policy.Unify(document).Validate(); err != nil {
			return abi.Response{Kind: "policy", Error: "failed to evaluate the policy with error: " + err.Error()}
		}
		return abi.Response{OK: true}
	case "drop":
		delete(policies, request.ID)
		return abi.Response{OK: true}
	}
	return abi.Response{Kind: "input", Error: "unknown operation " + request.Op}
}

// A reactor runs package initialisers, never main: the handler is installed here.
func init() { abi.Serve(handle) }

func main() {}
