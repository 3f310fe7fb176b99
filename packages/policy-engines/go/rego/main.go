// The Rego engine: OPA evaluating a policy as sigstore's policy-controller does (cosign's
// pkg/cosign/rego ValidateJSONWithModuleInput): module `sigstore.rego` in Rego v0 syntax, query
// `isCompliant = data.sigstore.isCompliant`, input decoded with JSON numbers kept exact. A
// boolean true passes; a list of {result, error, warning} objects passes on the first with
// result true (its warning reported); anything else is not compliant.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"signet.local/policy-engines/abi"
)

const (
	rule   = "isCompliant"
	query  = "isCompliant = data.sigstore.isCompliant"
	module = "sigstore.rego"
)

var policies = map[uint32]rego.PreparedEvalQuery{}

type ruleResult struct {
	Warning string `json:"warning,omitempty"`
	Error   string `json:"error,omitempty"`
	Result  bool   `json:"result,omitempty"`
}

func handle(request abi.Request) abi.Response {
	switch request.Op {
	case "compile":
		prepared, err := rego.New(
			rego.Query(query),
			rego.Module(module, request.Source),
			rego.SetRegoVersion(ast.RegoV0),
		).PrepareForEval(context.Background())
		if err != nil {
			return abi.Response{Kind: "compile", Error: err.Error()}
		}
		policies[request.ID] = prepared
		return abi.Response{OK: true}
	case "eval":
		prepared, ok := policies[request.ID]
		if !ok {
			return abi.Response{Kind: "input", Error: "no such policy"}
		}
		return evaluate(prepared, request.Input)
	case "drop":
		delete(policies, request.ID)
		return abi.Response{OK: true}
	}
	return abi.Response{Kind: "input", Error: "unknown operation " + request.Op}
}

func evaluate(prepared rego.PreparedEvalQuery, document []byte) abi.Response {
	var input interface{}
	decoder := json.NewDecoder(bytes.NewReader(document))
	decoder.UseNumber()
	if err := decoder.Decode(&input); err != nil {
		return abi.Response{Kind: "input", Error: err.Error()}
	}
	results, err := prepared.Eval(context.Background(), rego.EvalInput(input))
	if err != nil {
		return abi.Response{Kind: "policy", Error: err.Error()}
	}
	for _, result := range results {
		switch value := result.Bindings[rule].(type) {
		case []interface{}:
			return listResult(value)
		case bool:
			if value {
				return abi.Response{OK: true}
			}
		}
	}
	return abi.Response{Kind: "policy", Error: fmt.Sprintf("policy is not compliant for query '%s'", query)}
}

func listResult(values []interface{}) abi.Response {
	response := abi.Response{Kind: "policy", Error: fmt.Sprintf("policy is not compliant for query %q", query)}
	for _, value := range values {
		encoded, err := json.Marshal(value)
		var parsed ruleResult
		if err == nil {
			err = json.Unmarshal(encoded, &parsed)
		}
		if err != nil {
			return abi.Response{Kind: "policy", Error: fmt.Sprintf("policy is not compliant for query '%s' due to parsing errors: %v", query, err)}
		}
		if parsed.Result {
			if parsed.Warning == "" {
				return abi.Response{OK: true}
			}
			return abi.Response{OK: true, Warning: "warning: " + parsed.Warning}
		}
		response.Warning = parsed.Warning
		response.Error = fmt.Sprintf("policy is not compliant for query '%s' with errors: %s", query, parsed.Error)
	}
	return response
}

// A reactor runs package initialisers, never main: the handler is installed here.
func init() { abi.Serve(handle) }

func main() {}
