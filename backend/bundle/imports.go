package bundle

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"
)

// The import guardrail parses every JavaScript file of a bundle with esbuild's
// real JavaScript parser and checks each module specifier it finds. Nothing
// is executed, and no bundle file is read from disk: the bytes come from the
// caller and reach esbuild as Stdin contents.
//
// How each rule is detected:
//
//   - Static imports, re-exports (export ... from), require("x"),
//     import("x") and require.resolve("x") become esbuild import records.
//     A bundling build runs the plugin below on every record; its OnResolve
//     callback (filter ".*") classifies the specifier and always answers
//     External, so esbuild never resolves or loads anything. For a rejected
//     specifier it returns a plugin warning without a location; esbuild then
//     attaches the location of the specifier's string literal to it
//     (bundler.logPluginMessages), which is where Issue.Path's line and
//     column come from. esbuild calls OnResolve once per distinct
//     (specifier, kind) in a file, so a repeated import is reported once, at
//     its first occurrence.
//
//   - import(expr), require(expr) with a non-literal argument, require with
//     other than one argument, and require used as a value (aliased, passed
//     around, or inspected with typeof) produce no import record. esbuild's
//     parser logs them at debug level ("unsupported-dynamic-import",
//     "unsupported-require-call", and, in bundle mode only,
//     "indirect-require"); LogOverride raises them to warnings so they come
//     back in the build result with their location. import("x", { unknown
//     options }) is dropped as an import by esbuild with a bundle-mode
//     "unsupported-dynamic-import" warning, which is reported too.
//
//   - Syntax errors are esbuild's parse errors.
//
// Why two kinds of build: in bundle mode esbuild expands a relative template
// or concatenation such as import(`./${x}`) or require("../" + x) into a glob
// and lists directories on the real filesystem (relative to the resolve
// directory, climbing with "../" as far as "/"), and it does so without
// consulting plugins. So every file is first parsed in a non-bundling build
// (format conversion only, which never resolves anything); that reports
// syntax errors and every non-literal import()/require() site. The
// identifier token at each such site ("import", "require") is then replaced
// by a same-length harmless identifier, so byte offsets and therefore all
// positions stay the same, the neutralised text is parsed again without
// bundling to confirm that no such site is left, and only then does the
// bundling build with the plugin run. If confirmation fails, the bundling
// build is skipped and the import records are taken from the non-bundling
// build's metafile instead, which names specifiers and kinds but carries no
// positions; those issues are located by file only.
//
// Not detected, because esbuild's parser gives no signal for them and they
// are not import syntax: require.call(null, x), require.apply(...),
// createRequire(...)(x) (node:module is a built-in, so importing it is
// allowed), process.mainModule.require(x), process.dlopen, eval and
// new Function, and require.resolve with a non-literal argument (which only
// computes a path). (module.require("x") is recorded by esbuild like
// require("x") and so is checked.) Imports in code that esbuild proves dead
// (if (false) { require("x") }) are not reported because they cannot run.
// In .mjs and .js files (parsed as ESM) esbuild does not record
// require.resolve("x"); Node defines no require in ES modules anyway. When a
// non-literal call has a literal branch, require(c ? "./a.cjs" : d), the
// whole call is reported as unanalyzable and the literal is not checked on
// its own. In the metafile fallback, findings that only a bundling build
// produces (require used as a value, import() with unknown options) are not
// available.

// maxScanFileBytes bounds the input handed to the parser. Manifest checks
// already cap bundle files far lower; this is a second guard so that the
// scanner alone never feeds esbuild (whose offsets are 32-bit) a huge input.
// Larger files are reported as unanalyzable rather than silently passed.
const maxScanFileBytes = 16 << 20

// Issue codes reported by ScanImports.
const (
	codeSyntaxError         = "syntax_error"
	codeUndeclaredImport    = "undeclared_import"
	codeImportEscapesBundle = "import_escapes_bundle"
	codeUnanalyzableImport  = "unanalyzable_import"
)

const importScanPluginName = "gatehouse-import-guardrail"

