// Compiles every schema of a folder with ajv in strict mode (draft 2020-12), then judges instances.
// Usage: node judge.cjs SCHEMA_DIR [CASES.json]; CASES is a list of {"uri": ..., "data": ...}.
// Prints {"compiled": {file: null or the error}, "verdicts": [true/false or an error, ...]}.
"use strict";
const fs = require("fs");
const path = require("path");
const Ajv2020 = require("ajv/dist/2020");

const [folder, casesFile] = process.argv.slice(2);
const ajv = new Ajv2020({ strict: true });
const files = fs.readdirSync(folder).filter((name) => name.endsWith(".schema.json")).sort();
const documents = files.map((name) => JSON.parse(fs.readFileSync(path.join(folder, name), "utf8")));
documents.forEach((document) => ajv.addSchema(document));

const compiled = {};
files.forEach((name, index) => {
  try {
    ajv.getSchema(documents[index].$id);
    compiled[name] = null;
  } catch (error) {
    compiled[name] = error.message;
  }
});

const cases = casesFile ? JSON.parse(fs.readFileSync(casesFile, "utf8")) : [];
const verdicts = cases.map(({ uri, data }) => {
  try {
    const validate = ajv.getSchema(uri);
    return validate ? validate(data) : `no schema ${uri}`;
  } catch (error) {
    return error.message;
  }
});
process.stdout.write(JSON.stringify({ compiled, verdicts }));
