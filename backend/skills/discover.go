// Package skills discovers Agent Skills bundles in an ordered list of skill
// roots: folder skills (NAME/SKILL.md) and legacy flat skills (NAME.md).
// Discovery only reads: it never imports, runs, installs or hooks anything,
// and a skill whose manifest or frontmatter is broken is still listed, with
// the reason, rather than hidden.
package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/bundle"
)

// Discovery bounds, so a huge or hostile root cannot stall listing.
const (
	MaxSkillFileBytes = 1 << 20 // SKILL.md / NAME.md
	MaxRootEntries    = 4096
)

// Kinds of skill.
const (
	KindFolder = "folder" // NAME/SKILL.md, may carry execution.json
	KindFlat   = "flat"   // legacy NAME.md: prompt-only, never executable
)

// Root is one place skills are discovered from. Origin says where the root
// came from ("bundled" or "settings").
type Root struct {
	Path   string `json:"path"`
	Origin string `json:"origin"`
}

// RootStatus reports what happened to one root during discovery.
type RootStatus struct {
	Root
	Skills int    `json:"skills"`
	Error  string `json:"error,omitempty"`
}

// Skill is one discovered skill. Name is the name it is listed and looked
// up under: its folder name (or file stem for flat skills), whatever its
// frontmatter says.
type Skill struct {
	Name          string          `json:"name"`
	Kind          string          `json:"kind"`
	Root          Root            `json:"root"`
	Dir           string          `json:"dir,omitempty"`
	File          string          `json:"file"`
	Valid         bool            `json:"valid"`
	Errors        []bundle.Issue  `json:"errors"`
	Warnings      []bundle.Issue  `json:"warnings"`
	Frontmatter   Frontmatter     `json:"frontmatter"`
	UnknownFields []UnknownField  `json:"unknown_fields"`
	Body          string          `json:"-"`
	HasManifest   bool            `json:"has_manifest"`
	Shadowed      []ShadowedSkill `json:"shadowed,omitempty"`
}

// ShadowedSkill is a same-named skill that lost to the listed one.
type ShadowedSkill struct {
	Root Root   `json:"root"`
	Kind string `json:"kind"`
	File string `json:"file"`
}

// Catalog is the result of one discovery pass.
type Catalog struct {
	Skills []*Skill     `json:"skills"`
	Roots  []RootStatus `json:"roots"`
	byName map[string]*Skill
}

// Find returns the winning skill named name.
func (c *Catalog) Find(name string) (*Skill, bool) {
	s, ok := c.byName[name]
	return s, ok
}

// Discover lists the skills of roots. When two roots hold a skill of the
// same name the later root wins; within one root a folder skill wins over a
// flat NAME.md. Losers are recorded in the winner's Shadowed list. A root
// that cannot be read is reported in Roots and skipped.
func Discover(roots []Root) *Catalog {
	return DiscoverCached(roots, nil)
}

// DiscoverCached is Discover with the parse of unchanged documents taken
// from cache (nil: no cache). Every document is still read on every call;
// the answer is the one Discover gives for the same bytes.
func DiscoverCached(roots []Root, cache *DocumentCache) *Catalog {
	c := &Catalog{byName: map[string]*Skill{}}
	for _, r := range roots {
		found, err := discoverRoot(r, cache)
		st := RootStatus{Root: r, Skills: len(found)}
		if err != nil {
			st.Error = err.Error()
		}
		c.Roots = append(c.Roots, st)
		for _, s := range found {
			if prev, ok := c.byName[s.Name]; ok {
				s.Shadowed = append(append(s.Shadowed, prev.Shadowed...), ShadowedSkill{Root: prev.Root, Kind: prev.Kind, File: prev.File})
			}
			c.byName[s.Name] = s
		}
	}
	for _, s := range c.byName {
		c.Skills = append(c.Skills, s)
	}
	sort.Slice(c.Skills, func(i, j int) bool { return c.Skills[i].Name < c.Skills[j].Name })
	return c
}

