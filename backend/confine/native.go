package confine

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// The native launcher (launcher/launch.c, built by launcher/build.sh) is
// loaded once per process into a sealed memory file and executed from
// there, so no file on disk can be swapped under it. nativeLauncher is
// write-once: a read-only descriptor of that file, or why it cannot be
// used. A launch passes it to the child as LauncherFD and executes
// /proc/self/fd/LauncherFD: a number of this process's own would not do,
// as the fork rearranges the child's descriptors above the highest one it
// passes before that exec (and may put one there).
var nativeLauncher = sync.OnceValues(loadNative)

// LauncherFD is the child's descriptor of the native launcher's file (see
// Request.Files); the launcher closes it, like every descriptor above 3,
// when it executes the target.
const LauncherFD = ReportFD + 1

func loadNative() (*os.File, error) {
	if len(nativeELF) == 0 {
		return nil, errors.New("confine: no native launcher for this architecture")
	}
	fd, err := unix.MemfdCreate("gatehouse-launch", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // kernels before 6.3 have no MFD_EXEC: executable is their default
		fd, err = unix.MemfdCreate("gatehouse-launch", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("confine: memfd_create: %w", err)
	}
	defer unix.Close(fd)
	for b := nativeELF; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			return nil, fmt.Errorf("confine: write the native launcher: %w", err)
		}
		b = b[n:]
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return nil, fmt.Errorf("confine: seal the native launcher: %w", err)
	}
	// exec refuses a file open for writing (ETXTBSY): keep a read-only
	// descriptor and close the writable one.
	ro, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("confine: reopen the native launcher: %w", err)
	}
	if err := unix.Access(fmt.Sprintf("/proc/self/fd/%d", ro), unix.X_OK); err != nil {
		unix.Close(ro)
		return nil, fmt.Errorf("confine: the native launcher is not executable here: %w", err)
	}
	return os.NewFile(uintptr(ro), "gatehouse-launch"), nil
}

// nativePath is where the child finds the native launcher.
var nativePath = fmt.Sprintf("/proc/self/fd/%d", LauncherFD)

// Files returns the child's descriptors for a launch of r: the protocol
// descriptors 0–3 and the report pipe's write end (ReportFD), given in
// that order, then the native launcher as LauncherFD when Command starts
// it.
func (r Request) Files(protocolAndReport ...*os.File) []*os.File {
	files := append([]*os.File(nil), protocolAndReport...)
	if r.native() {
		f, _ := nativeLauncher()
		files = append(files, f)
	}
	return files
}

// native reports whether r starts through the native launcher.
func (r Request) native() bool {
	if r.GoLauncher {
		return false
	}
	_, err := nativeLauncher()
	return err == nil
}

// NativeLauncher reports whether launches use the native launcher, and
// why not when they do not.
func NativeLauncher() (bool, error) {
	_, err := nativeLauncher()
	return err == nil, err
}

// UnprivilegedID is the uid and gid a launch with UserNamespace has in
// its user namespace.
const UnprivilegedID = 1000

// MakesUserNamespace reports whether the launcher Command starts makes
// itself a user namespace (UserNamespace, through the native launcher).
func (r Request) MakesUserNamespace() bool {
	return r.UserNamespace && r.native()
}

// nativeArgs is the native launcher's command line for r (see launch.c).
// The masks are the plan's for the ABI this process sees; when the plan
// refuses, they are what the settings want of the newest ABI, so the
// launcher refuses them itself against the ABI it sees.
func (r Request) nativeArgs() []string {
	abi := limitABI(KernelABI(), r.ABILimit)
	if _, err := plan(r.Settings, abi, r.NetNamespace); err != nil {
		abi = maxKnownABI
	}
	cfg, _ := config(r.Settings, abi)
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	netns := "0"
	if r.NetNamespace {
		netns = "1"
	}
	rules := r.pathRules(uint64(cfg.HandledAccessFS))
	uid, gid := "-1", "0"
	if r.UserNamespace {
		uid, gid = strconv.Itoa(UnprivilegedID), strconv.Itoa(UnprivilegedID)
	}
	args := []string{"gatehouse-launch", uid, gid, strconv.Itoa(r.ABILimit), u(uint64(cfg.HandledAccessFS)), u(uint64(cfg.HandledAccessNet)),
		u(uint64(cfg.Scoped)), netns, strconv.Itoa(len(rules))}
	for _, rule := range rules {
		ignore := "0"
		if rule.ignoreMissing {
			ignore = "1"
		}
		args = append(args, u(rule.access), ignore, rule.path)
	}
	return append(append(args, r.Path), r.Args...)
}

// pathRule is one Landlock path-beneath rule.
type pathRule struct {
	access        uint64
	ignoreMissing bool
	path          string
}

// pathRules are the filesystem rules of r, each access right limited to
// the handled ones (rules with none left are dropped): the system and
// request read-only directories (skipped when missing), the read-write
// ones, and the devices. These are the rights go-landlock's RODirs,
// RWDirs, ROFiles and RWFiles grant.
func (r Request) pathRules(handled uint64) []pathRule {
	if handled == 0 {
		return nil
	}
	var out []pathRule
	add := func(access uint64, ignore bool, paths ...string) {
		if access &= handled; access == 0 {
			return
		}
		for _, p := range paths {
			out = append(out, pathRule{access, ignore, p})
		}
	}
	add(accessRead, true, append(SystemReadOnly(), r.ReadOnly...)...)
	add(accessRead|accessWrite, false, r.ReadWrite...)
	add((accessRead|accessWrite)&accessFile, true, devRW...)
	add(accessRead&accessFile, true, devRO...)
	return out
}

// Access right sets, as go-landlock defines them (landlock/config.go).
const (
	accessFile  = llExecute | llWriteFile | llTruncate | llReadFile
	accessRead  = llExecute | llReadFile | llReadDir
	accessWrite = llWriteFile | llRemoveDir | llRemoveFile | llMakeChar | llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym | llTruncate
)

// Landlock filesystem rights (include/uapi/linux/landlock.h).
const (
	llExecute uint64 = 1 << iota
	llWriteFile
	llReadFile
	llReadDir
	llRemoveDir
	llRemoveFile
	llMakeChar
	llMakeDir
	llMakeReg
	llMakeSock
	llMakeFifo
	llMakeBlock
	llMakeSym
	llRefer
	llTruncate
)
