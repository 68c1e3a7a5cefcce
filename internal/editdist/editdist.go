// Package editdist measures how far apart two short names are, for "did you
// mean …?" suggestions (config keys, Envoy config fields).
package editdist

// Levenshtein is the edit distance (insertions, deletions, substitutions)
// between a and b, in bytes. Quadratic in time: meant for keys and field
// names, not for text.
func Levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
