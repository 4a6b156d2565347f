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

// Write parses b as terminal output. It returns an error when the
// emulator failed on the output (a bug of the emulator, never a panic
// of the caller); from then on every method returns that error.
func (r *Renderer) Write(b []byte) error { return r.s.write(b) }

// Resize changes the screen size; errors as Write.
func (r *Renderer) Resize(columns, rows int) error { return r.s.resize(columns, rows) }

// Snapshot returns the visible screen as a RenderedFrame whose Sequence
// and AtMS are zero (the caller sets them); errors as Write.
func (r *Renderer) Snapshot() (RenderedFrame, error) { return r.s.snapshot() }

// Close stops the emulator; the Renderer must not be used afterwards.
func (r *Renderer) Close() { r.s.close() }
