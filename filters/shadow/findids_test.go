package shadow

import "strings"

// FindIDs is a test helper (production code reads references with
// ParseReference only; review finding 24).
// FindIDs returns the well-formed shadow ids that occur in text as whole
// tokens (not glued to a letter, digit or '_' on either side), each once,
// in order of first occurrence; nil when there is none. Use it to tell
// whether a request carries a shadow reference or to read the id argument
// of an expand call, raw or JSON-escaped.
func FindIDs(text string) []string {
	var ids []string
	var seen map[string]struct{} // used once ids outgrows a linear scan
	for i := 0; ; {
		j := strings.Index(text[i:], IDPrefix)
		if j < 0 {
			return ids
		}
		start := i + j
		end := start + IDLen
		i = start + len(IDPrefix)
		if end > len(text) {
			return ids
		}
		if start > 0 && isNameByte(text[start-1]) || end < len(text) && isNameByte(text[end]) {
			continue
		}
		cand := text[start:end]
		if !ValidID(cand) {
			continue
		}
		i = end
		if seen != nil {
			if _, dup := seen[cand]; dup {
				continue
			}
			seen[cand] = struct{}{}
		} else {
			dup := false
			for _, id := range ids {
				if id == cand {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			if len(ids) == 16 {
				seen = make(map[string]struct{}, 64)
				for _, id := range ids {
					seen[id] = struct{}{}
				}
				seen[cand] = struct{}{}
			}
		}
		ids = append(ids, cand)
	}
}
