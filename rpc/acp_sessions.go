package rpc

import (
	"github.com/cline-ls/cline-ls/wire"
)

// serveACPLoad serves ACP's session/load. Its cwd becomes a workspace
// folder first, as session/new's does: a client that reopens a thread in a
// fresh daemon (acpx runs each prompt in a new process) has no other way
// to name the folder its tools work in.
func (c *sessions) serveACPLoad(raw []byte) (any, error) {
	var p loadParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if err := required("cwd", p.CWD); err != nil {
		return nil, err
	}
	if err := c.addFolder(p.CWD); err != nil {
		return nil, err
	}
	return c.serveLoad(raw)
}

// acpUpdate makes a session/update fit ACP, whose tool-call locations are
// absolute paths (abs makes them so) while the tools describe them as the
// user reads them.
func acpUpdate(u wire.SessionUpdate, abs func([]wire.Location) []wire.Location) wire.SessionUpdate {
	switch x := u.(type) {
	case wire.ToolCall:
		x.Locations = abs(x.Locations)
		return x
	case wire.ToolCallUpdate:
		x.Locations = abs(x.Locations)
		return x
	}
	return u
}

// absLocations resolves tool-call locations against the workspace
// folders; a path that does not resolve is left as it is.
func (s *Server) absLocations(locs []wire.Location) []wire.Location {
	if len(locs) == 0 {
		return locs
	}
	r, err := s.newFiles().roots()
	if err != nil || r == nil {
		return locs
	}
	out := make([]wire.Location, len(locs))
	for i, l := range locs {
		out[i] = l
		if abs, err := r.Resolve(l.Path); err == nil {
			out[i].Path = abs
		}
	}
	return out
}
