// Package docs holds the documents the project publishes with the code:
// the JSON Schemas of its file formats (schemas/), which the MCP tools
// publish as their input schemas and which tests check against the
// parsers.
package docs

import "embed"

// Schemas are the published JSON Schemas, by file name under schemas/.
//
//go:embed schemas/*.schema.json
var Schemas embed.FS
