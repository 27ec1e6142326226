package sandbox

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denySockets refuses, for this thread and what it execs, the creation
// of sockets of the given families (socket(family, …); socketpair
// stays). The helper refuses AF_INET and AF_INET6 when the network is not
// allowed — Landlock's rules cover TCP only, not UDP (before ABI 10) nor
// MPTCP — and AF_UNIX before ABI 9, when nothing else stops a confined
// command from connecting to a listening socket outside (the session
// bus, whose systemd runs what it is asked to, or docker's) and running
// code there. System calls of another architecture (x32, 32-bit
// compatibility) kill the process: the filter could not read their
// numbers.
func denySockets(families ...uint32) error {
	arch, ok := filterArch()
	if !ok {
		return errors.New("no socket filter for " + runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: nr at 0, arch at 4, args[0] (its low half on
	// these little-endian machines) at 16.
	if len(families) == 0 {
		return nil
	}
	n := uint8(len(families))
	prog := []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: 0},
		{Code: jge, Jt: n + 3, K: 0x40000000}, // the x32 ABI's numbers: refused
		{Code: jeq, Jf: n + 1, K: unix.SYS_SOCKET},
		{Code: ld, K: 16},
	}
	for i, f := range families {
		// Each match jumps past the rest and the allow, to the refusal.
		prog = append(prog, unix.SockFilter{Code: jeq, Jt: n - uint8(i), K: f})
	}
	prog = append(prog,
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
	)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// filterArch is the audit architecture the socket filter is written for:
// the one this binary runs as, where its system call numbers are known.
func filterArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}
