package appserver

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite schema.json from the Go types")

// TestSchemaGolden fails when the messages' Go types change and schema.json,
// the documented schema, was not regenerated with
// `go test ./internal/appserver -run TestSchemaGolden -update`.
func TestSchemaGolden(t *testing.T) {
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatalf("%v (generate it with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("schema.json is out of date with the Go types of the app server's messages; " +
			"run `go test ./internal/appserver -run TestSchemaGolden -update` and check the diff in")
	}
}
