//go:build !unix

package workspace

// readOpenFlags is empty where opening a pipe by path does not block.
const readOpenFlags = 0
