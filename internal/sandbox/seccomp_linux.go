package sandbox

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denyUnixSockets refuses, for this thread and what it execs, the
// creation of Unix domain sockets (socket(AF_UNIX, …); socketpair stays):
// before Landlock ABI 9 nothing else stops a confined command from
// connecting to a listening socket outside — the session bus, whose
// systemd runs what it is asked to, or docker's — and running code there.
// System calls of another architecture (x32, 32-bit compatibility) kill
// the process: the filter could not read their numbers.
func denyUnixSockets() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return errors.New("no Unix socket filter for " + runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	// struct seccomp_data: nr at 0, arch at 4, args[0] (its low half on
	// these little-endian machines) at 16.
	prog := []unix.SockFilter{
		{Code: ld, K: 4},
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: 0},
		{Code: jge, Jt: 4, K: 0x40000000}, // the x32 ABI's numbers
		{Code: jeq, Jf: 2, K: unix.SYS_SOCKET},
		{Code: ld, K: 16},
		{Code: jeq, Jt: 1, K: unix.AF_UNIX},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}
