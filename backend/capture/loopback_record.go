package capture

// The capture engine's side of the loopback replay server
// (backend/loopback): starting it for a scenario and recording what it
// observes as protocol events and replay transitions.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/loopback"
)

// newLoopback starts listening for the replay plan of sc; it returns nil
// (which serves nothing) without replay.
func newLoopback(sc *Scenario) (*loopback.Server, error) {
	plan, issues := loopback.ParsePlan(sc.Replay, scenarioJSON)
	if len(issues) > 0 {
		return nil, fmt.Errorf("capture: replay: %w", IssueList(issues))
	}
	srv, err := loopback.New(loopback.Config{Plan: plan, PlanText: sc.Redactor(),
		Limits: loopback.Limits{Connections: sc.Limits.Connections, ProtocolBodyBytes: sc.Limits.ProtocolBodyBytes}})
	if err != nil {
		return nil, fmt.Errorf("capture: replay: %w", err)
	}
	return srv, nil
}

// attachLoopback makes n redact the machine's sensitive captures and,
// with ports, normalize the server's port.
func attachLoopback(n *normalizer, l *loopback.Server, ports bool) {
	if l == nil {
		return
	}
	n.redact = l.Redactor()
	if ports {
		n.addLoopbackPort(l.Port())
	}
}

func strp(s string) *string { return &s }

// ProtocolEvent is one loopback replay observation (record.ProtocolEvent;
// the vocabulary is described in backend/loopback).
type ProtocolEvent = record.ProtocolEvent

// ReplayTransition is one committed transition of the capture's replay
// machine (record.ReplayTransition).
type ReplayTransition = record.ReplayTransition

// loopbackRecording is what the recording loop keeps about the replay
// observations it recorded.
type loopbackRecording struct {
	bodyBytes       int
	lastAt          int
	eventsFull      bool
	transitionsFull bool
}

// protocol records one observation of the loopback server and releases
// the goroutine that handed it over. It runs on the recording loop.
func (s *session) protocol(o *loopback.Observation) {
	defer o.Recorded()
	r, st := s.rec, &s.lbRec
	if o.Problem != "" {
		if o.Truncate {
			if !slices.Contains(r.rec.Limitations, o.Problem) {
				r.truncate(o.Problem)
			}
		} else {
			r.rec.Limitations = append(r.rec.Limitations, o.Problem)
		}
	}
	if o.Protocol == "" {
		return // a note only
	}
	at := max(r.norm.ms(ms(o.At)), st.lastAt)
	lim := r.limits
	switch {
	case st.eventsFull:
	case len(r.rec.ShimEvents)+len(r.rec.ProtocolEvents) >= lim.ProtocolEvents:
		st.eventsFull = true
		r.truncate(fmt.Sprintf("protocol events exceeded limits.protocol_events (%d); later exchanges were answered but not recorded", lim.ProtocolEvents))
	case st.bodyBytes+o.BodyBytes > lim.ProtocolBodyBytes:
		st.eventsFull = true
		r.truncate(fmt.Sprintf("protocol bodies exceeded limits.protocol_body_bytes (%d bytes); later exchanges were answered but not recorded", lim.ProtocolBodyBytes))
	default:
		st.bodyBytes += o.BodyBytes
		ev := ProtocolEvent{Sequence: len(r.rec.ProtocolEvents), AtMS: at, Protocol: o.Protocol, Direction: o.Direction,
			Method: o.Method, Data: r.norm.text(o.Data), Outcome: o.Outcome}
		switch {
		case o.Path != nil && o.PlanPath:
			ev.Path = strp(s.lb.PlanText(*o.Path))
		case o.Path != nil:
			ev.Path = strp(r.norm.text(*o.Path))
		}
		if b, err := json.Marshal(ev); err == nil { // cannot fail: normalized text is valid UTF-8
			r.rec.ProtocolEvents = append(r.rec.ProtocolEvents, b)
			r.journal("protocol_events", ev.Sequence)
			st.lastAt = at
		}
	}
	if t := o.Transition; t != nil {
		switch {
		case st.transitionsFull:
		case len(r.rec.ReplayTransitions) >= lim.ProtocolEvents:
			st.transitionsFull = true
			r.truncate(fmt.Sprintf("replay transitions exceeded limits.protocol_events (%d); later transitions were taken but not recorded", lim.ProtocolEvents))
		default:
			// Plan text, redacted as the manifest is (not normalized: a
			// pattern must not rename states).
			tr := ReplayTransition{Sequence: len(r.rec.ReplayTransitions), AtMS: at, TransitionID: t.ID,
				StateBefore: t.Before, StateAfter: t.After, SensitiveAliases: t.Sensitive}
			if b, err := json.Marshal(tr); err == nil {
				r.rec.ReplayTransitions = append(r.rec.ReplayTransitions, b)
				r.journal("replay_transitions", tr.Sequence)
				st.lastAt = at
			}
		}
	}
}

