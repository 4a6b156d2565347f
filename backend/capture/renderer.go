package capture

// Renderer is the terminal emulator Capture renders rendered_frames with,
// for readers that rebuild rendered frames from raw terminal output (the
// asciicast importer): xterm.js itself, in the renderer helper
// (render_helper.go). Capture renders the text it records: a record's
// raw frames and dispatched resizes, written in capture order, give its
// rendered frames (all but those its limitations say were redacted after
// rendering).
// A Renderer is not safe for concurrent use; Close releases it.
type Renderer struct{ s *screen }

// NewRenderer starts a Renderer with t's size and scrollback (t must be
// within the scenario bounds: 1–1000 columns and rows), run as h says.
func NewRenderer(h RendererHelper, t Terminal) (*Renderer, error) {
	s, err := startScreen(h, t)
	if err != nil {
		return nil, err
	}
	return &Renderer{s: s}, nil
}

// Write sends b to the terminal as output. It returns an error when the
// renderer failed (its helper ended, broke the protocol, exceeded its
// memory bound or did not answer in time); from then on every method
// returns that error.
func (r *Renderer) Write(b []byte) error { return r.s.write(b) }

// Resize changes the screen size, after the output written before;
// errors as Write.
func (r *Renderer) Resize(columns, rows int) error { return r.s.resize(columns, rows) }

// Snapshot returns the visible screen once everything written before is
// parsed, as a RenderedFrame whose Sequence and AtMS are zero (the caller
// sets them); errors as Write.
func (r *Renderer) Snapshot() (RenderedFrame, error) { return r.s.snapshot() }

// Version is what the helper runs ("@xterm/headless 6.0.0").
func (r *Renderer) Version() string { return r.s.version }

// Close ends the helper; the Renderer must not be used afterwards.
func (r *Renderer) Close() { r.s.close() }
