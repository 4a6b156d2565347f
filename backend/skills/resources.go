package skills

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/bundle"
)

// Resource listing bounds.
const (
	MaxResources     = 1024
	MaxResourceDepth = 8
)

// Resource is one file of a folder skill, relative to the skill folder.
type Resource struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // instructions, manifest, script, reference, asset, other
	Size int64  `json:"size"`
}

// Resources lists the files of a folder skill without opening any of them.
// Symlinks, special files and entries past the bounds are not listed as
// resources; each is reported as an issue instead of being dropped
// silently. Flat skills have no resources.
func Resources(s *Skill) ([]Resource, []bundle.Issue) {
	res, issues := []Resource{}, []bundle.Issue{}
	if s.Kind != KindFolder || s.Dir == "" {
		return res, issues
	}
	var walk func(dir, rel string, depth int)
	walk = func(dir, rel string, depth int) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			issues = append(issues, bundle.Issue{Code: "unreadable", Path: rel, Message: err.Error()})
			return
		}
		for _, e := range entries {
			p := e.Name()
			if rel != "" {
				p = rel + "/" + e.Name()
			}
			switch {
			case len(res) >= MaxResources:
				issues = append(issues, bundle.Issue{Code: "too_many_resources", Path: p, Message: fmt.Sprintf("only the first %d files are listed", MaxResources)})
				return
			case e.Type()&fs.ModeSymlink != 0:
				issues = append(issues, bundle.Issue{Code: "symlink", Path: p, Message: "symlinks are rejected; bundle files must be regular files"})
			case e.IsDir():
				if depth >= MaxResourceDepth {
					issues = append(issues, bundle.Issue{Code: "too_deep", Path: p, Message: fmt.Sprintf("folders deeper than %d levels are not listed", MaxResourceDepth)})
					continue
				}
				walk(filepath.Join(dir, e.Name()), p, depth+1)
			case e.Type().IsRegular():
				info, err := e.Info()
				if err != nil {
					issues = append(issues, bundle.Issue{Code: "unreadable", Path: p, Message: err.Error()})
					continue
				}
				res = append(res, Resource{Path: p, Kind: resourceKind(p), Size: info.Size()})
			default:
				issues = append(issues, bundle.Issue{Code: "special_file", Path: p, Message: fmt.Sprintf("special file (%v) rejected", e.Type())})
			}
		}
	}
	walk(s.Dir, "", 1)
	return res, issues
}

func resourceKind(p string) string {
	switch {
	case p == artifact.SkillFile:
		return "instructions"
	case p == artifact.ManifestFile:
		return "manifest"
	case strings.HasPrefix(p, "scripts/"):
		return "script"
	case strings.HasPrefix(p, "references/"):
		return "reference"
	case strings.HasPrefix(p, "assets/"):
		return "asset"
	}
	return "other"
}

// ReadResource reads the skill-relative path rel, resolved against the
// skill folder whatever the process's working directory is. Absolute
// paths, "..", any symlink along the path and special files are refused
// with an *artifact.Error; files over max bytes are refused too. So is a
// file with more hard links than the bundle itself holds (code
// "hard_link"): its other name is outside the bundle, so the bytes are not
// the bundle's own (a link to ~/.ssh/id_ed25519 reads as a "resource").
func ReadResource(s *Skill, rel string, max int) ([]byte, error) {
	if s.Kind != KindFolder || s.Dir == "" {
		return nil, fmt.Errorf("skills: %s is a flat skill and has no resources", s.Name)
	}
	data, id, err := artifact.ReadFileIdentity(s.Dir, rel, max)
	if err != nil {
		return nil, err
	}
	if id.Nlink > 1 {
		if inside := linksInside(s, id); inside < id.Nlink {
			return nil, &artifact.Error{Code: "hard_link", Path: rel,
				Err: fmt.Errorf("the file has %d hard links and only %d are in this skill's folder; a link from outside the bundle is refused", id.Nlink, inside)}
		}
	}
	return data, nil
}

// linksInside counts the names of the file id below the skill folder,
// within the listing bounds of Resources (a bundle too large to list
// cannot vouch for its links, so the count then falls short).
func linksInside(s *Skill, id artifact.FileIdentity) uint64 {
	res, _ := Resources(s)
	var n uint64
	for _, r := range res {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(s.Dir, filepath.FromSlash(r.Path)), &st); err == nil &&
			uint64(st.Dev) == id.Dev && st.Ino == id.Ino {
			n++
		}
	}
	return n
}
