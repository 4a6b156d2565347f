package reactive

// Run is the record of one reactive run (the capture record's
// reactive_run). Status is completed exactly when Outcome is passed.
// ActiveState is the state the run ended in. Controls holds the one
// control that stopped a run that did not pass, with the capture order of
// the last observation admitted before it (null when none was), so later
// output cannot be moved ahead of it. Transitions is the deterministic
// transition journal.
type Run struct {
	Status      string    `json:"status"`
	Outcome     string    `json:"outcome"`
	ActiveState string    `json:"active_state"`
	Controls    []Control `json:"controls"`
	Transitions []Step    `json:"transitions"`
}

// Control is a deadline, target loss, cancellation or other stop of a run.
type Control struct {
	Sequence          int    `json:"sequence"`
	Kind              string `json:"kind"` // the outcome it caused
	AtMS              int    `json:"at_ms"`
	State             string `json:"state"`
	LastAdmittedOrder *int   `json:"last_admitted_order"`
}

// Step is one fired transition: the observations its trigger matched
// (event ids), the observations recording its actions in order, the
// capture order of the last observation admitted when it fired, and the
// state it entered (null for a finish).
type Step struct {
	Sequence          int      `json:"sequence"`
	AtMS              int      `json:"at_ms"`
	TransitionID      string   `json:"transition_id"`
	StateBefore       string   `json:"state_before"`
	StateAfter        *string  `json:"state_after"`
	MatchedEventIDs   []string `json:"matched_event_ids"`
	ActionEvidenceIDs []string `json:"action_evidence_ids"`
	AdmittedOrder     int      `json:"admitted_order"`
}

// Outcomes lists every outcome in the order of the spec.
func Outcomes() []string {
	return []string{OutcomePassed, OutcomePredicateTimeout, OutcomeScenarioDeadline, OutcomeAmbiguousMatch,
		OutcomeActionRejected, OutcomeTargetLost, OutcomeCaptureIncomplete, OutcomeCancelled, OutcomeCleanupFailed}
}
