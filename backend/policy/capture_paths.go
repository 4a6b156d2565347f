// Path judgement for process capture: paths are judged as the kernel will
// use them (docs/formats/capture-operator-policy.md, "The checks, in order").

package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReasonUncleanPath is reported by CheckCapture for a requested path that
// filepath.Clean would change ("a/./b", "a//b", "a/../b", a trailing "/"):
// such a path is refused, never cleaned, because the kernel resolves ".."
// after following symlinks while Clean removes it textually.
const ReasonUncleanPath = "unclean_path"

// ResolvePath returns the absolute, clean path p with every symbolic link
// resolved, as the kernel would follow it. Components that do not exist
// (yet) are kept as written; a component that exists but cannot be
// resolved (a dangling or looping link, a non-directory in the middle) is
// an error, so nothing unresolved precedes an existing entry.
//
// The result names the object the kernel would reach at the time of the
// call; callers that check it must then use the result, not p.
func ResolvePath(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", errors.New("path contains a NUL byte")
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path", p)
	}
	if filepath.Clean(p) != p {
		return "", fmt.Errorf("%q is not clean", p)
	}
	resolved := string(filepath.Separator)
	comps := strings.Split(strings.TrimPrefix(p, string(filepath.Separator)), string(filepath.Separator))
	for i, comp := range comps {
		if comp == "" {
			continue // p == "/"
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return filepath.Join(append([]string{next}, comps[i+1:]...)...), nil
		case err != nil:
			return "", fmt.Errorf("resolve %q: %w", p, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			r, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", fmt.Errorf("resolve %q: the link %q does not resolve: %w", p, next, err)
			}
			resolved = r
		default:
			resolved = next
		}
	}
	return resolved, nil
}

// resolvedRoots resolves every root; a root that cannot be resolved
// contains nothing.
func resolvedRoots(roots []string) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if rr, err := ResolvePath(r); err == nil {
			out = append(out, rr)
		}
	}
	return out
}

// judgePath resolves the requested path p and reports whether the result
// lies within one of the resolved roots. code is "" when it does, else
// ReasonUncleanPath or outside (with a human message naming what).
func judgePath(what, p string, roots []string, outside string) (resolved, code, message string) {
	if filepath.IsAbs(p) && strings.IndexByte(p, 0) < 0 && filepath.Clean(p) != p {
		return "", ReasonUncleanPath, fmt.Sprintf("%s %q is not a clean path (filepath.Clean gives %q); it is refused, not cleaned", what, p, filepath.Clean(p))
	}
	r, err := ResolvePath(p)
	if err != nil {
		return "", outside, fmt.Sprintf("%s %q cannot be judged: %v", what, p, err)
	}
	for _, root := range roots {
		if WithinRoot(r, root) {
			return r, "", ""
		}
	}
	if r != p {
		return "", outside, fmt.Sprintf("%s %q resolves to %q, which is outside the allowed roots", what, p, r)
	}
	return "", outside, fmt.Sprintf("%s %q is outside the allowed roots", what, p)
}
