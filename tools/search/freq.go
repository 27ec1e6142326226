package search

// byteFreq estimates how often each byte occurs in source code, in parts
// per 100,000. The prefilter scans for a literal's rarest byte, so a
// rough table is enough; it was measured on Go's tree and a module cache
// (Go, C, JavaScript, Python, Markdown, shell) with test data left out.
// Digits and 'x' are damped, since hex tables inflate them there but not
// in most code. Bytes above 127 (the inside of UTF-8 sequences) count as
// rare but not absent.
func byteFreq(b byte) int {
	switch {
	case b >= 128:
		return 100
	case b == '\t':
		return 3473
	case b == '\n':
		return 2876
	case b < ' ' || b == 127:
		return 1
	}
	// From ' ' (32) to '~' (126). Only compiling a query looks it up.
	printable := [95]int{
		14121, 112, 1034, 22, 6, 71, 95, 64, 958, 956, 186, 93, 2408, 226, 1233, 1067, // ' ' to '/'
		1500, 1110, 963, 704, 701, 456, 676, 383, 546, 426, // '0' to '9'
		990, 79, 89, 750, 52, 4, 3, // ':' to '@'
		632, 284, 569, 407, 741, 368, 189, 190, 556, 40, 106, 365, 353, // 'A' to 'M'
		423, 492, 431, 32, 543, 752, 757, 230, 184, 116, 157, 112, 23, // 'N' to 'Z'
		213, 314, 213, 4, 726, 118, // '[' to '`'
		3172, 778, 1854, 1604, 5536, 1532, 984, 881, 2927, 113, 375, 1846, 1048, // 'a' to 'm'
		3328, 2773, 1362, 99, 3552, 2808, 4291, 1494, 543, 357, 500, 657, 93, // 'n' to 'z'
		598, 67, 596, 2, // '{' to '~'
	}
	return printable[b-' ']
}
