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
// loaded into a sealed memory file and executed from there, so no file on
// disk can be swapped under it. A launch passes a read-only descriptor of
// that file to the child as LauncherFD and executes
// /proc/self/fd/LauncherFD: a number of this process's own would not do,
// as the fork rearranges the child's descriptors above the highest one it
// passes before that exec (and may put one there).
//
// The descriptor is a number any code of this process can close by
// mistake (a double close elsewhere), after which the number names
// whatever is opened next. So every launch first checks that the number
// still names the very memory file loaded (same device and inode, a
// regular file with the seals); when it does not, the launcher is loaded
// again, and when that fails the launch is refused. An unverified file is
// never given to the child as the launcher.
var nativeLoad = sync.OnceValues(newNativeLoader)

// LauncherFD is the child's descriptor of the native launcher's file (see
// Request.Files); the launcher closes it, like every descriptor above 3,
// when it executes the target.
const LauncherFD = ReportFD + 1

// launcherSeals are the seals the memory file is loaded with.
const launcherSeals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE

// nativeLoader owns the loaded memory file: file, its identity, and the
// descriptors found taken over by another file (lost), which are kept
// referenced so their finalizers never close a number that is no longer
// this loader's.
type nativeLoader struct {
	mu       sync.Mutex
	file     *os.File
	dev, ino uint64
	lost     []*os.File
}

// newNativeLoader loads the launcher once; its error says the native
// launcher cannot run here at all (launches use the Go launcher).
func newNativeLoader() (*nativeLoader, error) {
	l := &nativeLoader{}
	if err := l.load(); err != nil {
		return nil, err
	}
	return l, nil
}

// load makes a fresh sealed memory file of the launcher and records its
// identity.
func (l *nativeLoader) load() error {
	f, err := loadNative()
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return fmt.Errorf("confine: stat the native launcher: %w", err)
	}
	l.file, l.dev, l.ino = f, st.Dev, st.Ino
	return nil
}

// launcher returns the verified descriptor of the launcher's memory file,
// loading it again when its number was taken over; it fails closed.
func (l *nativeLoader) launcher() (*os.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.verify()
	if err == nil {
		return l.file, nil
	}
	// The number is another file's now: never close it, never use it.
	l.lost = append(l.lost, l.file)
	l.file = nil
	if lerr := l.load(); lerr != nil {
		return nil, fmt.Errorf("confine: the native launcher's descriptor was taken over (%v) and it cannot be loaded again: %w", err, lerr)
	}
	if err := l.verify(); err != nil {
		return nil, fmt.Errorf("confine: the native launcher, loaded again, does not verify: %w", err)
	}
	return l.file, nil
}

// verify checks that l.file's number names the loaded memory file.
func (l *nativeLoader) verify() error {
	if l.file == nil {
		return errors.New("no descriptor")
	}
	fd := int(l.file.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("descriptor %d: %w", fd, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != l.dev || st.Ino != l.ino {
		return fmt.Errorf("descriptor %d names another file", fd)
	}
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&launcherSeals != launcherSeals {
		return fmt.Errorf("descriptor %d is not the sealed launcher (seals %#x, %v)", fd, seals, err)
	}
	return nil
}

// nativeLauncher returns the verified descriptor of the native launcher,
// or why it cannot be used.
func nativeLauncher() (*os.File, error) {
	l, err := nativeLoad()
	if err != nil {
		return nil, err
	}
	return l.launcher()
}

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
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, launcherSeals); err != nil {
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
// it. The launcher's descriptor is verified first (see native); when it
// cannot be, LauncherFD is left closed in the child, whose exec of
// nativePath then fails: nothing unverified runs.
func (r Request) Files(protocolAndReport ...*os.File) []*os.File {
	files := append([]*os.File(nil), protocolAndReport...)
	if r.native() {
		f, _ := nativeLauncher() // nil on error: a closed descriptor
		files = append(files, f)
	}
	return files
}

// native reports whether r starts through the native launcher (whether
// it can run here at all; each launch still verifies it).
func (r Request) native() bool {
	if r.GoLauncher {
		return false
	}
	_, err := nativeLoad()
	return err == nil
}

// NativeLauncher reports whether launches use the native launcher, and
// why not when they do not.
func NativeLauncher() (bool, error) {
	_, err := nativeLoad()
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
