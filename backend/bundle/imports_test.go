package bundle

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
)

// importWant is an expected issue: exact code and path, and a substring of
// the message ("" to skip the message check).
type importWant struct {
	code, path, msg string
}

func checkImportIssues(t *testing.T, got []Issue, want []importWant) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		w := want[i]
		ok = got[i].Code == w.code && got[i].Path == w.path && strings.Contains(got[i].Message, w.msg)
	}
	if !ok {
		var b strings.Builder
		for _, is := range got {
			fmt.Fprintf(&b, "\n  %s", is)
		}
		t.Fatalf("got %d issues:%s\nwant %d: %+v", len(got), b.String(), len(want), want)
	}
}

func TestScanImportsTable(t *testing.T) {
	const run = "scripts/run.mjs"
	const cjs = "scripts/run.cjs"
	tests := []struct {
		name     string
		files    map[string]string
		declared []string // nil: every key of files
		want     []importWant
	}{
		{
			name: "static import of declared file",
			files: map[string]string{
				run:                    `import { f } from "./lib/util.mjs";` + "\nf();\n",
				"scripts/lib/util.mjs": `export const f = () => 1;`,
			},
		},
		{
			name: "import of undeclared sibling",
			files: map[string]string{
				run:                 `import "./other.mjs";`,
				"scripts/other.mjs": `export {};`,
			},
			declared: []string{run},
			want:     []importWant{{codeUndeclaredImport, run + ":1:8", `import "./other.mjs" resolves to "scripts/other.mjs", which is not a file declared`}},
		},
		{
			name: "no extension or index guessing",
			files: map[string]string{
				run:                     "import { f } from \"./lib/util\";\nimport \"./lib\";\nimport \"./lib/util.mjs/\";\n",
				"scripts/lib/util.mjs":  `export const f = 1;`,
				"scripts/lib/index.mjs": `export {};`,
			},
			want: []importWant{
				{codeUndeclaredImport, run + ":1:19", `"./lib/util"`},
				{codeUndeclaredImport, run + ":2:8", `"./lib"`},
				{codeUndeclaredImport, run + ":3:8", `"./lib/util.mjs/"`},
			},
		},
		{
			name: "node builtins with and without prefix",
			files: map[string]string{run: `
import fs from "node:fs";
import fs2 from "fs";
import { readFile } from "fs/promises";
import { readFile as r2 } from "node:fs/promises";
import { ReadableStream } from "stream/web";
import test from "node:test";
import { spec } from "node:test/reporters";
import * as sqlite from "node:sqlite";
import { createHash } from "crypto";
const p = require("path");
const cp = await import("node:child_process");
`},
		},
		{
			name: "unknown node: names and prefix-only builtins without prefix",
			files: map[string]string{run: `import "node:not-a-module";
import "node:fs/";
import "node:FS";
import "test";
import "fs/nope";
`},
			want: []importWant{
				{codeUndeclaredImport, run + ":1:8", `import "node:not-a-module" is not a Node built-in module`},
				{codeUndeclaredImport, run + ":2:8", `"node:fs/" is not a Node built-in`},
				{codeUndeclaredImport, run + ":3:8", `"node:FS"`},
				{codeUndeclaredImport, run + ":4:8", `import "test" is neither a Node built-in nor a declared bundle file`},
				{codeUndeclaredImport, run + ":5:8", `"fs/nope"`},
			},
		},
		{
			name: "bare packages, absolute paths, URLs and subpath imports",
			files: map[string]string{run: `import _ from "lodash";
import "/etc/passwd.mjs";
import "https://example.com/x.mjs";
import "file:///etc/x.mjs";
import "data:text/javascript,export default 1";
import "#internal";
import "@scope/pkg/sub.mjs";
`},
			want: []importWant{
				{codeUndeclaredImport, run + ":1:15", `import "lodash" is neither a Node built-in nor a declared bundle file`},
				{codeUndeclaredImport, run + ":2:8", `"/etc/passwd.mjs"`},
				{codeUndeclaredImport, run + ":3:8", `"https://example.com/x.mjs"`},
				{codeUndeclaredImport, run + ":4:8", `"file:///etc/x.mjs"`},
				{codeUndeclaredImport, run + ":5:8", `"data:text/javascript,export default 1"`},
				{codeUndeclaredImport, run + ":6:8", `"#internal"`},
				{codeUndeclaredImport, run + ":7:8", `"@scope/pkg/sub.mjs"`},
			},
		},
		{
			name: "require of declared file in cjs",
			files: map[string]string{
				cjs:                     "const { count } = require('./lib/count.cjs');\nmodule.exports = count;\n",
				"scripts/lib/count.cjs": `exports.count = (s) => s.length;`,
			},
		},
		{
			name: "require of undeclared file and package in cjs",
			files: map[string]string{
				cjs: "const a = require('./lib/missing.cjs');\nconst b = require('left-pad');\nconst c = require.resolve('./nope.cjs');\n",
			},
			want: []importWant{
				{codeUndeclaredImport, cjs + ":1:19", `require("./lib/missing.cjs") resolves to "scripts/lib/missing.cjs"`},
				{codeUndeclaredImport, cjs + ":2:19", `require("left-pad") is neither`},
				{codeUndeclaredImport, cjs + ":3:27", `require.resolve("./nope.cjs")`},
			},
		},
		{
			name: "dynamic import of declared literal",
			files: map[string]string{
				run:                 "const m = await import(\"./lazy.mjs\");\nexport default m;\n",
				"scripts/lazy.mjs":  `export default 1;`,
				"scripts/other.cjs": `module.exports = import("./lazy.mjs");`,
			},
		},
		{
			name: "dynamic import and require with non-literal arguments",
			files: map[string]string{
				run: "const name = process.argv[2];\n" +
					"await import(name);\n" +
					"await import(`./plugins/${name}.mjs`);\n" +
					"require(name);\n" +
					"require('./a' + name);\n" +
					"require('fs', 'extra');\n" +
					"import 'lodash';\n",
			},
			want: []importWant{
				{codeUnanalyzableImport, run + ":2:7", "import() whose specifier is not a string literal"},
				{codeUnanalyzableImport, run + ":3:7", "import() whose specifier is not a string literal"},
				{codeUnanalyzableImport, run + ":4:1", "require() whose specifier is not a string literal"},
				{codeUnanalyzableImport, run + ":5:1", "require() whose specifier is not a string literal"},
				{codeUnanalyzableImport, run + ":6:1", "exactly one string-literal specifier"},
				// Positions of ordinary imports survive the neutralisation
				// of the sites above.
				{codeUndeclaredImport, run + ":7:8", `import "lodash"`},
			},
		},
		{
			name: "globs that would climb to the filesystem root are not expanded",
			files: map[string]string{
				cjs: "require(`../../../../../../../../${process.env.X}`);\n" +
					"import(\"../../../../../../\" + process.env.Y);\n" +
					"require(\"./\" + x + \"/\" + y);\n",
			},
			want: []importWant{
				{codeUnanalyzableImport, cjs + ":1:1", "require()"},
				{codeUnanalyzableImport, cjs + ":2:1", "import()"},
				{codeUnanalyzableImport, cjs + ":3:1", "require()"},
			},
		},
		{
			name: "require used as a value or written with escapes",
			files: map[string]string{
				cjs: "const load = require;\nload('lodash');\nconst x = \\u0072equire(process.env.M);\n",
			},
			want: []importWant{
				{codeUnanalyzableImport, cjs + ":1:14", "require is used other than as a direct call"},
				{codeUnanalyzableImport, cjs + ":3:11", "require() whose specifier is not a string literal"},
			},
		},
		{
			name: "module.require is checked like require",
			files: map[string]string{
				cjs: "const m = require('node:module');\nmodule.require('lodash');\n",
			},
			want: []importWant{{codeUndeclaredImport, cjs + ":2:16", `require("lodash")`}},
		},
		{
			name: "import() with unrecognised options",
			files: map[string]string{
				run:                 "await import('./data.json', { with: { type: 'json' } });\nawait import('lodash', { foo: 1 });\n",
				"scripts/data.json": `{}`,
			},
			want: []importWant{
				{codeUnanalyzableImport, run + ":2:26", "not recognised as an import"},
			},
		},
		{
			name: "re-exports are imports",
			files: map[string]string{
				run:                    "export * from \"./x.mjs\";\nexport { a } from \"./y.mjs\";\nexport * as ns from \"lodash\";\nexport * from \"./declared.mjs\";\n",
				"scripts/declared.mjs": `export const b = 2;`,
			},
			declared: []string{run, "scripts/declared.mjs"},
			want: []importWant{
				{codeUndeclaredImport, run + ":1:15", `import "./x.mjs"`},
				{codeUndeclaredImport, run + ":2:19", `import "./y.mjs"`},
				{codeUndeclaredImport, run + ":3:21", `import "lodash"`},
			},
		},
		{
			name: "escape from the bundle root",
			files: map[string]string{
				run:        "import a from \"../../etc/passwd.mjs\";\nimport b from \"../run2.mjs\";\nconst c = await import(\"../..\");\n",
				"run2.mjs": `export default 1;`,
			},
			want: []importWant{
				{codeImportEscapesBundle, run + ":1:15", `import "../../etc/passwd.mjs" resolves outside the bundle folder`},
				{codeImportEscapesBundle, run + ":3:24", `import("../..")`},
			},
		},
		{
			name: "syntax error with position",
			files: map[string]string{
				"scripts/x.mjs": "import fs from \"fs\";\nexport function f( {\n  return 1;\n}\n",
			},
			want: []importWant{{codeSyntaxError, "scripts/x.mjs:3:10", `Expected "}" but found "1"`}},
		},
		{
			name: "module rules follow the file extension",
			files: map[string]string{
				"scripts/a.mjs": "return;\n",
				"scripts/b.cjs": "if (module) return;\nmodule.exports = 1;\n",
			},
			want: []importWant{{codeSyntaxError, "scripts/a.mjs:1:1", "Top-level return cannot be used inside an ECMAScript module"}},
		},
		{
			name: "imports in comments, strings and templates are not imports",
			files: map[string]string{
				run: "// import \"lodash\";\n/* require(\"left-pad\") */\nconst s = 'import \"x\"';\nconst t = `require(\"y\") ${'import(\"z\")'}`;\nconst re = /import \"w\"/;\nexport { s, t, re };\n",
			},
		},
		{
			name: "repeated import is reported once",
			files: map[string]string{
				run: "import 'lodash';\nimport 'lodash';\nconst x = require('lodash');\n",
			},
			want: []importWant{
				{codeUndeclaredImport, run + ":1:8", `import "lodash"`},
				{codeUndeclaredImport, run + ":3:19", `require("lodash")`},
			},
		},
		{
			name: "plain .js parses ESM and CommonJS, other files are ignored",
			files: map[string]string{
				"scripts/a.js":   "const x = require('./b.js');\nimport y from './c.mjs';\n",
				"scripts/b.js":   "module.exports = 1;\n",
				"README.md":      "import 'lodash';\n",
				"data/info.json": `{"import": "lodash"}`,
				"scripts/x.ts":   "import 'lodash';\n",
			},
			want: []importWant{{codeUndeclaredImport, "scripts/a.js:2:15", `"./c.mjs"`}},
		},
		{
			name: "positions count CRLF and U+2028 line breaks like esbuild",
			files: map[string]string{
				run: "// one\r\n// two\r\nawait import(x);\r\n/*\u2028*/ import 'lodash';\r\n",
			},
			want: []importWant{
				{codeUnanalyzableImport, run + ":3:7", "import()"},
				{codeUndeclaredImport, run + ":5:11", `import "lodash"`},
			},
		},
		{
			name: "binary and invalid UTF-8",
			files: map[string]string{
				"scripts/bin.mjs": "\x00\xff\xfe\x80binary",
			},
			want: []importWant{{codeSyntaxError, "scripts/bin.mjs:1:1", "Unexpected"}},
		},
		{
			name: "issues are ordered by file then position",
			files: map[string]string{
				"z.mjs":         "import 'a';\n",
				"a/b.cjs":       "require('b');\nrequire('a');\n",
				"a.mjs":         "\n\nimport 'c'; import 'd';\n",
				"scripts/q.mjs": "import './z.mjs';\n",
			},
			declared: []string{"z.mjs", "a/b.cjs", "a.mjs", "scripts/q.mjs"},
			want: []importWant{
				{codeUndeclaredImport, "a.mjs:3:8", `"c"`},
				{codeUndeclaredImport, "a.mjs:3:20", `"d"`},
				{codeUndeclaredImport, "a/b.cjs:1:9", `"b"`},
				{codeUndeclaredImport, "a/b.cjs:2:9", `"a"`},
				{codeUndeclaredImport, "scripts/q.mjs:1:8", `resolves to "scripts/z.mjs"`},
				{codeUndeclaredImport, "z.mjs:1:8", `"a"`},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := make(map[string][]byte, len(tc.files))
			declared := tc.declared
			for name, src := range tc.files {
				files[name] = []byte(src)
				if tc.declared == nil {
					declared = append(declared, name)
				}
			}
			checkImportIssues(t, ScanImports(files, declared), tc.want)
		})
	}
}

