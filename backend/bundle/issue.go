// Package bundle checks the Gatehouse execution extension of a skill bundle:
// the strict execution.json manifest, the bounded JSON Schema subset used for
// inputSchema and outputSchema, invocation and result validation, and the
// import guardrail over the declared JavaScript files. Nothing in this package
// executes, imports or resolves bundle code.
package bundle

import "github.com/gatehouse/gatehouse/backend/internal/strictjson"

// Issue is one problem found while checking a manifest, a schema, an
// invocation, a result or a bundle file: the issue every Gatehouse parser
// reports. Code is stable and machine readable; Path locates the problem (a
// JSON path in the one path syntax, such as "$.files[2]", for JSON
// documents, or a bundle-relative file path with an optional ":line:col" for
// source files); Message is for people and never echoes script output.
// String formats it as "code at path: message".
type Issue = strictjson.Issue

// MaxIssues is the most issues a single validation reports.
const MaxIssues = 20