// esbuild message IDs (as accepted by LogOverride) for call sites whose
// specifier cannot be known without running the code.
const (
	esbuildIDDynamicImport   = "unsupported-dynamic-import"
	esbuildIDRequireCall     = "unsupported-require-call"
	esbuildIDIndirectRequire = "indirect-require"
)

// When esbuild converts to ESM without bundling it warns, under the same
// message ID as a non-literal require, about every literal require("x"),
// which is an ordinary import record and not a finding.
const esbuildConvertingRequirePrefix = `Converting "require"`

// ScanImports parses every JavaScript file among files (keys are bundle-relative
// slash paths, values their exact bytes) and returns one Issue per problem, in a
// deterministic order (by file path, then position). declared is the set of
// bundle-relative paths listed in execution.json.
//
// A specifier is allowed when it names a Node.js built-in ("fs",
// "fs/promises", "node:fs", "node:test") or when it is relative ("./x.mjs",
// "../lib/y.cjs") and, joined to the importing file's directory, is exactly
// one of declared (no extension or index-file guessing). A relative specifier
// that leaves the bundle root is import_escapes_bundle; any other specifier
// (package names, absolute paths, URLs, "#" subpath imports, unknown node:
// names) is undeclared_import. Import calls whose specifier is not a string
// literal are unanalyzable_import, and parse errors are syntax_error. Import
// issues are located as "file:line:column" (line and column 1-based, the
// column counted in bytes).
//
// At most MaxIssues issues are returned: the first MaxIssues in order. Files
// whose names do not end in .mjs, .cjs or .js are ignored. ScanImports is
// safe for concurrent use, executes nothing and touches neither the
// filesystem nor the network.
func ScanImports(files map[string][]byte, declared []string) []Issue {
	declaredSet := make(map[string]struct{}, len(declared))
	for _, d := range declared {
		declaredSet[d] = struct{}{}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if jsFileFormat(name) != api.FormatDefault {
			names = append(names, name)
		}
	}
	sort.Strings(names)

	var out []Issue
	for _, name := range names {
		for _, f := range scanJSFile(name, files[name], declaredSet) {
			if len(out) == MaxIssues {
				return out
			}
			out = append(out, f.issue())
		}
	}
	return out
}

// jsFileFormat is the module format a file is parsed as, or FormatDefault
// for files the guardrail does not parse. Plain .js is parsed as ESM;
// esbuild still records require calls in it.
func jsFileFormat(name string) api.Format {
	switch {
	case strings.HasSuffix(name, ".mjs"), strings.HasSuffix(name, ".js"):
		return api.FormatESModule
	case strings.HasSuffix(name, ".cjs"):
		return api.FormatCommonJS
	}
	return api.FormatDefault
}

// importFinding is one issue of one file with its position for ordering.
// line and col are 1-based; line 0 means the position is unknown.
type importFinding struct {
	code      string
	file      string
	line, col int
	message   string
}

func (f importFinding) issue() Issue {
	p := f.file
	if f.line > 0 {
		p = fmt.Sprintf("%s:%d:%d", f.file, f.line, f.col)
	}
	return Issue{Code: f.code, Path: p, Message: f.message}
}

func findingAt(code, file string, loc *api.Location, message string) importFinding {
	f := importFinding{code: code, file: file, message: cleanMessage(message)}
	if loc != nil && loc.Line > 0 {
		f.line, f.col = loc.Line, loc.Column+1
	}
	return f
}

