package capture

// Renderer is the terminal emulator Capture renders rendered_frames with,
// for readers that rebuild rendered frames from raw terminal output (the
// asciicast importer): the same bytes and resizes give the same
// RenderedFrame values Capture records, before normalization.
// A Renderer is not safe for concurrent use; Close releases it.
type Renderer struct{ s *screen }

// NewRenderer returns a Renderer with t's size and scrollback (t must be
// within the scenario bounds: 1–1000 columns and rows).
func NewRenderer(t Terminal) *Renderer { return &Renderer{s: newScreen(t)} }

// Write parses b as terminal output.
func (r *Renderer) Write(b []byte) { r.s.write(b) }

// Resize changes the screen size.
func (r *Renderer) Resize(columns, rows int) { r.s.resize(columns, rows) }

// Snapshot returns the visible screen as a RenderedFrame whose Sequence
// and AtMS are zero (the caller sets them).
func (r *Renderer) Snapshot() RenderedFrame { return r.s.snapshot() }

// Close stops the emulator; the Renderer must not be used afterwards.
func (r *Renderer) Close() { r.s.close() }
