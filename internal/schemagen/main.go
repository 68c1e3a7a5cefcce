// Command schemagen writes the JSON Schema of toolproc.yaml
// (extproc.ConfigSchema) to a file. Run by `go generate ./...` from
// extproc/config_schema.go; a test in the root package fails when the
// checked-in file differs from its output.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolproc/toolproc/extproc"
)

func main() {
	doc := flag.String("doc", "docs/config.md", "docs/config.md, whose key tables give the descriptions")
	out := flag.String("o", "docs/toolproc.schema.json", "the schema file to write")
	flag.Parse()
	md, err := os.ReadFile(*doc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	schema, err := extproc.ConfigSchema(md)
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, schema, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
