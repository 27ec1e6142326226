// Package wire holds the shapes cline-ls puts on the wire and reads from
// it: the session/update payloads of both dialects as one closed sum type
// (SessionUpdate), their content blocks and tool-call contents (also
// closed), the tool-call kinds and statuses, and the params and results
// of the cline/* methods and of the ACP requests the daemon sends.
//
// It is a top-level package, not a part of rpc, because the session
// builds its updates itself (a live turn and a replayed history through
// the same functions) and session sits below rpc: both import wire, and
// wire imports nothing of the project.
//
// Values encode as the maps they replaced did: an object's members in the
// order encoding/json writes a map's (sorted: the structs declare their
// fields so), nested structs whose order was already fixed keep it
// (a location's path, then line), and HTML characters are not escaped. A
// client that compared bytes sees the same bytes, but for one case: a
// tool-call update or permission request leaves out an empty title or
// kind, which the maps sent as "".
package wire
