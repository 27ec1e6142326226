// Package workspace owns the workspace folders, the mirror of the editor's
// open buffers, position mapping, path resolution with ignore rules, file
// watching and atomic writes. It is the bottom of the import graph: it
// imports no other cline-ls package.
package workspace