// scanJSFile returns the sorted, de-duplicated findings for one file.
func scanJSFile(name string, data []byte, declared map[string]struct{}) (findings []importFinding) {
	defer func() {
		// esbuild recovers panics inside its own parser goroutines and reports
		// them as errors; this guards the remaining code on this goroutine.
		if r := recover(); r != nil {
			findings = []importFinding{{code: codeUnanalyzableImport, file: name,
				message: fmt.Sprintf("the import scan failed internally (%v); the file's imports cannot be checked", r)}}
		}
	}()
	if len(data) > maxScanFileBytes {
		return []importFinding{{code: codeUnanalyzableImport, file: name,
			message: fmt.Sprintf("file is %d bytes, more than the %d the import scan parses; its imports cannot be checked", len(data), maxScanFileBytes)}}
	}
	format := jsFileFormat(name)
	src := string(data)

	// Pass 1: parse without bundling. Reports syntax errors and non-literal
	// import sites, and never looks at the filesystem.
	first := esbuildParse(name, src, format)
	if len(first.Errors) > 0 {
		for _, m := range first.Errors {
			findings = append(findings, findingAt(codeSyntaxError, name, m.Location, m.Text))
		}
		return sortFindings(findings)
	}
	sites := unanalyzableSites(first.Warnings)
	for _, m := range sites {
		findings = append(findings, findingAt(codeUnanalyzableImport, name, m.Location, unanalyzableMessage(m)))
	}

	bundleSrc := src
	if len(sites) > 0 {
		neutral, ok := neutraliseSites(src, sites)
		if ok {
			check := esbuildParse(name, neutral, format)
			ok = len(check.Errors) == 0 && len(unanalyzableSites(check.Warnings)) == 0
		}
		if !ok {
			// Fall back to the import records of the non-bundling build;
			// they carry no positions.
			for _, rec := range metafileImports(first.Metafile) {
				if code, msg := classifySpecifier(name, rec.Path, rec.Kind, declared); code != "" {
					findings = append(findings, importFinding{code: code, file: name, message: msg})
				}
			}
			return sortFindings(findings)
		}
		bundleSrc = neutral
	}

	// Pass 2: a bundling build whose plugin sees every import record and
	// marks it external, so nothing is resolved or loaded.
	second := esbuildResolveImports(name, bundleSrc, format, declared)
	for _, m := range second.Errors {
		// A file that parsed cleanly above is not expected to fail here; if
		// it does, report esbuild's message rather than passing the file.
		findings = append(findings, findingAt(codeSyntaxError, name, m.Location, m.Text))
	}
	for _, m := range second.Warnings {
		if m.PluginName == importScanPluginName {
			if d, ok := m.Detail.(importVerdict); ok {
				findings = append(findings, findingAt(d.code, name, m.Location, m.Text))
			}
			continue
		}
		switch m.ID {
		case esbuildIDDynamicImport:
			// import("x", {...}) with options esbuild does not understand: it
			// drops the import record and warns only in bundle mode.
			findings = append(findings, findingAt(codeUnanalyzableImport, name, m.Location,
				"import() with options that are not a single with/assert clause is not recognised as an import, so what it loads cannot be checked ("+m.Text+")"))
		case esbuildIDIndirectRequire:
			findings = append(findings, findingAt(codeUnanalyzableImport, name, m.Location, unanalyzableMessage(m)))
		}
	}
	return sortFindings(findings)
}