func discoverRoot(r Root, cache *DocumentCache) ([]*Skill, error) {
	if !filepath.IsAbs(r.Path) {
		return nil, fmt.Errorf("skill root %q is not an absolute path", r.Path)
	}
	fi, err := os.Lstat(r.Path)
	if err != nil {
		return nil, fmt.Errorf("skill root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("skill root %s is not a directory (symlinked roots are not followed)", r.Path)
	}
	entries, err := os.ReadDir(r.Path)
	if err != nil {
		return nil, fmt.Errorf("skill root: %w", err)
	}
	var rootErr error
	if len(entries) > MaxRootEntries {
		rootErr = fmt.Errorf("skill root %s has %d entries; only the first %d are read", r.Path, len(entries), MaxRootEntries)
		entries = entries[:MaxRootEntries]
	}
	folders := map[string]*Skill{}
	var flats []*Skill
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		full := filepath.Join(r.Path, name)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			// A symlinked folder or NAME.md is listed as invalid, never followed.
			if _, err := os.Stat(filepath.Join(full, artifact.SkillFile)); err == nil || strings.HasSuffix(name, ".md") {
				s := &Skill{Name: strings.TrimSuffix(name, ".md"), Kind: KindFolder, Root: r, File: full}
				s.Errors = []bundle.Issue{{Code: "symlink", Path: name, Message: "skill entries that are symlinks are not followed"}}
				finish(s)
				folders[s.Name] = s
			}
		case e.IsDir():
			if _, err := os.Lstat(filepath.Join(full, artifact.SkillFile)); err != nil {
				continue // not a skill folder
			}
			folders[name] = loadSkill(r, name, KindFolder, full, artifact.SkillFile, cache)
		case e.Type().IsRegular() && strings.HasSuffix(name, ".md") && name != ".md":
			stem := strings.TrimSuffix(name, ".md")
			flats = append(flats, loadSkill(r, stem, KindFlat, r.Path, name, cache))
		}
	}
	out := make([]*Skill, 0, len(folders)+len(flats))
	for _, f := range flats {
		if s, ok := folders[f.Name]; ok {
			s.Shadowed = append(s.Shadowed, ShadowedSkill{Root: r, Kind: KindFlat, File: f.File})
			continue
		}
		out = append(out, f)
	}
	for _, s := range folders {
		out = append(out, s)
	}
	return out, rootErr
}

// loadSkill reads one skill document with safe opens. file is relative to dir.
func loadSkill(r Root, name, kind, dir, file string, cache *DocumentCache) *Skill {
	s := &Skill{Name: name, Kind: kind, Root: r, File: filepath.Join(dir, file)}
	if kind == KindFolder {
		s.Dir = dir
		if _, err := os.Lstat(filepath.Join(dir, artifact.ManifestFile)); err == nil {
			s.HasManifest = true
		}
	}
	doc, err := artifact.ReadFile(dir, file, MaxSkillFileBytes)
	if err != nil {
		code := "unreadable"
		var ae *artifact.Error
		if errors.As(err, &ae) {
			code = ae.Code
		}
		s.Errors = []bundle.Issue{{Code: code, Path: file, Message: err.Error()}}
		finish(s)
		return s
	}
	p := cache.parse(doc, name)
	s.Frontmatter, s.UnknownFields, s.Body = p.fm, p.unknown, p.body
	s.Errors, s.Warnings = p.errors, p.warnings
	if kind == KindFlat {
		s.Warnings = append(s.Warnings, bundle.Issue{Code: "legacy_flat_skill", Path: file, Message: "legacy flat skill: discoverable and prompt-only, never executable"})
	}
	finish(s)
	return s
}

func finish(s *Skill) {
	s.Valid = len(s.Errors) == 0
	if s.Errors == nil {
		s.Errors = []bundle.Issue{}
	}
	if s.Warnings == nil {
		s.Warnings = []bundle.Issue{}
	}
	if s.UnknownFields == nil {
		s.UnknownFields = []UnknownField{}
	}
}

// LoadFolder loads the single folder skill at dir, which must hold a
// SKILL.md, as if it were found in a root of origin "path" (its parent
// folder). The skill's name is the folder's name.
func LoadFolder(dir string) (*Skill, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("skills: %s is not a folder (symlinks are not followed)", abs)
	}
	if _, err := os.Lstat(filepath.Join(abs, artifact.SkillFile)); err != nil {
		return nil, fmt.Errorf("skills: %s has no %s: %w", abs, artifact.SkillFile, err)
	}
	return loadSkill(Root{Path: filepath.Dir(abs), Origin: "path"}, filepath.Base(abs), KindFolder, abs, artifact.SkillFile, nil), nil
}
