package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// HideKeys keeps the keys in the daemon's environment from every process
// it starts (docs/DESIGN.md §7, "Keys and children"). serve, demo and exec
// call it first thing, before any goroutine of theirs, with the names of
// the variables configured to hold a key besides those IsSecret knows by
// name.
//
// It moves the keys out of the environment (Getenv still finds them; a
// variable the client's settings name later goes the same way, HideVars) and
// overwrites them in the block the process started with, which is what
// /proc/<daemon>/environ shows to any process of the daemon's user, root
// included. Then it makes the process not dumpable, so that no other
// process of the same user can read its memory, where the keys still are
// (nor, unless the user is root, its /proc files: a root process may
// still read environ). A root process with CAP_SYS_PTRACE still could: the
// thread children are forked from leaves that capability out of their
// bounding set (platformSetup). It returns what could not be done; the
// daemon runs on regardless.
func HideKeys(named []string) error {
	err := hide(named)
	if e := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); e != nil {
		err = errors.Join(err, fmt.Errorf("making the daemon's memory unreadable to its commands: %w", e))
	}
	return err
}

// scrub overwrites with zero bytes each entry of secrets in the
// environment block the kernel set up at exec, between the env_start and
// env_end of /proc/self/stat, writing through /proc/self/mem. Go keeps
// copies of what it read there, so nothing of ours points into the block;
// the C library's environ may, and then sees empty entries.
func scrub(secrets []string) error {
	fail := func(err error) error { return fmt.Errorf("removing the API keys from /proc/self/environ: %w", err) }
	start, end, err := envBlock()
	if err != nil {
		return fail(err)
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fail(err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return fail(err)
	}
	off := 0
	for entry := range bytes.SplitSeq(block, []byte{0}) {
		if slices.Contains(secrets, string(entry)) {
			if _, err := mem.WriteAt(make([]byte, len(entry)), start+int64(off)); err != nil {
				return fail(err)
			}
		}
		off += len(entry) + 1
	}
	return nil
}

// envBlock reads where the environment block lies: fields 50 and 51 of
// /proc/self/stat.
func envBlock() (start, end int64, err error) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// Fields from the third on follow the command's name in parentheses,
	// which may hold anything.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("no environment block in /proc/self/stat")
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 49 {
		return 0, 0, errors.New("no environment block in /proc/self/stat")
	}
	start, err1 := strconv.ParseInt(string(f[47]), 10, 64)
	end, err2 := strconv.ParseInt(string(f[48]), 10, 64)
	if err1 != nil || err2 != nil || end < start || end-start > 64<<20 {
		return 0, 0, fmt.Errorf("environment block %q-%q in /proc/self/stat", f[47], f[48])
	}
	return start, end, nil
}