func sortFindings(fs []importFinding) []importFinding {
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.line != b.line {
			return a.line < b.line
		}
		if a.col != b.col {
			return a.col < b.col
		}
		if a.code != b.code {
			return a.code < b.code
		}
		return a.message < b.message
	})
	out := fs[:0]
	for i, f := range fs {
		if i > 0 && f == fs[i-1] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// esbuildBaseOptions are shared by both builds. AbsWorkingDir is fixed so
// the result never depends on the process's working directory, and the
// sourcefile name is the bundle path so that esbuild applies the .mjs/.cjs
// module rules of that name.
func esbuildBaseOptions(name, src string, format api.Format) api.BuildOptions {
	return api.BuildOptions{
		Stdin: &api.StdinOptions{
			Contents:   src,
			Sourcefile: name,
			Loader:     api.LoaderJS,
		},
		AbsWorkingDir: "/",
		Write:         false,
		Platform:      api.PlatformNode,
		Format:        format,
		LogLevel:      api.LogLevelSilent,
	}
}

// esbuildParse parses without bundling: only format conversion, no import
// resolution. Non-literal import sites are raised from debug to warning.
func esbuildParse(name, src string, format api.Format) api.BuildResult {
	opts := esbuildBaseOptions(name, src, format)
	opts.Metafile = true
	opts.LogOverride = map[string]api.LogLevel{
		esbuildIDDynamicImport: api.LogLevelWarning,
		esbuildIDRequireCall:   api.LogLevelWarning,
	}
	return api.Build(opts)
}

// importVerdict is the Detail of a plugin warning: the issue code the
// specifier earned. The warning's Text is the issue message.
type importVerdict struct{ code string }

// esbuildResolveImports runs a bundling build whose only job is to call the
// plugin for every import record of the file.
func esbuildResolveImports(name, src string, format api.Format, declared map[string]struct{}) api.BuildResult {
	opts := esbuildBaseOptions(name, src, format)
	opts.Bundle = true
	// esbuild notices require used as a value only when bundling.
	opts.LogOverride = map[string]api.LogLevel{esbuildIDIndirectRequire: api.LogLevelWarning}
	opts.Plugins = []api.Plugin{{
		Name: importScanPluginName,
		Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(args api.OnResolveArgs) (api.OnResolveResult, error) {
				res := api.OnResolveResult{Path: args.Path, External: true}
				if args.Kind == api.ResolveEntryPoint {
					return res, nil
				}
				if code, msg := classifySpecifier(name, args.Path, resolveKindName(args.Kind), declared); code != "" {
					// No Location: esbuild fills in the specifier's position.
					res.Warnings = []api.Message{{Text: msg, Detail: importVerdict{code: code}}}
				}
				return res, nil
			})
			// Defence in depth: nothing should ever be loaded, since every
			// path is external, but if esbuild tried, it gets empty text
			// rather than reading the filesystem.
			b.OnLoad(api.OnLoadOptions{Filter: ".*"}, func(api.OnLoadArgs) (api.OnLoadResult, error) {
				empty := ""
				return api.OnLoadResult{Contents: &empty, Loader: api.LoaderEmpty}, nil
			})
		},
	}}
	return api.Build(opts)
}

// resolveKindName spells an esbuild import kind as esbuild's metafile does.
func resolveKindName(k api.ResolveKind) string {
	switch k {
	case api.ResolveJSImportStatement:
		return "import-statement"
	case api.ResolveJSRequireCall:
		return "require-call"
	case api.ResolveJSDynamicImport:
		return "dynamic-import"
	case api.ResolveJSRequireResolve:
		return "require-resolve"
	}
	return "import"
}

// unanalyzableSites selects the warnings of a non-bundling build that mark
// import()/require() calls whose specifier is not a string literal.
func unanalyzableSites(ws []api.Message) []api.Message {
	var sites []api.Message
	for _, m := range ws {
		switch m.ID {
		case esbuildIDDynamicImport:
			sites = append(sites, m)
		case esbuildIDRequireCall:
			if !strings.HasPrefix(m.Text, esbuildConvertingRequirePrefix) {
				sites = append(sites, m)
			}
		}
	}
	return sites
}

func unanalyzableMessage(m api.Message) string {
	switch m.ID {
	case esbuildIDDynamicImport:
		return "import() whose specifier is not a string literal cannot be checked; import a Node built-in or a declared bundle file by its literal name"
	case esbuildIDIndirectRequire:
		return `require is used other than as a direct call (aliased, passed around or tested with typeof), so what it loads cannot be checked; call require("...") with a string literal`
	}
	if strings.Contains(m.Text, "argument") && !strings.Contains(m.Text, "string literal") {
		return "require() must be called with exactly one string-literal specifier to be checked (" + m.Text + ")"
	}
	return "require() whose specifier is not a string literal cannot be checked; require a Node built-in or a declared bundle file by its literal name"
}

// neutraliseSites replaces the "import"/"require" token esbuild located at
// each site with a same-length identifier ("_xxxxx"), so the call is no
// longer an import (and can no longer become a filesystem glob) while every
// other byte offset, and so every reported position, stays the same. It
// fails rather than guess when a location does not match the text.
func neutraliseSites(src string, sites []api.Message) (string, bool) {
	starts := esbuildLineStarts(src)
	buf := []byte(src)
	for _, m := range sites {
		loc := m.Location
		if loc == nil || loc.Line < 1 || loc.Line > len(starts) || loc.Column < 0 || loc.Length <= 0 {
			return "", false
		}
		lineStart := starts[loc.Line-1]
		if !strings.HasPrefix(src[lineStart:], loc.LineText) {
			return "", false
		}
		begin := lineStart + loc.Column
		end := begin + loc.Length
		if end > len(src) || end-lineStart > len(loc.LineText) {
			return "", false
		}
		tok := src[begin:end]
		if tok != "import" && tok != "require" && !isEscapedIdentifier(tok) {
			return "", false
		}
		buf[begin] = '_'
		for i := begin + 1; i < end; i++ {
			buf[i] = 'x'
		}
	}
	return string(buf), true
}

