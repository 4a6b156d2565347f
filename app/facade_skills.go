package app

import (
	"github.com/gatehouse/gatehouse/backend/skills"
)

// Empty is the argument of methods that take none.
type Empty struct{}

// AppInfoResult describes this Gatehouse.
type AppInfoResult struct {
	Version string `json:"version"`
	DataDir string `json:"dataDir"`
	Shell   string `json:"shell"`
}

// Version is the application version shown in the UI.
const Version = "0.1.0"

// AppInfo returns the version, data directory and shell.
func (f *Facade) AppInfo(Empty) (AppInfoResult, error) {
	if f.firstCall != nil {
		f.firstCallOnce.Do(func() { close(f.firstCall) })
	}
	return AppInfoResult{Version: Version, DataDir: f.env.DataDir, Shell: f.shell}, nil
}

// ListSkillsResult is the Skills view's list.
type ListSkillsResult struct {
	Skills []SkillSummary      `json:"skills"`
	Roots  []skills.RootStatus `json:"roots"`
}

// ListSkills discovers every skill and inspects each one's script.
func (f *Facade) ListSkills(Empty) (ListSkillsResult, error) {
	cat, err := f.env.discover(f.ctx)
	if err != nil {
		return ListSkillsResult{}, err
	}
	out := ListSkillsResult{Skills: []SkillSummary{}, Roots: cat.Roots}
	for _, s := range cat.Skills {
		out.Skills = append(out.Skills, summarize(f.env, s))
	}
	return out, nil
}

// InspectSkillArgs names a skill.
type InspectSkillArgs struct {
	Name string `json:"name"`
}

// InspectSkillResult is a full inspection plus the SKILL.md body.
type InspectSkillResult struct {
	SkillInspection
	Body string `json:"body"`
}

// InspectSkill returns one skill's full inspection.
func (f *Facade) InspectSkill(a InspectSkillArgs) (InspectSkillResult, error) {
	s, err := f.env.resolveSkill(f.ctx, a.Name)
	if err != nil {
		return InspectSkillResult{}, err
	}
	return InspectSkillResult{SkillInspection: inspection(f.env, s), Body: s.Body}, nil
}
