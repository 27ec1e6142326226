//go:build !linux

package workspace

import (
	"io/fs"
	"os"
)

// listRoot lists the folder dir is a handle of, unsorted, each entry
// stat'ed through dir (os.File.ReadDir's way for a folder of an os.Root).
// It keeps no folder open: DirHandles.AtParent has no descriptor to give
// here, and the callers open through the os.Root instead.
func listRoot(dir *os.Root) ([]fs.DirEntry, *os.File, error) {
	d, err := dir.Open(".")
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	return entries, nil, err
}
