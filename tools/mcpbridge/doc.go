// Package mcpbridge connects cline-ls to the MCP servers a client
// configures (stdio, streamable HTTP and SSE, through the MCP SDK's
// client with the daemon's bounds, timeouts and supervision around it)
// and turns what they
// offer into tools: one tools.Tool per server tool, named by
// tools.MCPToolSpecs, plus the implementations of the generic built-ins
// use_mcp_tool and access_mcp_resource.
//
// A Manager owns the servers of one configuration: it starts them, lists
// their tools and resources, restarts a server that dies, reports every
// change of state, and stops them all on Close. It imports tools and wire only;
// the daemon decides which Manager a session's tools come from and what
// to tell the client about a server's status.
//
// A Pool holds a connection's Managers (the settings' one, shared, and
// each session's own) behind its own lock, and is the one place for the
// rules of how a server reaches the user: its questions (elicitation)
// and its requests for the model (sampling) are asked through the
// question the connection lends it, and only when it says the user can
// be asked; a sign-in page is opened through window/showDocument, shown
// in a message, or left to `cline-ls mcp login`, as the client allows.
// It never imports rpc: the connection hands it a Caller and functions.
package mcpbridge
