package bundle

import "strings"

// The Node.js built-in module names a bundle script may import.
//
// This list is hand-written on purpose: inspection never runs Node (or any
// other JavaScript runtime), so it cannot ask module.builtinModules or
// module.isBuiltin at scan time. It mirrors module.builtinModules as printed
// by Node v20.20.2 (Node 22 adds no unprefixed names, only the prefix-only
// "node:sqlite" below), including the legacy underscore-prefixed internals,
// which Node still loads as built-ins. Update it by hand when the supported
// Node line changes:
//
//	node -p "require('module').builtinModules.join('\\n')"

// nodeBuiltinModules are the built-ins that may be imported with or without
// the "node:" scheme ("fs" and "node:fs" alike). Sorted.
var nodeBuiltinModules = []string{
	"_http_agent",
	"_http_client",
	"_http_common",
	"_http_incoming",
	"_http_outgoing",
	"_http_server",
	"_stream_duplex",
	"_stream_passthrough",
	"_stream_readable",
	"_stream_transform",
	"_stream_wrap",
	"_stream_writable",
	"_tls_common",
	"_tls_wrap",
	"assert",
	"assert/strict",
	"async_hooks",
	"buffer",
	"child_process",
	"cluster",
	"console",
	"constants",
	"crypto",
	"dgram",
	"diagnostics_channel",
	"dns",
	"dns/promises",
	"domain",
	"events",
	"fs",
	"fs/promises",
	"http",
	"http2",
	"https",
	"inspector",
	"inspector/promises",
	"module",
	"net",
	"os",
	"path",
	"path/posix",
	"path/win32",
	"perf_hooks",
	"process",
	"punycode",
	"querystring",
	"readline",
	"readline/promises",
	"repl",
	"stream",
	"stream/consumers",
	"stream/promises",
	"stream/web",
	"string_decoder",
	"sys",
	"timers",
	"timers/promises",
	"tls",
	"trace_events",
	"tty",
	"url",
	"util",
	"util/types",
	"v8",
	"vm",
	"wasi",
	"worker_threads",
	"zlib",
}

// nodePrefixOnlyBuiltins exist only with the "node:" scheme: "node:test"
// loads the test runner, while a bare "test" is an ordinary package name that
// Node resolves from node_modules. "node:sqlite" is Node 22 only. Sorted.
var nodePrefixOnlyBuiltins = []string{
	"sea",
	"sqlite",
	"test",
	"test/reporters",
}

var (
	bareBuiltinSet   = stringSet(nodeBuiltinModules)
	prefixBuiltinSet = stringSet(append(append([]string(nil), nodeBuiltinModules...), nodePrefixOnlyBuiltins...))
)

func stringSet(names []string) map[string]struct{} {
	set := make(map[string]struct{}, len(names))
	for _, name := range names {
		set[name] = struct{}{}
	}
	return set
}

// isNodeBuiltin reports whether spec names a Node.js built-in module exactly
// as Node would load it: "fs", "fs/promises", "node:fs", "node:test". Case
// matters and no sub-path beyond the listed ones is accepted ("fs/x" and
// "node:fs/" are not built-ins).
func isNodeBuiltin(spec string) bool {
	if name, ok := strings.CutPrefix(spec, "node:"); ok {
		_, found := prefixBuiltinSet[name]
		return found
	}
	_, found := bareBuiltinSet[spec]
	return found
}
