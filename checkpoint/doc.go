// Package checkpoint owns the snapshots that let a user undo an agent's
// turn: the workspace files as the user sees them (tracked or not, with
// the ignore rules honoured and .git left out) plus the text of open
// buffers that differ from disk.
//
// A Store keeps one workspace's checkpoints under the state directory,
// never in the workspace: file contents and folder listings are blobs
// named by their sha256, so an unchanged file or folder is stored once
// however many checkpoints hold it, and a checkpoint itself is a small
// record (folder trees, buffer texts, who made it and when) in an index
// file replaced atomically. Two daemons on one workspace (two editor
// windows) share the store: each changes the index under the store's
// lock file after reading it afresh, a collection keeps every blob the
// index names and every blob younger than a grace period, and the mark
// a collection leaves in the index tells the others to forget what they
// knew was stored. Every file of the store is read as the workspace's are:
// regular files only, without blocking, with a byte cap; an index that
// cannot be read is moved aside and a new one started, with a note for
// the user (Info.Notes). Change detection is by stat (size, mtime,
// mode, inode) against the latest checkpoint, kept in memory folder by
// folder, so a checkpoint of a large tree where little changed reads
// only what changed, writes only the trees of the folders above it, and
// finds the changed files by comparing trees, skipping every folder whose
// tree hash is the same. On Linux the walk opens folders and stats files
// with openat and fstatat on single names itself (walk_linux.go), with
// the same guarantee as os.Root: no path can lead out of the workspace.
//
// Restore computes a plan: disk writes and removals that it carries out,
// buffer texts that the caller delivers to the editor (the daemon never
// writes an open buffer's file), and conflicts, the files that someone
// changed after the latest checkpoint, which are kept unless forced.
package checkpoint
