//go:build !unix

package workspace

import "io/fs"

// fileID is unknown where FileInfo carries no inode: locks then go by path.
func fileID(fs.FileInfo) (string, bool) { return "", false }
