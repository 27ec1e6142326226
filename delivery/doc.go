// Package delivery reads and writes files as the client sees them. It is
// the daemon's one tools.Files: open buffers are read from the mirror and
// edited through one versioned workspace/applyEdit (checked against the
// mirror, or believed from a client that checks versions itself), an ACP
// client that offers them reads and writes through fs/read_text_file and
// fs/write_text_file, and every other file is written to disk atomically,
// rolled back when the editor refuses its part.
//
// It is the one place for these rules: where a change goes (changeRoute,
// and so what an approval says reaches the disk, DiskNote); that a call's
// read → plan → write runs under the locks of every file it touches; that
// a plan met by a moved buffer is made again once, on the latest text;
// and that an edit the editor said it applied but has not yet reported is
// what later reads see, until its didChange comes or the user is told it
// never did.
//
// It knows the client only through Client (a Caller and the client's
// capabilities, whatever its dialect) and the workspace through the values
// Config gives; it never imports rpc.
package delivery
