package compare

// charRanges is charRangesWithin with a budget of its own.
func charRanges(a, b string) (left, right [][2]int) {
	budget := maxLCSCells
	return charRangesWithin(a, b, &budget)
}

// charRangesWithin returns the character ranges [start, end), counted in code
// points, in which a and b differ: the runes outside one longest common
// subsequence, with equal runs shorter than minEqualRun between two
// differing ranges folded into them so a highlight reads as words, not
// as scattered letters. The subsequence is computed only while *budget
// (rune pairs, shared by the caller's calls) lasts; beyond it a text pair
// is reduced to its common prefix and suffix, so the cost stays bounded.
//
// Hand-written rather than taken from a diff library: the texts are
// single screen rows, the result must be deterministic (the usual
// libraries bound their work by wall-clock time, which makes the output
// depend on machine load), and ranges, not edit scripts, are wanted.
func charRangesWithin(a, b string, budget *int) (left, right [][2]int) {
	if a > b { // one order for both, so swapping the sides swaps the ranges
		right, left = charRangesWithin(b, a, budget)
		return left, right
	}
	ra, rb := []rune(a), []rune(b)
	p := 0
	for p < len(ra) && p < len(rb) && ra[p] == rb[p] {
		p++
	}
	s := 0
	for s < len(ra)-p && s < len(rb)-p && ra[len(ra)-1-s] == rb[len(rb)-1-s] {
		s++
	}
	ma, mb := ra[p:len(ra)-s], rb[p:len(rb)-s]
	keepA, keepB := make([]bool, len(ma)), make([]bool, len(mb))
	if cells := len(ma) * len(mb); cells <= maxLCSCells && cells <= *budget {
		*budget -= cells
		lcs(ma, mb, keepA, keepB)
	}
	return ranges(keepA, p), ranges(keepB, p)
}

// maxLCSCells bounds the dynamic-programming table of one text pair.
const maxLCSCells = 1 << 18

// lcsBudget bounds the rune pairs one comparison spends on character
// ranges (a few milliseconds).
const lcsBudget = 1 << 22

// minEqualRun is the shortest equal run kept between two differences.
const minEqualRun = 3

// lcs marks in keepA and keepB the runes of one longest common
// subsequence of a and b.
func lcs(a, b []rune, keepA, keepB []bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return
	}
	t := make([]int32, (n+1)*(m+1)) // t[i*(m+1)+j]: LCS of a[i:], b[j:]
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				t[i*(m+1)+j] = t[(i+1)*(m+1)+j+1] + 1
			default:
				t[i*(m+1)+j] = max(t[(i+1)*(m+1)+j], t[i*(m+1)+j+1])
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			keepA[i], keepB[j] = true, true
			i++
			j++
		case t[(i+1)*(m+1)+j] >= t[i*(m+1)+j+1]:
			i++
		default:
			j++
		}
	}
}

// ranges turns the unkept runes of keep into ranges offset by base,
// folding short kept runs between two ranges.
func ranges(keep []bool, base int) [][2]int {
	out := [][2]int{}
	for i := 0; i < len(keep); {
		if keep[i] {
			i++
			continue
		}
		j := i
		for j < len(keep) && !keep[j] {
			j++
		}
		if n := len(out); n > 0 && base+i-out[n-1][1] < minEqualRun {
			out[n-1][1] = base + j
		} else {
			out = append(out, [2]int{base + i, base + j})
		}
		i = j
	}
	return out
}
