// Package workspace owns the workspace folders, the mirror of the editor's
// open buffers, position mapping, path resolution with ignore rules, file
// watching, atomic writes, guarded reads and the per-file edit locks. All
// workspace disk access goes through the folders' os.Root handles
// (Roots). It is the bottom of the import graph: it imports no other
// cline-ls package.
package workspace