func TestScanImportsCapsAtMaxIssues(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxIssues+7; i++ {
		fmt.Fprintf(&b, "import \"pkg%02d\";\n", i)
	}
	files := map[string][]byte{
		"scripts/run.mjs": []byte(b.String()),
		"scripts/zzz.mjs": []byte("import 'later';\n"),
	}
	got := ScanImports(files, []string{"scripts/run.mjs", "scripts/zzz.mjs"})
	if len(got) != MaxIssues {
		t.Fatalf("got %d issues, want %d", len(got), MaxIssues)
	}
	for i, is := range got {
		wantPath := fmt.Sprintf("scripts/run.mjs:%d:8", i+1)
		if is.Code != codeUndeclaredImport || is.Path != wantPath || !strings.Contains(is.Message, fmt.Sprintf(`"pkg%02d"`, i)) {
			t.Fatalf("issue %d = %s, want undeclared pkg%02d at %s", i, is, i, wantPath)
		}
	}
}

func TestScanImportsDeterministic(t *testing.T) {
	files := map[string][]byte{}
	var declared []string
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("scripts/f%d.mjs", i)
		declared = append(declared, name)
		files[name] = []byte(fmt.Sprintf("import 'p%d';\nawait import(x);\nimport './f%d.mjs';\nimport './nope%d.mjs';\n", i, (i+1)%6, i))
	}
	first := ScanImports(files, declared)
	if len(first) != 18 {
		t.Fatalf("got %d issues, want 18: %v", len(first), first)
	}
	for i := 0; i < 5; i++ {
		if again := ScanImports(files, declared); !reflect.DeepEqual(first, again) {
			t.Fatalf("run %d differs:\n%v\n%v", i, first, again)
		}
	}
	if !sort.SliceIsSorted(first, func(i, j int) bool {
		fi, _, _ := strings.Cut(first[i].Path, ":")
		fj, _, _ := strings.Cut(first[j].Path, ":")
		return fi < fj
	}) {
		t.Fatalf("issues not ordered by file: %v", first)
	}
}

