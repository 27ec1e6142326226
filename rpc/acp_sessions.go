package rpc

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
