package keeper

import "github.com/cline-ls/cline-ls/wire"

// TrackToolCall follows a session's updates for its tool calls: while one
// runs, the first checkpoint's background read pauses
// (checkpoint.Store.Busy), so the agent's work does not share the disk
// and the CPU with it. The store is not opened for this.
func (k *Keeper) TrackToolCall(sessionID string, u wire.SessionUpdate) {
	id, status, ok := wire.ToolCallState(u)
	if !ok {
		return
	}
	key := sessionID + "\x00" + id
	switch status {
	case wire.StatusInProgress:
		st := k.opened()
		if st == nil {
			return
		}
		k.busyMu.Lock()
		if k.busy == nil {
			k.busy = make(map[string]func())
		}
		if _, ok := k.busy[key]; !ok {
			k.busy[key] = st.Busy()
		}
		k.busyMu.Unlock()
	case wire.StatusCompleted, wire.StatusFailed:
		k.busyMu.Lock()
		done := k.busy[key]
		delete(k.busy, key)
		k.busyMu.Unlock()
		if done != nil {
			done()
		}
	}
}

// ToolCallBusy marks a call that sends no session updates (the editor's
// cline/callTool) as running, until the returned function is called.
func (k *Keeper) ToolCallBusy() (done func()) {
	st := k.opened()
	if st == nil {
		return func() {}
	}
	return st.Busy()
}