// isEscapedIdentifier reports whether tok looks like an identifier written
// with \u escapes (such as \u0072equire), which esbuild reads as "require".
func isEscapedIdentifier(tok string) bool {
	if !strings.Contains(tok, `\u`) {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(c == '\\' || c == '{' || c == '}' || c == '_' || c == '$' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// esbuildLineStarts returns the byte offset at which each line starts,
// counting line breaks exactly as esbuild's location tracker does: "\n",
// "\r", "\r\n" (one break), U+2028 and U+2029; invalid UTF-8 decodes as
// one-byte runes.
func esbuildLineStarts(src string) []int {
	starts := []int{0}
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		prev := i
		i += size
		switch r {
		case '\n':
			if prev > 0 && src[prev-1] == '\r' {
				starts[len(starts)-1] = i
			} else {
				starts = append(starts, i)
			}
		case '\r', '\u2028', '\u2029':
			starts = append(starts, i)
		}
	}
	return starts
}

type metafileImport struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// metafileImports lists the import records of a non-bundling build, sorted
// and de-duplicated.
func metafileImports(metafile string) []metafileImport {
	var meta struct {
		Outputs map[string]struct {
			Imports []metafileImport `json:"imports"`
		} `json:"outputs"`
	}
	if json.Unmarshal([]byte(metafile), &meta) != nil {
		return nil
	}
	seen := map[metafileImport]bool{}
	var out []metafileImport
	for _, o := range meta.Outputs {
		for _, imp := range o.Imports {
			if imp.Path == "<runtime>" || seen[imp] {
				continue
			}
			seen[imp] = true
			out = append(out, imp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// classifySpecifier checks one specifier imported by file (a bundle path)
// and returns "" when it is allowed, or the issue code and message.
func classifySpecifier(file, spec, kind string, declared map[string]struct{}) (code, message string) {
	if isNodeBuiltin(spec) {
		return "", ""
	}
	what := describeImport(kind, spec)
	if isRelativeSpecifier(spec) {
		target := path.Join(path.Dir(file), spec)
		if target == ".." || strings.HasPrefix(target, "../") {
			return codeImportEscapesBundle, fmt.Sprintf("%s resolves outside the bundle folder", what)
		}
		if _, ok := declared[target]; ok && !strings.HasSuffix(spec, "/") {
			return "", ""
		}
		return codeUndeclaredImport, fmt.Sprintf("%s resolves to %s, which is not a file declared in execution.json (specifiers must name the file exactly, with its extension)", what, quoteForMessage(target))
	}
	if strings.HasPrefix(spec, "node:") {
		return codeUndeclaredImport, fmt.Sprintf("%s is not a Node built-in module", what)
	}
	return codeUndeclaredImport, fmt.Sprintf("%s is neither a Node built-in nor a declared bundle file", what)
}

// isRelativeSpecifier follows Node: "./", "../", "." and ".." are relative;
// everything else (bare names, "/abs", URLs, "#imports") is not.
func isRelativeSpecifier(spec string) bool {
	return spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../")
}

func describeImport(kind, spec string) string {
	q := quoteForMessage(spec)
	switch kind {
	case "require-call":
		return "require(" + q + ")"
	case "dynamic-import":
		return "import(" + q + ")"
	case "require-resolve":
		return "require.resolve(" + q + ")"
	}
	return "import " + q
}

// cleanMessage keeps esbuild's text (which may quote source tokens) valid
// UTF-8 and of bounded length.
func cleanMessage(s string) string {
	const limit = 500
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// quoteForMessage quotes a specifier for a message, escaping control and
// invalid bytes and shortening very long ones.
func quoteForMessage(s string) string {
	const limit = 200
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q…", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
