package runner

import (
	"os"
)

// pipes are the four channels of the protocol: stdin, stdout, stderr and
// the optional fd 3 progress channel.
type pipes struct {
	stdinR, stdinW       *os.File
	stdoutR, stdoutW     *os.File
	stderrR, stderrW     *os.File
	progressR, progressW *os.File
	reportR, reportW     *os.File // the launcher's report (confine.ReportFD)
}

func newPipes() (*pipes, error) {
	p := &pipes{}
	var err error
	pairs := []*[2]*os.File{{}, {}, {}, {}, {}}
	for _, pr := range pairs {
		pr[0], pr[1], err = os.Pipe()
		p.assign(pairs) // so closeAll sees every pipe opened so far
		if err != nil {
			p.closeAll()
			return nil, err
		}
	}
	return p, nil
}

func (p *pipes) assign(pairs []*[2]*os.File) {
	p.stdinR, p.stdinW = pairs[0][0], pairs[0][1]
	p.stdoutR, p.stdoutW = pairs[1][0], pairs[1][1]
	p.stderrR, p.stderrW = pairs[2][0], pairs[2][1]
	p.progressR, p.progressW = pairs[3][0], pairs[3][1]
	p.reportR, p.reportW = pairs[4][0], pairs[4][1]
}

// closeChildEnds closes the ends the child inherited, so EOF on the read
// ends means every process holding them is gone.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.stdinR, p.stdoutW, p.stderrW, p.progressW, p.reportW} {
		if f != nil {
			f.Close()
		}
	}
}

// closeParentReads unblocks the readers when the tree could not be ended.
func (p *pipes) closeParentReads() {
	for _, f := range []*os.File{p.stdoutR, p.stderrR, p.progressR} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeAll() {
	for _, f := range []*os.File{p.stdinR, p.stdinW, p.stdoutR, p.stdoutW, p.stderrR, p.stderrW, p.progressR, p.progressW, p.reportR, p.reportW} {
		if f != nil {
			f.Close()
		}
	}
}
