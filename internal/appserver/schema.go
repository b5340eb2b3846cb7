package appserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mx-claw/mx-claw/internal/protocol"
)

// message pairs a method with the Go types of its params and result (nil
// for a notification).
type message struct {
	method         string
	params, result any
}

// The app server's messages, by direction. The schema is generated from
// these; a method missing here is missing from the documentation.
var (
	clientRequests = []message{
		{"initialize", InitializeParams{}, InitializeResult{}},
		{"thread/start", ThreadStartParams{}, ThreadResult{}},
		{"thread/resume", ThreadResumeParams{}, ThreadResult{}},
		{"thread/list", ThreadListParams{}, ThreadListResult{}},
		{"thread/read", ThreadReadParams{}, ThreadReadResult{}},
		{"turn/start", TurnStartParams{}, TurnStartResult{}},
		{"turn/interrupt", TurnInterruptParams{}, Empty{}},
	}
	clientNotifications = []message{
		{"initialized", Empty{}, nil},
	}
	serverRequests = []message{
		{requestApproval, ApprovalParams{}, ApprovalResult{}},
	}
)

// Schema returns the JSON Schema of every message of the app server,
// generated from the Go types: requests and notifications each way, with
// the schemas of their params and results. Every server notification's
// params are a protocol.Event.
func Schema() ([]byte, error) {
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		// Raw JSON is any JSON value.
		reflect.TypeFor[json.RawMessage](): {},
	}}
	of := func(v any) (*jsonschema.Schema, error) {
		if v == nil {
			return nil, nil
		}
		return jsonschema.ForType(reflect.TypeOf(v), opts)
	}
	type entry struct {
		Params *jsonschema.Schema `json:"params,omitempty"`
		Result *jsonschema.Schema `json:"result,omitempty"`
	}
	section := func(msgs []message) (map[string]entry, error) {
		out := make(map[string]entry, len(msgs))
		for _, m := range msgs {
			p, err := of(m.params)
			if err != nil {
				return nil, fmt.Errorf("%s params: %w", m.method, err)
			}
			r, err := of(m.result)
			if err != nil {
				return nil, fmt.Errorf("%s result: %w", m.method, err)
			}
			out[m.method] = entry{Params: p, Result: r}
		}
		return out, nil
	}
	event, err := of(protocol.Event{})
	if err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	// Every notification refers to the one event schema in $defs.
	ref := &jsonschema.Schema{Ref: "#/$defs/Event"}
	notes := make(map[string]entry)
	for _, m := range slices.Sorted(mapValues(methods)) {
		notes[m] = entry{Params: ref}
	}
	notes[fallbackMethod] = entry{Params: ref}
	doc := struct {
		Schema              string                        `json:"$schema"`
		Title               string                        `json:"title"`
		Description         string                        `json:"description"`
		ProtocolVersion     int                           `json:"protocolVersion"`
		ClientRequests      map[string]entry              `json:"clientRequests"`
		ClientNotifications map[string]entry              `json:"clientNotifications"`
		ServerRequests      map[string]entry              `json:"serverRequests"`
		ServerNotifications map[string]entry              `json:"serverNotifications"`
		EventMethods        map[string]string             `json:"eventMethods"`
		Defs                map[string]*jsonschema.Schema `json:"$defs"`
	}{
		Schema: "https://json-schema.org/draft/2020-12/schema",
		Title:  "mx-claw app-server",
		Description: "JSON-RPC 2.0 over stdin and stdout, one message per line. Generated from the Go types of " +
			"internal/appserver; do not edit. Every server notification's params are an event; eventMethods " +
			"maps each event type to its notification method.",
		ProtocolVersion:     ProtocolVersion,
		ServerNotifications: notes,
		EventMethods:        make(map[string]string, len(methods)),
		Defs:                map[string]*jsonschema.Schema{"Event": event},
	}
	for t, m := range methods {
		doc.EventMethods[string(t)] = m
	}
	if doc.ClientRequests, err = section(clientRequests); err != nil {
		return nil, err
	}
	if doc.ClientNotifications, err = section(clientNotifications); err != nil {
		return nil, err
	}
	if doc.ServerRequests, err = section(serverRequests); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// mapValues yields the distinct values of m.
func mapValues(m map[protocol.EventType]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := make(map[string]bool, len(m))
		for _, v := range m {
			if seen[v] {
				continue
			}
			seen[v] = true
			if !yield(v) {
				return
			}
		}
	}
}
