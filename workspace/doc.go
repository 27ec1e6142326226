// Package workspace owns the workspace folders, the mirror of the editor's
// open buffers, position mapping, path resolution with ignore rules, file
// watching, atomic writes, guarded reads and the per-file edit locks;
// Live, what a connection derives from its folders (roots, ignore rules,
// the watcher, rebuilt as they change, which folders are admitted) and
// the background work its end waits for. All
// workspace disk access goes through the folders' os.Root handles
// (Roots). It is the bottom of the import graph: it imports no other
// cline-ls package.
package workspace
