// Check a rollout JSONL file against the gym-contract JSON Schemas (draft 2020-12).
//
//	go get github.com/santhosh-tekuri/jsonschema/v6
//	go run . path/to/schemas/v1 rollouts.jsonl
//
// Every schema is loaded from the folder under its $id; nothing is fetched from the network.
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const base = "https://gym-contract.dev/schemas/v1/"

// Attachment of a rollout record -> the schema (by $id) its value must satisfy.
var attachments = map[string]string{
	"ng_agent_observations": base + "agent_observations.schema.json",
	"ng_model_call_capture": base + "model_call_record.schema.json#/$defs/ModelCallCapture",
	"ng_trajectory":         base + "trajectory.schema.json",
	"ng_agent_outcome":      base + "agent_outcome.schema.json",
}

func compile(folder string) (map[string]*jsonschema.Schema, error) {
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	files, err := filepath.Glob(filepath.Join(folder, "*.schema.json"))
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		handle, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		document, err := jsonschema.UnmarshalJSON(handle)
		handle.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		id, _ := document.(map[string]any)["$id"].(string)
		if err := compiler.AddResource(id, document); err != nil {
			return nil, err
		}
	}
	schemas := map[string]*jsonschema.Schema{}
	for key, id := range attachments {
		schema, err := compiler.Compile(id)
		if err != nil {
			return nil, err
		}
		schemas[key] = schema
	}
	return schemas, nil
}

func main() {
	folder, rollouts := os.Args[1], os.Args[2]
	schemas, err := compile(folder)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	file, err := os.Open(rollouts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer file.Close()
	lines := bufio.NewScanner(file)
	lines.Buffer(make([]byte, 1<<20), 1<<30) // rollout lines can be many megabytes
	failures := 0
	for number := 1; lines.Scan(); number++ {
		line := lines.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		value, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			fmt.Printf("%s:%d: not JSON: %v\n", rollouts, number, err)
			failures++
			continue
		}
		record, _ := value.(map[string]any)
		for key, schema := range schemas {
			if record[key] == nil {
				continue
			}
			if err := schema.Validate(record[key]); err != nil {
				fmt.Printf("%s:%d /%s: %v\n", rollouts, number, key, err)
				failures++
			}
		}
	}
	if err := lines.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if failures > 0 {
		fmt.Printf("FAIL: %d problem(s)\n", failures)
		os.Exit(1)
	}
	fmt.Println("PASS")
}
