package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// decodeError describes why config.json did not decode: where the JSON
// breaks (line and column), or which field has a value of the wrong type
// (which is valid JSON, and is not called otherwise).
func decodeError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("config %s is not valid JSON at line %d, column %d: %v; fix or remove the file", path, line, col, syn)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		line, col := lineCol(data, typ.Offset)
		field := typ.Field
		if field == "" {
			field = "the top level"
		}
		return fmt.Errorf("config %s: %s (line %d, column %d) must be %s, not %s", path, field, line, col, jsonKind(typ.Type.Kind().String()), typ.Value)
	}
	return fmt.Errorf("config %s: %w", path, err)
}

// jsonKind names a Go kind the way a JSON file's author would.
func jsonKind(kind string) string {
	switch kind {
	case "int", "int64", "int32", "uint", "uint64", "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "map", "struct", "ptr":
		return "an object"
	case "slice", "array":
		return "an array"
	}
	return "a " + kind
}

// lineCol returns the 1-based line and column of the last byte the
// decoder read, whose count is off (the offset encoding/json reports).
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off-1, 0), int64(len(data)))
	before := data[:off]
	return bytes.Count(before, []byte("\n")) + 1, int(off) - bytes.LastIndexByte(before, '\n')
}
