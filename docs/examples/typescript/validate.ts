// Check a rollout JSONL file against the gym-contract JSON Schemas with Ajv (draft 2020-12).
//
//   npm install ajv
//   npx tsx validate.ts path/to/schemas/v1 rollouts.jsonl
//
// Every schema is loaded from the folder under its $id; nothing is fetched from the network.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import type { ValidateFunction } from "ajv";

const BASE = "https://gym-contract.dev/schemas/v1/";

// Attachment of a rollout record -> the schema (by $id) its value must satisfy.
const ATTACHMENTS: Record<string, string> = {
  ng_agent_observations: `${BASE}agent_observations.schema.json`,
  ng_model_call_capture: `${BASE}model_call_record.schema.json#/$defs/ModelCallCapture`,
  ng_trajectory: `${BASE}trajectory.schema.json`,
  ng_agent_outcome: `${BASE}agent_outcome.schema.json`,
};

function loadSchemas(folder: string): Ajv2020 {
  // Strict mode refuses any keyword JSON Schema does not define; every schema file compiles under it.
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  for (const name of readdirSync(folder).filter((file) => file.endsWith(".schema.json"))) {
    ajv.addSchema(JSON.parse(readFileSync(join(folder, name), "utf8")));
  }
  return ajv;
}

function main(folder: string, rollouts: string): number {
  const ajv = loadSchemas(folder);
  const validators = new Map<string, ValidateFunction>();
  for (const [key, id] of Object.entries(ATTACHMENTS)) {
    validators.set(key, ajv.compile({ $ref: id }));
  }
  let failures = 0;
  readFileSync(rollouts, "utf8")
    .split("\n")
    .forEach((line, index) => {
      if (line.trim() === "") return;
      const record = JSON.parse(line) as Record<string, unknown>;
      for (const [key, validate] of validators) {
        if (record[key] == null || validate(record[key])) continue;
        failures += 1;
        for (const error of validate.errors ?? []) {
          console.log(`${rollouts}:${index + 1} /${key}${error.instancePath}: ${error.message}`);
        }
      }
    });
  console.log(failures === 0 ? "PASS" : `FAIL: ${failures} invalid attachment(s)`);
  return failures === 0 ? 0 : 1;
}

process.exit(main(process.argv[2] ?? "schemas/v1", process.argv[3] ?? "examples/rollouts.jsonl"));
