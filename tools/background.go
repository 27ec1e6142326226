package tools

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cline-ls/cline-ls/internal/proc"
)

// Limits of background commands (run_commands with background: true).
const (
	// DefaultMaxBackground is how many background commands one session
	// may have running at once: enough for a dev server, a watcher and a
	// log tail, few enough that a model looping on starts cannot fill the
	// machine.
	DefaultMaxBackground = 4
	// bgKeep is how much of a background command's output is kept
	// between two reads: the newest bytes, in a ring. What falls out is
	// counted and the next read says so.
	bgKeep = MaxToolOutput
	// bgSettle bounds how long starting waits for a command's first
	// output before the call returns; bgQuiet is how long that output
	// must pause for the call to return sooner.
	bgSettle = 2 * time.Second
	bgQuiet  = 300 * time.Millisecond
)

// Background holds one session's background commands. The session owns
// it and calls Close when it ends, which kills every command still
// running with all the processes it started (through internal/proc, so
// the daemon's death takes them too). Its methods are safe for
// concurrent use.
type Background struct {
	max int

	mu     sync.Mutex
	seq    int                   // numbers the ids; guarded by mu
	cmds   map[string]*bgCommand // by id, until stopped or read to the end after exiting; guarded by mu
	closed bool                  // Close was called: nothing more starts; guarded by mu
}

// NewBackground returns an empty set that lets at most max commands run at
// once (DefaultMaxBackground when max ≤ 0).
func NewBackground(max int) *Background {
	if max <= 0 {
		max = DefaultMaxBackground
	}
	return &Background{max: max, cmds: map[string]*bgCommand{}}
}

// Len is how many commands the set holds: running ones, and exited ones
// whose last output the model has not read yet. While it is not zero the
// session offers the tools that read and stop them (Context.Background).
func (b *Background) Len() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.cmds)
}

// Running is how many of the set's commands have not exited.
func (b *Background) Running() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.cmds {
		if !c.exited() {
			n++
		}
	}
	return n
}

// Close kills every command of the set, waits for each to be gone and
// refuses later starts. It is safe to call more than once.
func (b *Background) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.closed = true
	cmds := make([]*bgCommand, 0, len(b.cmds))
	for _, c := range b.cmds {
		cmds = append(cmds, c)
	}
	clear(b.cmds)
	b.mu.Unlock()
	for _, c := range cmds {
		c.stop()
	}
}

// bgCommand is one background command: its shell's process group, the
// ring its output goes to, and how it ended.
type bgCommand struct {
	id, command string
	started     time.Time
	group       *proc.Group
	out         *bgRing
	// done is closed once the shell has exited, what it left has been
	// killed and its output read; status is set before.
	done   chan struct{}
	status string
	conf   confinement
}

func (c *bgCommand) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop kills the command and everything it started, and waits until it
// has been reaped.
func (c *bgCommand) stop() {
	if !c.exited() {
		c.group.Kill()
	}
	<-c.done
}

// start starts command in the background in env's workspace.
func (b *Background) start(env *wsEnv, command string, sandboxed bool) (*bgCommand, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("the session is closing")
	}
	var running, exited []string
	for _, c := range b.cmds {
		if c.exited() {
			exited = append(exited, c.id)
		} else {
			running = append(running, c.id)
		}
	}
	// Exited commands wait for their last read, but not without end: past
	// twice the cap, the oldest of them are forgotten.
	slices.SortFunc(exited, compareIDs)
	for len(b.cmds) >= 2*b.max && len(exited) > 0 {
		delete(b.cmds, exited[0])
		exited = exited[1:]
	}
	if len(running) >= b.max {
		slices.SortFunc(running, compareIDs)
		return nil, fmt.Errorf("%s running already (%s), the most a session may have; stop one with %s first",
			plural(len(running), "background command"), strings.Join(running, ", "), NameStopCommand)
	}
	cmd, conf, err := env.command(command, sandboxed)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		conf.release()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	group, err := proc.Start(cmd, true, nil)
	w.Close()
	if err != nil {
		r.Close()
		conf.release()
		return nil, fmt.Errorf("could not start the shell %s: %v", cmd.Path, err)
	}
	b.seq++
	c := &bgCommand{id: "bg" + strconv.Itoa(b.seq), command: command, started: time.Now(), group: group,
		out: &bgRing{keyStart: env.cfg.keyStart}, done: make(chan struct{}), conf: conf}
	b.cmds[c.id] = c
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		c.out.readFrom(r)
	}()
	go func() { // ends with the command, which Close or stop_command end at the latest
		err := cmd.Wait()
		leftovers := group.Cleanup()
		select {
		case <-drained:
		case <-time.After(cmdDrainWait):
			r.Close() // a process that hid from the sweep still holds the pipe
			<-drained
		}
		r.Close()
		conf.release()
		st, _ := exitStatus(cmd, err, time.Since(c.started), leftovers)
		c.status = strings.TrimSuffix(st, "\n")
		close(c.done)
	}()
	return c, nil
}

// settle waits for a new command's first output: until it exits, its
// output pauses for bgQuiet, bgSettle passes or ctx ends.
func (c *bgCommand) settle(ctx context.Context) {
	deadline := time.NewTimer(bgSettle)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last, quiet := int64(0), time.Duration(0)
	for {
		select {
		case <-c.done:
			return
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			n := c.out.written()
			if n > 0 && n == last {
				if quiet += 50 * time.Millisecond; quiet >= bgQuiet {
					return
				}
			} else {
				quiet = 0
			}
			last = n
		}
	}
}

