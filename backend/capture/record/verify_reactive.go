package record

import (
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/reactive"
)

// reactiveRun checks reactive_run against manifest.scenario.reactive: null
// exactly when the scenario has no reactive graph, otherwise a run that
// reactive.VerifyRun accepts against that graph and the record's
// event_journal.
func (v *verifier) reactiveRun(rec map[string]json.RawMessage) {
	raw, ok := rec["reactive_run"]
	if !ok {
		return
	}
	var manifest struct {
		Scenario map[string]json.RawMessage `json:"scenario"`
	}
	if json.Unmarshal(rec["manifest"], &manifest) != nil || manifest.Scenario == nil {
		return // the manifest has been reported
	}
	decl, has := manifest.Scenario["reactive"]
	if !has || isNull(decl) {
		if !isNull(raw) {
			v.add("$.reactive_run", CodeStateMismatch, "must be null: manifest.scenario has no reactive graph")
		}
		return
	}
	sc, issues := reactive.Parse(decl, reactive.Context{})
	if len(issues) > 0 {
		v.add("$.manifest.scenario.reactive", CodeInvalidValue, "is not a valid reactive scenario: %s", strictjson.Truncate(issues[0].String(), 200))
		return
	}
	var l strictjson.Collector
	n := strictjson.Decode(raw, "$.reactive_run", strictjson.Options{MaxDepth: 16, Wording: strictjson.Wording{
		Trailing: "data follows the value at byte offset %d"}}, &l)
	if n == nil || !l.Empty() {
		for _, is := range l.List {
			v.add(is.Path, is.Code, "%s", is.Message)
		}
		return
	}
	if n.Kind == strictjson.Null {
		v.add("$.reactive_run", CodeStateMismatch, "must be the run of manifest.scenario.reactive, not null")
		return
	}
	j := journalIndex{orders: map[string]int{}}
	var journal []JournalEntry
	if json.Unmarshal(rec["event_journal"], &journal) == nil {
		j.n = len(journal)
		for i, e := range journal {
			id := e.Collection
			if id != "exit" && id != "settlement" {
				id = fmt.Sprintf("%s[%d]", e.Collection, e.Index)
			}
			if _, dup := j.orders[id]; !dup {
				j.orders[id] = i
			}
		}
	}
	reactive.VerifyRun(n, sc, "$.reactive_run", j, &v.issues)
}

// journalIndex locates observations by event id in an event_journal.
type journalIndex struct {
	orders map[string]int
	n      int
}

func (j journalIndex) Order(id string) (int, bool) {
	o, ok := j.orders[id]
	return o, ok
}

func (j journalIndex) Len() int { return j.n }