func TestScanImportsConcurrent(t *testing.T) {
	files := map[string][]byte{
		"scripts/run.mjs":      []byte("import './lib/util.mjs';\nimport 'lodash';\nawait import(`./${x}`);\n"),
		"scripts/lib/util.mjs": []byte("export const x = require(y);\n"),
	}
	declared := []string{"scripts/run.mjs", "scripts/lib/util.mjs"}
	want := ScanImports(files, declared)
	if len(want) != 3 {
		t.Fatalf("got %v, want 3 issues", want)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				if got := ScanImports(files, declared); !reflect.DeepEqual(got, want) {
					errs <- fmt.Sprintf("%v != %v", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

func TestScanImportsOversizedFile(t *testing.T) {
	big := make([]byte, maxScanFileBytes+1)
	for i := range big {
		big[i] = ' '
	}
	got := ScanImports(map[string][]byte{"scripts/big.mjs": big}, []string{"scripts/big.mjs"})
	checkImportIssues(t, got, []importWant{{codeUnanalyzableImport, "scripts/big.mjs", "more than"}})
}

// readImportFixture loads a bundle from testdata/imports/NAME with every file
// declared. The test reads the disk; ScanImports only sees the bytes.
func readImportFixture(t *testing.T, name string) (map[string][]byte, []string) {
	t.Helper()
	root := filepath.Join("testdata", "imports", name)
	files := map[string][]byte{}
	var declared []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		files[rel] = data
		declared = append(declared, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, declared
}

func TestScanImportsFixtures(t *testing.T) {
	files, declared := readImportFixture(t, "valid")
	checkImportIssues(t, ScanImports(files, declared), nil)

	files, declared = readImportFixture(t, "invalid")
	checkImportIssues(t, ScanImports(files, declared), []importWant{
		{codeSyntaxError, "scripts/lib/broken.js:2:10", "Expected"},
		{codeUnanalyzableImport, "scripts/lib/count.cjs:2:13", "require()"},
		{codeUndeclaredImport, "scripts/lib/count.cjs:3:28", `require("./undeclared.cjs")`},
		{codeUndeclaredImport, "scripts/run.mjs:1:15", `import "lodash"`},
		{codeUndeclaredImport, "scripts/run.mjs:2:24", `import "./lib/util"`},
		{codeImportEscapesBundle, "scripts/run.mjs:3:21", `import "../../secrets.mjs"`},
		{codeUndeclaredImport, "scripts/run.mjs:4:15", `import "./lib/extra.mjs"`},
		{codeUnanalyzableImport, "scripts/run.mjs:7:21", "import()"},
	})
}

func TestImportsLineStartsAndNeutralise(t *testing.T) {
	got := esbuildLineStarts("a\nb\r\nc\rd\u2028e\u2029f\xff\n")
	want := []int{0, 2, 5, 7, 11, 15, 18}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("line starts %v, want %v", got, want)
	}
	// A location that does not match the text is refused, never guessed.
	src := "import(x);\n"
	sites := unanalyzableSites(esbuildParse("a.mjs", src, jsFileFormat("a.mjs")).Warnings)
	if len(sites) != 1 {
		t.Fatalf("sites = %v", sites)
	}
	if out, ok := neutraliseSites(src, sites); !ok || out != "_xxxxx(x);\n" {
		t.Fatalf("neutralise = %q, %v", out, ok)
	}
	if _, ok := neutraliseSites("foo(x);\n", sites); ok {
		t.Fatal("neutralise accepted a location that does not match the text")
	}
	bad := sites[0]
	loc := *bad.Location
	loc.Line = 9
	bad.Location = &loc
	if _, ok := neutraliseSites(src, []api.Message{bad}); ok {
		t.Fatal("neutralise accepted a line past the end")
	}
}

func TestImportsMetafileFallback(t *testing.T) {
	res := esbuildParse("scripts/a.mjs", "import './b.mjs';\nconst x = require('lodash');\nimport('fs');\n", api.FormatESModule)
	got := metafileImports(res.Metafile)
	want := []metafileImport{{"./b.mjs", "import-statement"}, {"fs", "dynamic-import"}, {"lodash", "require-call"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("metafile imports %v, want %v", got, want)
	}
	if metafileImports("not json") != nil {
		t.Fatal("bad metafile should yield nothing")
	}
}

func FuzzScanImports(f *testing.F) {
	seeds := []string{
		"",
		"import './lib/util.mjs';\nimport 'lodash';\n",
		"const x = require(name); require('./a.cjs');",
		"await import(`./${x}`); await import('../../..' + y);",
		"export * from './x.mjs'; export { a } from 'node:fs';",
		"\\u0072equire(x); const r = require; typeof require;",
		"import('a', {foo: 1}); import('b', {with: {type: 'json'}});",
		"let x = ;",
		"\x00\xff\xfe binary \u2028\r\n\r",
		"/* import 'x' */ 'require(\"y\")'",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
	}
	exts := []string{".mjs", ".cjs", ".js"}
	f.Fuzz(func(t *testing.T, data []byte, sel uint8) {
		name := "scripts/run" + exts[int(sel)%len(exts)]
		files := map[string][]byte{name: data, "scripts/lib/util.mjs": data, "notes.txt": data}
		issues := ScanImports(files, []string{name, "scripts/lib/util.mjs"})
		if len(issues) > MaxIssues {
			t.Fatalf("%d issues, more than %d", len(issues), MaxIssues)
		}
		for _, is := range issues {
			switch is.Code {
			case codeSyntaxError, codeUndeclaredImport, codeImportEscapesBundle, codeUnanalyzableImport:
			default:
				t.Fatalf("unexpected code %q", is.Code)
			}
			if !strings.HasPrefix(is.Path, name) && !strings.HasPrefix(is.Path, "scripts/lib/util.mjs") {
				t.Fatalf("issue for a file that was not scanned: %s", is)
			}
		}
	})
}