// stopLoopback shuts the replay server down and records what it still
// held; it returns the error of an unverified shutdown.
func (s *session) stopLoopback() error {
	if s.lb == nil {
		return nil
	}
	for _, o := range s.lb.Stop() {
		s.protocol(o)
	}
	s.redactCaptured()
	var err error
	for _, p := range s.lb.ShutdownProblems() {
		err = errors.Join(err, fmt.Errorf("capture: replay: %s: %w", p, ErrCleanupIncomplete))
	}
	return err
}

// redactCaptured applies the machine's redaction of sensitive captures to
// the text recorded before the value was captured (a process command line
// holding a token, output printed before the request): terminal frames,
// interaction data, process commands, shim calls and protocol events. A
// value split across two raw chunks stays split.
func (s *session) redactCaptured() {
	red := s.lb.Redactor()
	if red == nil {
		return
	}
	rec := s.rec.rec
	for i := range rec.Frames {
		rec.Frames[i].Data = red(rec.Frames[i].Data)
	}
	for i := range rec.RenderedFrames {
		f := &rec.RenderedFrames[i]
		for k := range f.Lines {
			f.Lines[k] = red(f.Lines[k])
		}
		f.SerializedState = red(f.SerializedState)
	}
	for i := range rec.InteractionEvents {
		rec.InteractionEvents[i].Data = red(rec.InteractionEvents[i].Data)
	}
	for i := range rec.ProcessSamples {
		rec.ProcessSamples[i].Command = red(rec.ProcessSamples[i].Command)
	}
	for i, raw := range rec.ShimEvents {
		var e ShimEvent
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		e.Command, e.WorkingDirectory = red(e.Command), red(e.WorkingDirectory)
		for k := range e.Arguments {
			e.Arguments[k] = red(e.Arguments[k])
		}
		if b, err := json.Marshal(e); err == nil {
			rec.ShimEvents[i] = b
		}
	}
	for i, raw := range rec.ProtocolEvents {
		var e ProtocolEvent
		if json.Unmarshal(raw, &e) != nil {
			continue
		}
		e.Data = red(e.Data)
		if e.Path != nil {
			e.Path = strp(red(*e.Path))
		}
		if b, err := json.Marshal(e); err == nil {
			rec.ProtocolEvents[i] = b
		}
	}
}

// addLoopbackPort makes "127.0.0.1:PORT" and "localhost:PORT" recorded as
// "127.0.0.1:<port>" and "localhost:<port>" (normalization.ports).
func (n *normalizer) addLoopbackPort(port int) {
	p := strconv.Itoa(port)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		n.pairs = append(n.pairs, host+":"+p, host+":"+PlaceholderPort)
		n.literals = append(n.literals, host+":"+p)
	}
	n.replacer = strings.NewReplacer(n.pairs...)
}

// PlaceholderPort replaces the loopback replay port in recorded text.
const PlaceholderPort = "<port>"
