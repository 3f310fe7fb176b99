// Package abi is the one call the engines export to their JavaScript host (wasip1 reactor):
// the host writes a JSON request into a buffer it got from signet_alloc, calls signet_call with
// its length, and reads the JSON response at the returned (pointer<<32 | length).
package abi

import (
	"encoding/json"
	"unsafe"
)

// Request is what the host sends: compile a policy under an id, evaluate one, or drop one.
type Request struct {
	Op     string          `json:"op"`
	ID     uint32          `json:"id"`
	Source string          `json:"source,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// Response is what the engine answers. Kind tells the host which side failed: "compile" (the
// policy itself), "input" (the JSON it was given), "policy" (the input does not satisfy it).
type Response struct {
	OK      bool   `json:"ok"`
	Kind    string `json:"kind,omitempty"`
	Error   string `json:"error,omitempty"`
	Warning string `json:"warning,omitempty"`
}

// Handler answers one request.
type Handler func(Request) Response

var (
	handler Handler
	input   []byte
	output  []byte
)

// Serve installs the engine's handler; main calls it and returns (a reactor keeps its state).
func Serve(h Handler) { handler = h }

// The host's buffers are Go slices held in package variables: Go's collector never moves them.

//go:wasmexport signet_alloc
func signetAlloc(size uint32) unsafe.Pointer {
	if size == 0 {
		size = 1
	}
	input = make([]byte, size)
	return unsafe.Pointer(&input[0])
}

//go:wasmexport signet_call
func signetCall(length uint32) uint64 {
	var response Response
	var request Request
	if err := json.Unmarshal(input[:length], &request); err != nil {
		response = Response{Kind: "input", Error: "engine request is not JSON: " + err.Error()}
	} else {
		response = handler(request)
	}
	input = nil
	output, _ = json.Marshal(response)
	return uint64(uintptr(unsafe.Pointer(&output[0])))<<32 | uint64(len(output))
}