// report is what the model is shown of c now: its new output and its
// state. An exited command read to its end leaves the set; ended, when
// set, says how it ended instead of its exit status.
func (b *Background) report(c *bgCommand, ended string) string {
	exited := c.exited() // before reading, so that no output comes after
	text, dropped := c.out.next(exited)
	var s strings.Builder
	fmt.Fprintf(&s, "$ %s\n", c.command)
	if dropped > 0 {
		fmt.Fprintf(&s, "[%d bytes of output were not kept: only the last %d are kept between reads]\n", dropped, bgKeep)
	}
	switch {
	case text == "":
		s.WriteString("(no new output)\n")
	case !strings.HasSuffix(text, "\n"):
		s.WriteString(text + "\n")
	default:
		s.WriteString(text)
	}
	if exited {
		b.forget(c)
		status := c.status
		if ended != "" {
			status = ended
		}
		fmt.Fprintf(&s, "%s; %s is gone]\n", strings.TrimSuffix(status, "]"), c.id)
		if ended == "" && !strings.HasPrefix(status, "[exit code 0") {
			s.WriteString(c.conf.note(text))
		}
		return s.String()
	}
	fmt.Fprintf(&s, "[%s is running in the background (for %s); %s shows what it prints next, %s stops it]\n",
		c.id, time.Since(c.started).Round(time.Second), NameReadCommandOutput, NameStopCommand)
	return s.String()
}

func (b *Background) forget(c *bgCommand) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmds[c.id] == c {
		delete(b.cmds, c.id)
	}
}

// lookup finds a command by id, or says which there are.
func (b *Background) lookup(id string) (*bgCommand, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.cmds[id]; c != nil {
		return c, nil
	}
	ids := make([]string, 0, len(b.cmds))
	for id := range b.cmds {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareIDs)
	if len(ids) == 0 {
		return nil, fmt.Errorf("no background command %q: none is running (start one with %s and background: true)", id, NameRunCommands)
	}
	return nil, fmt.Errorf("no background command %q; the session has %s", id, strings.Join(ids, ", "))
}

func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// bgRing keeps the newest bgKeep bytes of a command's output and how far
// the model has read.
type bgRing struct {
	mu    sync.Mutex
	buf   []byte // the newest bytes, at most bgKeep; guarded by mu
	total int64  // bytes written in all; guarded by mu
	read  int64  // offset the model has read up to; guarded by mu
	// keyStart, when set, tells how many bytes at the end of the output
	// could start a key (KeyStart): a read leaves them for the next, so
	// that the model never gets a key in two parts.
	keyStart func(string) int
}

func (r *bgRing) readFrom(f *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			r.write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (r *bgRing) write(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(p))
	r.buf = append(r.buf, p...)
	if over := len(r.buf) - bgKeep; over > 0 {
		r.buf = r.buf[:copy(r.buf, r.buf[over:])]
	}
}

func (r *bgRing) written() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// next returns the output not read yet and how many bytes of it fell out
// of the ring. Unless final, a character whose last bytes have not come
// yet is left for the next read.
func (r *bgRing) next(final bool) (string, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.total - int64(len(r.buf))
	from := max(r.read, start)
	dropped := from - r.read
	chunk := r.buf[from-start:]
	if !final {
		for i := 1; i <= utf8.UTFMax && i <= len(chunk); i++ {
			if utf8.RuneStart(chunk[len(chunk)-i]) {
				if !utf8.FullRune(chunk[len(chunk)-i:]) {
					chunk = chunk[:len(chunk)-i]
				}
				break
			}
		}
	}
	if !final && r.keyStart != nil {
		chunk = chunk[:len(chunk)-r.keyStart(string(chunk))]
	}
	r.read = from + int64(len(chunk))
	text := string(chunk)
	if dropped > 0 {
		kept := afterCut(wsValidSuffix(text))
		dropped += int64(len(text) - len(kept))
		text = kept
	}
	return text, dropped
}

type commandIDArgs struct {
	ID string `json:"id"`
}

func (e *wsEnv) buildReadCommandOutput(a commandIDArgs) (Invocation, error) {
	return &bgCall{env: e, id: a.ID}, nil
}

func (e *wsEnv) buildStopCommand(a commandIDArgs) (Invocation, error) {
	return &bgCall{env: e, id: a.ID, stop: true}, nil
}

// bgCall is a read_command_output or stop_command call.
type bgCall struct {
	env  *wsEnv
	id   string
	stop bool
}

// Describe names the command.
func (c *bgCall) Describe(context.Context) Description {
	verb := "Read the output of"
	if c.stop {
		verb = "Stop"
	}
	d := Description{Title: verb + " background command " + c.id, Kind: KindRead}
	if c.stop {
		d.Kind = KindExecute
	}
	if b := c.env.cfg.background; b != nil {
		if cmd, err := b.lookup(c.id); err == nil {
			d.Title += ": " + ShortTitle(cmd.command)
			d.Command = cmd.command
		}
	}
	return d
}

// Execute reads the command's new output, after stopping it for
// stop_command.
func (c *bgCall) Execute(context.Context, ExecOptions) (Result, error) {
	b := c.env.cfg.background
	if b == nil {
		return Errorf("this session runs no background commands"), nil
	}
	cmd, err := b.lookup(c.id)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if c.stop {
		ended := ""
		if !cmd.exited() {
			ended = "[stopped: the command and the processes it started were killed"
		}
		cmd.stop()
		return Result{Content: b.report(cmd, ended)}, nil
	}
	return Result{Content: b.report(cmd, "")}, nil
}
