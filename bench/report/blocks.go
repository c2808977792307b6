package main

import (
	"fmt"
	"sort"
	"strings"
)

// beginMarker and endMarker are the comment lines around a block: a part
// of a markdown file that this tool writes.
//
//	<!-- begin cpu-headline -->
//	...
//	<!-- end cpu-headline -->
func beginMarker(name string) string { return "<!-- begin " + name + " -->" }
func endMarker(name string) string   { return "<!-- end " + name + " -->" }

// fillBlocks replaces the text of each block of text that blocks names,
// and reports which it found. A block begun and not ended is an error.
func fillBlocks(text string, blocks map[string]string) (string, []string, error) {
	var found []string
	for name, body := range blocks {
		begin, end := beginMarker(name), endMarker(name)
		i := strings.Index(text, begin+"\n")
		if i < 0 {
			continue
		}
		start := i + len(begin) + 1
		j := strings.Index(text[start:], end)
		if j < 0 {
			return "", nil, fmt.Errorf("%s has no %s", begin, end)
		}
		text = text[:start] + "\n" + strings.TrimSpace(body) + "\n\n" + text[start+j:]
		found = append(found, name)
	}
	sort.Strings(found)
	return text, found, nil
}
