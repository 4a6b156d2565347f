package app

import (
	"mime"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resourceResult is read_skill_resource's answer: UTF-8 text as a text
// block, anything else as a blob (base64 on the wire) with its media
// type, never text with its bytes replaced.
func resourceResult(name, rel string, data []byte) *mcp.CallToolResult {
	mt := mediaType(rel, data)
	meta := map[string]any{"name": name, "path": rel, "mime_type": mt, "size": len(data)}
	if utf8.Valid(data) && !strings.HasPrefix(mt, "image/") {
		meta["encoding"] = "text"
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}, StructuredContent: meta}
	}
	meta["encoding"] = "base64"
	uri := "gatehouse://skill/" + name + "/" + rel
	return &mcp.CallToolResult{StructuredContent: meta, Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: mt, Blob: data}}}}
}

// mediaType names a file's type from its extension, else its bytes.
func mediaType(rel string, data []byte) string {
	if t := mime.TypeByExtension(path.Ext(rel)); t != "" {
		return t
	}
	if strings.EqualFold(path.Ext(rel), ".md") {
		return "text/markdown; charset=utf-8"
	}
	return http.DetectContentType(data)
}
