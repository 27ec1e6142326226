//go:build !linux

package workspace

import (
	"io/fs"
	"os"
)

// listRoot lists the folder dir is a handle of, unsorted, each entry
// stat'ed through dir (os.File.ReadDir's way for a folder of an os.Root).
func listRoot(dir *os.Root) ([]fs.DirEntry, error) {
	d, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(-1)
}
